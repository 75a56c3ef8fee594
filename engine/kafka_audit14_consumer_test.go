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
