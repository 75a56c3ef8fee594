package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Ports of kafka.controller.ControllerIntegrationTest (3.7.0; ZooKeeper mode), run in every era:
// the partition state after controlled shutdowns, preferred elections and restarts. makeServers
// sets leader.imbalance.check.interval.seconds to 1 and auto.leader.rebalance.enable as the test
// asks (false unless stated). Broker 0 is the controller throughout, as Kafka's first controller.

var controllerIntegrationEras = []string{"0.10.2", "0.11.0", "2.1", "3.7"}

func controllerIntegrationEngine(t *testing.T, era string, n int, assignment []int32, autoRebalance bool) (*Engine, *partition) {
	t.Helper()
	e := newKafkaEngine(t, n, [][]int32{assignment}, map[string]string{
		"inter.broker.protocol.version":           fmt.Sprintf("%q", era),
		"auto.leader.rebalance.enable":            fmt.Sprint(autoRebalance),
		"leader.imbalance.check.interval.seconds": "1"})
	runFor(t, e, 100)
	return e, e.partitionOf(ktTopic, 0)
}

// waitForPartitionState is the test's waitForPartitionState: the controller's leader and leader
// epoch (the controller epoch stays the first, 1).
func waitForPartitionState(t *testing.T, e *Engine, p *partition, leader, epoch int32, what string) {
	t.Helper()
	runUntilTrue(t, e, 30000, what, func() bool {
		return e.ctrl.Leader(p.pid) == leader && e.ctrl.LeaderEpoch(p.pid) == epoch
	})
	if e.ctrl.Epoch() != 1 {
		t.Fatalf("%s: controller epoch %d, want 1", what, e.ctrl.Epoch())
	}
}

// preferredReplicaLeaderElection is the test's helper: the preferred leader (broker 1) shuts down
// and the leader moves to broker 0 at epoch+1; it starts again and rejoins the ISR; a preferred
// election gives it back its leadership at epoch+2.
func preferredReplicaLeaderElection(t *testing.T, e *Engine, p *partition, epoch int32) {
	t.Helper()
	apply(t, e, `{"do":"shutdown","broker":1}`)
	waitForPartitionState(t, e, p, 0, epoch+1, "failed to get expected partition state upon broker shutdown")
	runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
	apply(t, e, `{"do":"restart","broker":1}`)
	runUntilTrue(t, e, 60000, "restarted broker failed to join in-sync replicas", func() bool {
		return slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1})
	})
	apply(t, e, `{"do":"elect","topic":"t","partition":0}`)
	waitForPartitionState(t, e, p, 1, epoch+2, "failed to get expected partition state upon broker startup")
}

// TestKafkaControllerPreferredReplicaLeaderElection: testPreferredReplicaLeaderElection and
// testBackToBackPreferredReplicaLeaderElections (2 brokers, replicas [1 0]).
func TestKafkaControllerPreferredReplicaLeaderElection(t *testing.T) {
	for _, era := range controllerIntegrationEras {
		t.Run(era, func(t *testing.T) {
			e, p := controllerIntegrationEngine(t, era, 2, []int32{1, 0}, false)
			preferredReplicaLeaderElection(t, e, p, 0)
			preferredReplicaLeaderElection(t, e, p, 2)
		})
	}
}

// TestKafkaControllerPreferredElectionWithOfflinePreferredReplica:
// testPreferredReplicaLeaderElectionWithOfflinePreferredReplica: the preferred replica is down,
// the election gives up, and the state stays broker 0 at epoch 1.
func TestKafkaControllerPreferredElectionWithOfflinePreferredReplica(t *testing.T) {
	for _, era := range controllerIntegrationEras {
		t.Run(era, func(t *testing.T) {
			e, p := controllerIntegrationEngine(t, era, 2, []int32{1, 0}, false)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
			apply(t, e, `{"do":"elect","topic":"t","partition":0}`)
			runFor(t, e, 1000)
			waitForPartitionState(t, e, p, 0, 1, "failed to get expected partition state upon broker shutdown")
		})
	}
}

// TestKafkaControllerAutoPreferredReplicaLeaderElection: testAutoPreferredReplicaLeaderElection:
// with the auto rebalance on (every second), broker 1 gets its leadership back on its own after a
// restart, at epoch 2.
func TestKafkaControllerAutoPreferredReplicaLeaderElection(t *testing.T) {
	for _, era := range controllerIntegrationEras {
		t.Run(era, func(t *testing.T) {
			e, p := controllerIntegrationEngine(t, era, 2, []int32{1, 0}, true)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			waitForPartitionState(t, e, p, 0, 1, "failed to get expected partition state upon broker shutdown")
			runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
			apply(t, e, `{"do":"restart","broker":1}`)
			waitForPartitionState(t, e, p, 1, 2, "failed to get expected partition state upon broker startup")
		})
	}
}

// TestKafkaControllerControlledShutdown: testControlledShutdown (3 brokers, replicas [0 1 2]):
// broker 2's controlled shutdown leaves leader 0 and ISR [0 1]; broker 1's leaves leader 0; broker
// 0's finds no other replica to lead, so the partition stays with it (one partition remaining).
// The test calls the controller directly; here the brokers stop after each request.
func TestKafkaControllerControlledShutdown(t *testing.T) {
	for _, era := range controllerIntegrationEras {
		t.Run(era, func(t *testing.T) {
			e, p := controllerIntegrationEngine(t, era, 3, []int32{0, 1, 2}, false)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runUntilTrue(t, e, 30000, "broker 2 stopped", func() bool { return e.brokers[2].Dead() })
			if e.ctrl.Leader(p.pid) != 0 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) {
				t.Fatalf("after broker 2: leader %d ISR %v, want 0 and [0 1]", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
			}
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
			if e.ctrl.Leader(p.pid) != 0 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0}) {
				t.Fatalf("after broker 1: leader %d ISR %v, want 0 and [0]", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
			}
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":0}`)
			runFor(t, e, 100)
			// The first attempt leaves t-0 with broker 0: nothing else to lead it.
			if e.ctrl.Leader(p.pid) != 0 {
				t.Fatalf("after broker 0's first attempt: leader %d, want 0", e.ctrl.Leader(p.pid))
			}
		})
	}
}
