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

// consumeAndWant consumes t-0 once, runs 100 ms and wants that one consume's outcome
// (consumeOutcomes) to be want.
func consumeAndWant(t *testing.T, e *Engine, want string) {
	t.Helper()
	apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
	runFor(t, e, 100)
	if got := consumeOutcomes(e); !slices.Equal(got, []string{want}) {
		t.Fatalf("consume: %v, want [%s]", got, want)
	}
}

// TestAudit14ConsumerFetchCarriesLeaderEpoch: from 2.3 the consumer's Fetch carries the leader
// epoch of its metadata (Fetcher.prepareFetchRequests 2.3.0, AbstractFetch.prepareFetchRequests
// 3.7.0: position.currentLeader.epoch; 0.10.2.2 to 2.1.1 send none), and the broker checks it
// before leadership (Partition.getLocalLog → checkCurrentLeaderEpoch: UNKNOWN_LEADER_EPOCH when
// the request's epoch is newer than its own). The engine's consumer sent -1 in every era. t-0
// [1,2], controller 0; the link 0 -> 2 goes down and leader 1 is killed at 1000; at its session's
// expiry the controller elects 2 (leader epoch 1), whose LeaderAndIsr is held. A consume 1000 ms
// later goes to 2, still a follower in epoch 0: 3.7 answers UNKNOWN_LEADER_EPOCH, 2.1
// NOT_LEADER_FOR_PARTITION (ReplicaManager.getPartitionAndLeaderReplicaIfLocal), as 0.10.2 and
// 0.11.0 do (getLeaderReplicaIfLocal: the partition is known, its leader is not this broker).
func TestAudit14ConsumerFetchCarriesLeaderEpoch(t *testing.T) {
	for _, tc := range []struct{ era, want string }{
		{"0.10.2", "NOT_LEADER_FOR_PARTITION:[]"},
		{"0.11.0", "NOT_LEADER_FOR_PARTITION:[]"},
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
			consumeAndWant(t, e, tc.want)
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
			consumeAndWant(t, e, tc.want)
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

// TestAudit14ConsumerOffsetOutOfRangeAfterTruncation: the consumer reads up to the HW
// (FetchIsolation.HIGH_WATERMARK; 0.10.2.2 fetchOnlyCommitted), and a Fetch from past the
// leader's log end is refused OFFSET_OUT_OF_RANGE (Log.read / UnifiedLog.read:
// OffsetOutOfRangeException, 0.10.2.2 to 3.7.0). t-0 [1,2], unclean.leader.election.enable,
// replica.lag.time.max.ms 4000, zookeeper.session.timeout.ms 6000. One acks=all record at 100;
// the link 2 -> 1 goes down at 1000 and two acks=1 records follow at 2000; the 6000 check takes
// 2 out of the ISR (last caught up before 1000), so the HW reaches 3 and a consume at 7000 reads
// offsets 0-2. Leader 1 is killed at 7100; at 13100 its session expires and 2 is elected
// uncleanly (epoch 1) with one record: the records the consumer read at 1 and 2 are gone
// (consumed-record-changed). A consume at 14000 asks from offset 3, past the log end 1:
// OFFSET_OUT_OF_RANGE, nothing read (the contract's consumer keeps its position; Kafka's would
// reset it by auto.offset.reset). Three acks=1 records at 15000 take offsets 1-3, and a consume
// at 16000 reads offset 3.
func TestAudit14ConsumerOffsetOutOfRangeAfterTruncation(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["unclean.leader.election.enable"] = "true"
			cfg["replica.lag.time.max.ms"] = "4000"
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":1}`)
			runFor(t, e, 5000)
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 6900)
			if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 2 || ep != 1 {
				t.Fatalf("controller: leader %d epoch %d at 14000, want 2 in epoch 1", l, ep)
			}
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":3,"acks":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			want := []string{"ok:[0 1 2]", "OFFSET_OUT_OF_RANGE:[]", "ok:[3]"}
			if got := consumeOutcomes(e); !slices.Equal(got, want) {
				t.Fatalf("consumes: %v, want %v", got, want)
			}
			if got := e.ViolationNames(); !slices.Equal(got, []string{"consumed-record-changed"}) {
				t.Fatalf("violations %v, want [consumed-record-changed]", got)
			}
		})
	}
}

// TestAudit14ConsumerReadsToHighWatermarkOnly: a consumer's Fetch reads up to the HW, never the
// LEO (0.10.2.2 ReplicaManager.readFromLocalLog with fetchOnlyCommitted, 3.7.0
// FetchIsolation.HIGH_WATERMARK), at most `count` records, and with fetch.min.bytes above what
// lies below the HW it waits the whole fetch.max.wait.ms (DelayedFetch.tryComplete counts bytes
// to the HW). t-0 [1,2], fetch.min.bytes 300 (three 100-byte records), fetch.max.wait.ms 2000.
// One acks=all record at 100; the link 2 -> 1 goes down at 1000 and an acks=1 record follows at
// 1500 (LEO 2, HW 1: 2 stays in the ISR, replica.lag.time.max.ms being 10000 or 30000). A
// consume at 2000 finds 100 bytes below the HW, parks until 4001 and reads offset 0 only; one with
// count 1 at 5000 reads nothing more (offset 1 is above the HW), at its max wait too. The
// leader is killed at 7500 and 2 is elected cleanly (it is in the ISR) without offset 1: the
// consumer never read it, so nothing is reported. (The second consume is answered at 7002:
// parked 5001 to 7001, before the kill at 7500.)
func TestAudit14ConsumerReadsToHighWatermarkOnly(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["fetch.min.bytes"] = "300"
			cfg["fetch.max.wait.ms"] = "2000"
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 500)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
			runFor(t, e, 500)
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 2001)
			if at, _ := consumeResults(e); len(at) != 0 {
				t.Fatalf("consume answered at %v, want parked until 4001", at)
			}
			runFor(t, e, 999) // to 5000
			apply(t, e, `{"do":"consume","topic":"t","partition":0,"count":1}`)
			runFor(t, e, 2500)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 7000)
			at, _ := consumeResults(e)
			want := []string{"ok:[0]", "ok:[]"}
			if got := consumeOutcomes(e); !slices.Equal(got, want) || !slices.Equal(at, []int64{4002, 7002}) {
				t.Fatalf("consumes %v answered at %v, want %v at [4002 7002]", got, at, want)
			}
			if l := e.ctrl.Leader(p.pid); l != 2 {
				t.Fatalf("leader %d, want 2", l)
			}
			if got := e.ViolationNames(); len(got) != 0 {
				t.Fatalf("violations %v, want none", got)
			}
		})
	}
}
