package engine

import (
	"fmt"
	"testing"
)

// Audit 14, controller and leader-side rules that changed between the eras (the git history of
// core/src/main/scala/kafka/controller, cluster/Partition.scala and server/KafkaServer.scala
// between tags 0.10.2.2, 0.11.0.2, 2.1.1 and 3.7.0). Each test names the Kafka function and
// commit it follows; the grader files h01 (testdata/grader) play the same rules through the CLI.

// TestAudit14RebalanceOneLeaderAndIsrPerPartitionBefore21: before 2.1 the leader-imbalance check
// elects a broker's partitions one at a time (0.10.2.2 KafkaController
// .checkAndTriggerPartitionRebalance, 0.11.0.2 checkAndTriggerAutoLeaderRebalance:
// `topicsNotInPreferredReplica.keys.foreach { tp => onPreferredReplicaElection(Set(tp)) }`), each
// handleStateChanges its own LeaderAndIsr, which ControllerChannelManager's RequestSendThread
// sends only after the answer to the one before. KAFKA-7299 (2.1.0, e7b9e047306; 2.1.1 and 3.7.0
// checkAndTriggerAutoLeaderRebalance) elects them in one onPreferredReplicaElection: one
// LeaderAndIsr per broker. The engine batched in every era. The order before 2.1 is the keys' of a
// Scala 2.11 mutable.HashMap of TopicAndPartition: t-0 (bucket 9), then t-2 (bucket 8).
func TestAudit14RebalanceOneLeaderAndIsrPerPartitionBefore21(t *testing.T) {
	for _, c := range []struct {
		era  string
		want string
	}{
		{"0.10.2", "[[t-0:1/2] [t-2:1/2]]"},
		{"0.11.0", "[[t-0:1/2] [t-2:1/2]]"},
		{"2.1", "[[t-0:1/2 t-2:1/2]]"},
		{"3.7", "[[t-0:1/2 t-2:1/2]]"},
	} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}, {2, 1}, {1, 2}}, eraCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 2000)
			apply(t, e, `{"do":"link","from":0,"to":1,"latencyMs":1000}`)
			runFor(t, e, 900) // t = 4900, before the first imbalance check (5000)
			for _, p := range []int32{0, 2} {
				if l, ep := e.ctrl.Leader(e.partitionOf(ktTopic, p).pid), e.ctrl.LeaderEpoch(e.partitionOf(ktTopic, p).pid); l != 2 || ep != 1 {
					t.Fatalf("t-%d leader %d epoch %d before the check, want 2, 1", p, l, ep)
				}
			}
			e.Drain()
			runFor(t, e, 2500) // t = 7400: the second request, if any, reached broker 1 at 7001
			if got := fmt.Sprint(leaderAndIsrRequests(e.Drain(), 1)); got != c.want {
				t.Fatalf("LeaderAndIsr requests to broker 1 after the imbalance check: %s, want %s", got, c.want)
			}
		})
	}
}

// TestAudit14ControlledShutdownOnePartitionAtATimeBefore11: before 1.1 a controlled shutdown
// walks the broker's partitions one at a time (0.10.2.2 KafkaController.shutdownBroker, 0.11.0.2
// doControlledShutdown: `allPartitionsAndReplicationFactorOnBroker.foreach`, each led partition
// its own partitionStateMachine.handleStateChanges(Set(topicAndPartition), OnlinePartition,
// controlledShutdownPartitionLeaderSelector), each followed one its own StopReplica and
// OfflineReplica batch), so a new leader gets one LeaderAndIsr per partition, each after the
// answer to the one before. KAFKA-5642's rewrite (1.1.0, b71ee043f89; 2.1.1 and 3.7.0
// doControlledShutdown) elects every led partition in one handleStateChanges: one LeaderAndIsr.
// The engine batched in every era. Order before 1.1: partitionsOnBroker's (the assignment's
// mutable.HashMap of TopicAndPartition): t-0 (bucket 9), then t-2 (bucket 8). Then broker 1
// stops, and onBrokerFailure's OfflineReplica sends both partitions again, as they stand (broker 1
// is in neither ISR: doRemoveReplicasFromIsr's leaderAndIsrsWithoutReplica; audit 15). Every
// batch's UpdateMetadata (sendRequestsToBrokers) takes its own round trip on broker 2's queue.
func TestAudit14ControlledShutdownOnePartitionAtATimeBefore11(t *testing.T) {
	for _, c := range []struct {
		era  string
		want string
	}{
		{"0.10.2", "[[t-0:2/1] [t-2:2/1] [t-0:2/1 t-2:2/1]]"},
		{"0.11.0", "[[t-0:2/1] [t-2:2/1] [t-0:2/1 t-2:2/1]]"},
		{"2.1", "[[t-0:2/1 t-2:2/1] [t-0:2/1 t-2:2/1]]"},
		{"3.7", "[[t-0:2/1 t-2:2/1] [t-0:2/1 t-2:2/1]]"},
	} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}, {0, 2}, {1, 2}}, eraCfg(c.era))
			apply(t, e, `{"do":"link","from":0,"to":2,"latencyMs":1000}`)
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			// Each LeaderAndIsr waits behind the UpdateMetadata of the batch before it (1000 ms
			// each way): before 1.1 the third reaches broker 2 at 6005.
			runFor(t, e, 5500)
			if got := fmt.Sprint(leaderAndIsrRequests(e.Drain(), 2)); got != c.want {
				t.Fatalf("LeaderAndIsr requests to broker 2 after broker 1's controlled shutdown: %s, want %s", got, c.want)
			}
			for _, p := range []int32{0, 2} {
				if l := e.ctrl.Leader(e.partitionOf(ktTopic, p).pid); l != 2 {
					t.Fatalf("t-%d leader %d after the shutdown, want 2", p, l)
				}
			}
		})
	}
}

// TestAudit14ControlledShutdownSerialOrder pins the order before 1.1 for a broker that follows
// t-0 and leads t-2: the partitions go in the order of partitionsOnBroker (the assignment's
// mutable.HashMap of TopicAndPartition: t-0 in bucket 9, t-2 in bucket 8, walked from the last
// bucket), so t-0's OfflineReplica shrink comes before t-2's election; from 1.1 the elections
// first, then the shrinks. (The election's new ISR is an isr-change of its own.)
func TestAudit14ControlledShutdownSerialOrder(t *testing.T) {
	for _, c := range []struct{ era, want string }{
		{"0.10.2", "[isr-change t-0 leader-change t-2 isr-change t-2]"},
		{"0.11.0", "[isr-change t-0 leader-change t-2 isr-change t-2]"},
		{"2.1", "[leader-change t-2 isr-change t-2 isr-change t-0]"},
	} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{2, 1}, {0, 2}, {1, 2}}, eraCfg(c.era))
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			var got []string
			for _, ev := range e.Drain() {
				if (ev.Type == EvLeaderChange || ev.Type == EvISRChange) && !ev.Broker.Set {
					got = append(got, fmt.Sprintf("%s t-%d", ev.Type, ev.Partition.V))
				}
			}
			if fmt.Sprint(got) != c.want {
				t.Fatalf("the controller's changes in order: %v, want %s", got, c.want)
			}
		})
	}
}

// TestAudit14ControlledShutdownWaitsForZooKeeperBefore30: before 3.0 each controlled-shutdown
// attempt first reads the controller from ZooKeeper (KafkaServer.controlledShutdown:
// zkUtils.getController in 0.10.2.2 and 0.11.0.2, ZkClient.retryUntilConnected without an
// operation timeout; zkClient.getControllerId in 2.1.1, KafkaZkClient.retryRequestUntilConnected
// → ZooKeeperClient.waitUntilConnected(Long.MaxValue)), so a broker cut off from ZooKeeper sends
// nothing until the cut heals, and then its ControlledShutdown goes at once. KAFKA-9189 (3.0.0,
// ca166ea61b6) takes the controller from the metadata cache: 3.7.0 sends it over the cut link,
// where it waits for TCP's retransmission (2000 + 200 + 400 + 800 + 1600 = 5000). The engine sent
// it at once in every era.
func TestAudit14ControlledShutdownWaitsForZooKeeperBefore30(t *testing.T) {
	for _, c := range []struct {
		era    string
		leader int32 // at 4500
		sent   int   // ControlledShutdown requests sent while cut off
	}{{"0.10.2", 2, 0}, {"0.11.0", 2, 0}, {"2.1", 2, 0}, {"3.7", 1, 1}} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 2000)
			if got, want := len(eventsOf(e.Drain(), MsgControlledShutdown, nil)), c.sent; got != want {
				t.Fatalf("%d ControlledShutdown requests sent while cut off from ZooKeeper, want %d", got, want)
			}
			apply(t, e, `{"do":"heal","broker":1}`)
			runFor(t, e, 500)
			if l := e.ctrl.Leader(0); l != c.leader {
				t.Fatalf("leader %d 500 ms after the heal, want %d", l, c.leader)
			}
		})
	}
}

// TestAudit14RebalanceBrokerOrderFollowsScalaGroupBy: the leader-imbalance check walks the
// preferred brokers in the order of preferredReplicasForTopicsByBrokers, a Scala groupBy keyed by
// the assignment's head (0.10.2.2 checkAndTriggerPartitionRebalance, 0.11.0.2 and 2.1.1
// checkAndTriggerAutoLeaderRebalance: Scala 2.11/2.12 TraversableLike.groupBy, a mutable.HashMap
// then Map1..Map4, brokers 1 and 2 as 2, 1; 3.7.0: Scala 2.13's immutable.HashMap, 1, 2). Brokers
// 1 and 2 get t-0 and t-1 back from broker 3, which receives the LeaderAndIsr for broker 2's
// partition first before 3.7. The engine walked the brokers in id order in every era.
func TestAudit14RebalanceBrokerOrderFollowsScalaGroupBy(t *testing.T) {
	for _, c := range []struct{ era, want string }{
		{"0.10.2", "[[t-1:2/2] [t-0:1/2]]"},
		{"0.11.0", "[[t-1:2/2] [t-0:1/2]]"},
		{"2.1", "[[t-1:2/2] [t-0:1/2]]"},
		{"3.7", "[[t-0:1/2] [t-1:2/2]]"},
	} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 4, [][]int32{{1, 3}, {2, 3}}, eraCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"restart","broker":1}`)
			apply(t, e, `{"do":"restart","broker":2}`)
			runFor(t, e, 2900) // t = 4900
			e.Drain()
			runFor(t, e, 200)
			if got := fmt.Sprint(leaderAndIsrRequests(e.Drain(), 3)); got != c.want {
				t.Fatalf("LeaderAndIsr requests to broker 3 after the imbalance check: %s, want %s", got, c.want)
			}
		})
	}
}
