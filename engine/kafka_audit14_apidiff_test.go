package engine

import (
	"slices"
	"testing"
)

// Audit 14, the request-handling history: core/src/main/scala/kafka/server/KafkaApis.scala,
// MetadataCache.scala and the request schemas between tags 0.10.2.2, 0.11.0.2, 2.1.1 and 3.7.0,
// with the handlers they lead to (handleAlterPartitionRequest → KafkaController
// .tryProcessAlterPartition). Each test names the Kafka function and commit it follows.

// TestAudit14LeaderRecoveryOnlyFrom32: KIP-704 (52621613fd3, 3.2; IBP_3_2_IV0) marks a partition
// RECOVERING when its new leader was not in the ISR (3.7.0 Election.leaderForOffline:
// newRecoveringLeaderAndIsr under isLeaderRecoverySupported); the leader's first accepted
// AlterPartition carries RECOVERED (Partition.makeLeader marks the state RECOVERED locally,
// prepareIsrExpand sends it) and tryProcessAlterPartition writes it. 2.1.1's LeaderAndIsr and
// partition state have no such field. The engine marked it in every era and never cleared it on
// an AlterPartition (only at a clean election, which 3.7.0 keeps as it finds).
func TestAudit14LeaderRecoveryOnlyFrom32(t *testing.T) {
	for _, c := range []struct {
		era                  string
		afterUnclean, rejoin bool
	}{
		{"0.10.2", false, false},
		{"2.1", false, false},
		{"3.7", true, false},
	} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["unclean.leader.election.enable"] = "true"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runUntilTrue(t, e, 11000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
			apply(t, e, `{"do":"shutdown","broker":0}`)
			runUntilTrue(t, e, 20000, "broker 0 stopped", func() bool { return e.brokers[0].Dead() })
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 1000)
			if e.ctrl.Leader(p.pid) != 1 || uncleanElections(e) != 1 {
				t.Fatalf("leader %d after %d unclean elections, want 1 after 1", e.ctrl.Leader(p.pid), uncleanElections(e))
			}
			if got := e.Partition(p.pid).Recovering(); got != c.afterUnclean {
				t.Fatalf("recovering %v after the unclean election, want %v", got, c.afterUnclean)
			}
			apply(t, e, `{"do":"restart","broker":0}`)
			runUntilTrue(t, e, 20000, "broker 0 back in the ISR", func() bool { return slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) })
			if got := e.Partition(p.pid).Recovering(); got != c.rejoin {
				t.Fatalf("recovering %v after the ISR expansion, want %v", got, c.rejoin)
			}
		})
	}
}
