package engine

import (
	"fmt"
	"testing"
)

// Audit 9 of the ZooKeeper-mode controller against each era's Kafka source (tags 0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// ctrlState is partition pid's leader, leader epoch and ISR as the controller holds them.
func ctrlState(e *Engine, pid int32) string {
	return fmt.Sprintf("leader %d epoch %d isr %v", e.ctrl.Leader(pid), e.ctrl.LeaderEpoch(pid), e.ctrl.ISR(pid))
}

// TestAudit9LogDirFailureLearnedFromLeaderAndIsrResponse: a log directory failure reaches the
// controller as a LogDirEventNotification, and KafkaController.onBrokerLogDirFailure (2.1.1,
// 3.7.0) does not know which replicas went offline: it sends the broker its replicas
// (OnlineReplica), and processLeaderAndIsrResponseReceived (2.1.1 LeaderAndIsrResponseReceived)
// takes the partitions answered KAFKA_STORAGE_ERROR offline (replicasOnOfflineDirs,
// onReplicasBecomeOffline). So the election comes one round trip later, not at once; and a new
// controller, whose context starts empty, learns it the same way from its failover's
// OnlineReplica batch: it may first elect the offline replica (PartitionStateMachine.startup runs
// before any answer), then takes it away when the answer comes: 4 ms after the failover, as the
// OnlineReplica LeaderAndIsr waits in the queue behind onControllerFailover's UpdateMetadata.
func TestAudit9LogDirFailureLearnedFromLeaderAndIsrResponse(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era+"/round trip", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, eraCfg(era))
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"failDisk","broker":1}`)
			runFor(t, e, 1)
			if got := ctrlState(e, pid); got != "leader 1 epoch 0 isr [0 1 2]" {
				t.Fatalf("1 ms after the failure: %s, want the old state (the LeaderAndIsr probe is on its way)", got)
			}
			runFor(t, e, 1)
			if got := ctrlState(e, pid); got != "leader 2 epoch 1 isr [0 2]" {
				t.Fatalf("2 ms after the failure: %s, want leader 2 epoch 1 isr [0 2]", got)
			}
		})
	}
	t.Run("3.7/new controller", func(t *testing.T) {
		e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, nil)
		pid := e.partitionOf(ktTopic, 0).pid
		runFor(t, e, 1000)
		apply(t, e, `{"do":"kill","broker":2}`)
		runFor(t, e, 19000) // 2's session expired at 19000: ISR [1]
		apply(t, e, `{"do":"failDisk","broker":1}`)
		runFor(t, e, 2)
		if got := ctrlState(e, pid); got != "leader -1 epoch 2 isr [1]" {
			t.Fatalf("after the disk failure: %s, want leader -1 epoch 2 isr [1]", got)
		}
		apply(t, e, `{"do":"kill","broker":0}`)
		runFor(t, e, 18000) // 0's session expires: broker 1 becomes controller, its context empty
		if got := ctrlState(e, pid); got != "leader 1 epoch 3 isr [1]" {
			t.Fatalf("at the failover: %s, want leader 1 epoch 3 isr [1] (elected before any answer)", got)
		}
		runFor(t, e, 3)
		if got := ctrlState(e, pid); got != "leader 1 epoch 3 isr [1]" {
			t.Fatalf("3 ms after the failover: %s, want leader 1 epoch 3 isr [1] (the LeaderAndIsr waited for the UpdateMetadata's answer)", got)
		}
		runFor(t, e, 1)
		if got := ctrlState(e, pid); got != "leader -1 epoch 4 isr [1]" {
			t.Fatalf("after the failover's answers: %s, want leader -1 epoch 4 isr [1]", got)
		}
	})
}

// TestAudit9ControllerBrokerShutdownOverTheNetwork: KafkaServer.controlledShutdown sends its
// ControlledShutdown to the controller's node over the network also when its own broker is the
// controller (3.7.0 NetworkClientUtils.sendAndReceive; 0.10.2.2 networkClient.blockingReady and
// blockingSendAndReceive); nothing takes a shortcut in the process. So the controller's own
// broker's leaderships move one latency (1 ms) after its shutdown began, not at once, and it
// stops when the answer is back, 2 ms after.
func TestAudit9ControllerBrokerShutdownOverTheNetwork(t *testing.T) {
	for _, era := range []string{"0.10.2", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg(era))
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":0}`)
			if got := ctrlState(e, pid); got != "leader 0 epoch 0 isr [0 1 2]" || e.brokers[0].Dead() {
				t.Fatalf("at the shutdown: %s, broker 0 dead %v; want the old state, running", got, e.brokers[0].Dead())
			}
			runFor(t, e, 1)
			if got := ctrlState(e, pid); got != "leader 1 epoch 1 isr [1 2]" || e.brokers[0].Dead() {
				t.Fatalf("1 ms later: %s, broker 0 dead %v; want leader 1 epoch 1 isr [1 2], running", got, e.brokers[0].Dead())
			}
			runFor(t, e, 1)
			if !e.brokers[0].Dead() || e.ctrl.Broker() != 1 {
				t.Fatalf("2 ms later: broker 0 dead %v, controller %d; want stopped, controller 1", e.brokers[0].Dead(), e.ctrl.Broker())
			}
		})
	}
}

// TestAudit9BrokerChangeOrder: KafkaController.processBrokerChange (3.7.0) handles the new
// brokers first, then the bounced ones (onBrokerFailure, then onBrokerStartup), then the dead ones
// (0.10.2.2's BrokerChangeListener and 2.1.1's BrokerChange: new, then dead). One change carries
// several when the controller was cut from ZooKeeper and catches up. Here broker 1, t-0's leader,
// died and broker 2, its other ISR member, bounced while controller 0 was isolated: the bounce
// runs first and takes 2 out of the ISR (OfflineReplica), so the dead leader's election finds no
// live ISR member and t-0 is left without a leader, ISR [1], two epochs up. (Handling both as
// deaths at once, then 2's startup, elected 2.)
func TestAudit9BrokerChangeOrder(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, map[string]string{"auto.leader.rebalance.enable": "false"})
	pid := e.partitionOf(ktTopic, 0).pid
	runFor(t, e, 1000)
	apply(t, e, `{"do":"kill","broker":1}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"isolate","broker":0}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"kill","broker":2}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"restart","broker":2}`) // a bounce: a new broker epoch
	runFor(t, e, 15500)                        // 1's session expired at 19000, unseen
	if got := ctrlState(e, pid); got != "leader 1 epoch 0 isr [1 2]" {
		t.Fatalf("before the heal: %s, want the start's state", got)
	}
	apply(t, e, `{"do":"heal","broker":0}`)
	if got := ctrlState(e, pid); got != "leader -1 epoch 2 isr [1]" {
		t.Fatalf("after the catch-up: %s, want leader -1 epoch 2 isr [1]", got)
	}
}

// TestAudit9MissedReRegistrationBefore22: before broker epochs the controller's broker change
// compares broker ids only (0.10.2.2 BrokerChangeListener.doHandleChildChange, 2.1.1
// BrokerChange.process: newBrokerIds = curBrokerIds -- liveOrShuttingDownBrokerIds, deadBrokerIds
// the other way). Broker 2 crashed, its session expired and it registered again while controller
// 0 was cut from ZooKeeper: when the controller catches up, broker 2 is in both sets, so nothing
// happens (KAFKA-7235, fixed in 2.2 by broker epochs): no OfflineReplica, no leader epoch bump, and
// broker 2 stays in the ISR until the leader's own shrink.
func TestAudit9MissedReRegistrationBefore22(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, map[string]string{
		"auto.leader.rebalance.enable": "false", "inter.broker.protocol.version": `"0.10.2"`})
	pid := e.partitionOf(ktTopic, 0).pid
	runFor(t, e, 500)
	apply(t, e, `{"do":"kill","broker":2}`)
	runFor(t, e, 500)
	apply(t, e, `{"do":"isolate","broker":0}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"restart","broker":2}`) // registers when its old session expires, at 6500
	runFor(t, e, 5800)
	apply(t, e, `{"do":"heal","broker":0}`) // at 6900, before 0's own session expires
	if got := ctrlState(e, pid); got != "leader 1 epoch 0 isr [0 1 2]" {
		t.Fatalf("after the catch-up: %s, want leader 1 epoch 0 isr [0 1 2] (nothing seen)", got)
	}
}

// TestAudit9SessionsExpiringTogether: two brokers killed at the same instant have their ZooKeeper
// sessions expire at the same instant; the controller's broker change reads /brokers/ids after
// its watch fired and finds both gone, so onBrokerFailure gets both (KafkaController.onBrokerFailure
// with deadBrokers of two; 0.10.2.2 BrokerChangeListener, 3.7.0 processBrokerChange): the election
// leaves both out. Handled one at a time, the first election picked the other dead broker, still
// registered, and a second election followed at once: leader epoch 2 instead of 1.
func TestAudit9SessionsExpiringTogether(t *testing.T) {
	for _, tc := range []struct {
		era string
		at  int64
	}{{"0.10.2", 6000}, {"3.7", 18000}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, cfg)
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":1}`)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, tc.at)
			if got := ctrlState(e, pid); got != "leader 0 epoch 1 isr [0]" {
				t.Fatalf("at the expiry: %s, want leader 0 epoch 1 isr [0]", got)
			}
		})
	}
}
