package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Ports of EpochDrivenReplicationProtocolAcceptanceTest (ZooKeeper mode; read at 3.7.0, removed
// later by KAFKA-17612) beyond shouldFollowLeaderEpochBasicWorkflow (T25, kafka_cluster_test.go).
// Brokers 0 and 1 stand for 100 and 101; "shutdown" and "startup" are the shutdown and restart
// steps; a producer's send().get() or flush() is a produce step run until answered.

// epochAcceptanceEngine builds brokers 0 and 1 with t-0 on [0 1] in era, plus cfg.
func epochAcceptanceEngine(t *testing.T, era string, cfg map[string]string) (*Engine, *partition) {
	t.Helper()
	all := map[string]string{"inter.broker.protocol.version": fmt.Sprintf("%q", era)}
	for k, v := range cfg {
		all[k] = v
	}
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, all)
	runFor(t, e, 100)
	return e, e.partitionOf(ktTopic, 0)
}

// sendAndWait produces one record with acks and runs until the producer has its answer, which
// must be an acknowledgement.
func sendAndWait(t *testing.T, e *Engine, acks string) {
	t.Helper()
	apply(t, e, fmt.Sprintf(`{"do":"produce","topic":"t","partition":0,"count":1,"acks":%s}`, acks))
	op := produceOp(e, e.clients.ProduceCount())
	runUntilTrue(t, e, 200000, "the produce answered", func() bool { return op.Done })
	if op.Result != ResultAcked {
		t.Fatalf("produce: %s", op.Result)
	}
}

func stopBroker(t *testing.T, e *Engine, b int32) {
	t.Helper()
	apply(t, e, fmt.Sprintf(`{"do":"shutdown","broker":%d}`, b))
	runUntilTrue(t, e, 60000, fmt.Sprintf("broker %d stopped", b), func() bool { return e.brokers[b].Dead() })
}

// TestKafkaLogsShouldNotDivergeOnUncleanLeaderElections ports
// logsShouldNotDivergeOnUncleanLeaderElections (added with KIP-279, KAFKA-6361, in 2.0): unclean
// election on, min.insync.replicas 1, acks=1; the two brokers take turns being the only one up,
// each writing while the other is down, then both run. From 2.1 the logs end equal. Before
// KIP-279 they diverge for ever, as KAFKA-6361 reports: in 0.11.0 broker 1, back with
// [0/e0 1/e1 2/e3], asks for the end of epoch 3, the leader's answer is the start of its next
// epoch, 4 (LeaderEpochFileCache.endOffsetFor, 0.11.0.2), nothing is cut, and broker 1 appends
// the leader's records from offset 3 behind its own; 0.10.2 truncates to its high watermark,
// which is its log end.
func TestKafkaLogsShouldNotDivergeOnUncleanLeaderElections(t *testing.T) {
	for _, tc := range []struct{ era, log0, log1 string }{
		{"0.10.2", "0/e0 1-3/e2 4-5/e4", "0/e0 1/e1 2/e3 3/e2 4-5/e4"},
		{"0.11.0", "0/e0 1-3/e2 4-5/e4", "0/e0 1/e1 2/e3 3/e2 4-5/e4"},
		// 2.1: one leader-epoch bump per election.
		{"2.1", "0/e0 1-3/e2 4-5/e4", "0/e0 1-3/e2 4-5/e4"},
		// 3.7: a new controller first takes the dead leader offline (KAFKA-3143), a bump of its own.
		{"3.7", "0/e0 1-3/e3 4-5/e7", "0/e0 1-3/e3 4-5/e7"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			e, p := epochAcceptanceEngine(t, tc.era, map[string]string{
				"unclean.leader.election.enable": "true", "min.insync.replicas": "1"})
			r0, r1 := e.replicaOn(p.pid, 0), e.replicaOn(p.pid, 1)
			start := func(b int32) {
				t.Helper()
				apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, b))
				runUntilTrue(t, e, 60000, fmt.Sprintf("broker %d up with a leader elected", b), func() bool {
					return !e.brokers[b].Dead() && e.ctrl.Leader(p.pid) >= 0
				})
			}
			sendAndWait(t, e, "1")
			runUntilTrue(t, e, 10000, "the logs match", func() bool { return logString(r0.Log()) == logString(r1.Log()) })
			stopBroker(t, e, 0)
			sendAndWait(t, e, "1")
			stopBroker(t, e, 1)
			start(0)
			for range 3 {
				sendAndWait(t, e, "1")
			}
			stopBroker(t, e, 0)
			start(1)
			sendAndWait(t, e, "1")
			stopBroker(t, e, 1)
			start(0)
			for range 2 {
				sendAndWait(t, e, "1")
			}
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 30000)
			if got0, got1 := logString(r0.Log()), logString(r1.Log()); got0 != tc.log0 || got1 != tc.log1 {
				t.Fatalf("logs [%s] and [%s], want [%s] and [%s]", got0, got1, tc.log0, tc.log1)
			}
			diverged := slices.Contains(e.ViolationNames(), "committed-divergence")
			if diverged != (tc.log0 != tc.log1) {
				t.Errorf("violations %v; committed-divergence expected: %v", e.ViolationNames(), tc.log0 != tc.log1)
			}
		})
	}
}

// TestKafkaShouldSurviveFastLeaderChange ports shouldSurviveFastLeaderChange: five rounds of a
// write (acks=all), a follower bounce and a leader bounce, each bounce waiting for the ISR to be
// whole again; after each round both logs end at the number of records written, in every era.
func TestKafkaShouldSurviveFastLeaderChange(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e, p := epochAcceptanceEngine(t, era, nil)
			bounce := func(b int32) {
				t.Helper()
				stopBroker(t, e, b)
				apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, b))
				runUntilTrue(t, e, 60000, "the ISR whole again", func() bool { return slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) })
			}
			sendAndWait(t, e, `"all"`)
			written := int64(1)
			for round := range 5 {
				leader := e.ctrl.Leader(p.pid)
				sendAndWait(t, e, `"all"`)
				written++
				bounce(1 - leader)
				bounce(leader)
				for b := int32(0); b < 2; b++ {
					if got := e.replicaOn(p.pid, b).Log().LogEndOffset(); got != written {
						t.Fatalf("round %d: broker %d's log ends at %d, want %d", round, b, got, written)
					}
				}
			}
			if v := e.ViolationNames(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}
