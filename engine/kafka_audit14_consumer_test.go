package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit 14, the consumer (the `consume` step: one sessionless Fetch to the leader), against each
// era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function
// it follows.

// consumeOutcomes lists each consume step's result and the offsets it read, as "result:[o ...]".
func consumeOutcomes(e *Engine) []string {
	var out []string
	for _, op := range e.clients.ConsumeOps() {
		offs := make([]int64, len(op.Records))
		for i, r := range op.Records {
			offs[i] = r.Offset
		}
		out = append(out, fmt.Sprintf("%s:%v", op.Result, offs))
	}
	return out
}

// TestAudit14ConsumerFetchCarriesLeaderEpoch: from 2.3 the consumer's Fetch carries the leader
// epoch of its metadata (Fetcher.prepareFetchRequests 2.3.0, AbstractFetch.prepareFetchRequests
// 3.7.0: position.currentLeader.epoch; 0.10.2.2 to 2.1.1 send none), and the broker checks it
// before leadership (Partition.getLocalLog → checkCurrentLeaderEpoch: UNKNOWN_LEADER_EPOCH when
// the request's epoch is newer than its own). The engine's consumer sent -1 in every era. t-0
// [1,2], controller 0; the link 0 -> 2 goes down and leader 1 is killed at 1000; at its session's
// expiry the controller elects 2 (leader epoch 1), whose LeaderAndIsr is held. A consume 1000 ms
// later goes to 2, still a follower in epoch 0: 3.7 answers UNKNOWN_LEADER_EPOCH, 2.1
// NOT_LEADER_FOR_PARTITION (ReplicaManager.getPartitionAndLeaderReplicaIfLocal).
func TestAudit14ConsumerFetchCarriesLeaderEpoch(t *testing.T) {
	for _, tc := range []struct{ era, want string }{
		{"2.1", "NOT_LEADER_FOR_PARTITION:[]"},
		{"3.7", "UNKNOWN_LEADER_EPOCH:[]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":2,"down":true}`)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, e.Config().ZookeeperSessionTimeoutMs+1000)
			if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 2 || ep != 1 {
				t.Fatalf("controller: leader %d epoch %d, want 2 in epoch 1", l, ep)
			}
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			if got := consumeOutcomes(e); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("consume: %v, want [%s]", got, tc.want)
			}
		})
	}
}

// TestAudit14ConsumerSkipsZombieLeaderOfOlderEpoch: with the epoch in its Fetch, a 3.7 consumer
// does not read from a broker that the controller made leader again but that still leads an
// older epoch in its own eyes (checkCurrentLeaderEpoch: UNKNOWN_LEADER_EPOCH), where the engine
// read its log up to its HW. t-0 [1,2] with one record; the link 0 -> 1 goes down at 1000; the
// operator elects 2 (epoch 1) and then 1 again (epoch 2: it is still in the ISR), and neither
// LeaderAndIsr reaches 1, which leads epoch 0 in its own eyes. A consume then goes to 1.
// 2.1's consumer sends no epoch, so 1 answers as the leader it thinks it is: the record.
func TestAudit14ConsumerSkipsZombieLeaderOfOlderEpoch(t *testing.T) {
	for _, tc := range []struct{ era, want string }{
		{"2.1", "ok:[0]"},
		{"3.7", "UNKNOWN_LEADER_EPOCH:[]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":0,"to":1,"down":true}`)
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":2}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":1}`)
			runFor(t, e, 100)
			if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 1 || ep < 2 {
				t.Fatalf("controller: leader %d epoch %d, want 1 in epoch 2 or later", l, ep)
			}
			if own := e.brokers[1].Replica(p.pid).LeaderEpoch(); own != 0 {
				t.Fatalf("broker 1 is in leader epoch %d in its own eyes, want 0 (its LeaderAndIsrs are held)", own)
			}
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			if got := consumeOutcomes(e); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("consume: %v, want [%s]", got, tc.want)
			}
		})
	}
}

// TestAudit14ParkedConsumerFetchFencedAtMaxWait: a consumer's Fetch parked in the leader's
// purgatory (nothing below the HW past its offset) when a LeaderAndIsr bumps the leader epoch of
// the partition it still leads. Partition.makeLeader completes delayed requests only if the HW
// moved (3.7.0 l.800-802), so the Fetch stays parked until fetch.max.wait.ms; its re-read
// (DelayedFetch.onComplete → ReplicaManager.readFromLog → Partition.fetchRecords) then checks
// the epoch the 3.7 consumer sent, 0, against the leader's 1: FENCED_LEADER_EPOCH
// (checkCurrentLeaderEpoch). 2.1's consumer sends none: 0 records. t-0 [1,2], controller 0; the
// consume at 100 parks on leader 1 from 101 to 601; broker 2's controlled shutdown at 200 takes
// it out of the ISR with a leader-epoch bump (the controller's OfflineReplica transition,
// removeReplicasFromIsr), whose LeaderAndIsr reaches leader 1 at 202. The answer leaves at 601
// and arrives at 602 either way.
func TestAudit14ParkedConsumerFetchFencedAtMaxWait(t *testing.T) {
	for _, tc := range []struct{ era, want string }{
		{"2.1", "ok:[]"},
		{"3.7", "FENCED_LEADER_EPOCH:[]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runFor(t, e, 100)
			if own := e.brokers[1].Replica(p.pid).LeaderEpoch(); own != 1 {
				t.Fatalf("leader 1 in epoch %d at 300, want 1", own)
			}
			if at, _ := consumeResults(e); len(at) != 0 {
				t.Fatalf("consume answered at %v, want still parked at 300", at)
			}
			runFor(t, e, 400)
			at, _ := consumeResults(e)
			if got := consumeOutcomes(e); len(at) != 1 || at[0] != 602 || !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("consume answered at %v: %v, want at 602: [%s]", at, got, tc.want)
			}
		})
	}
}
