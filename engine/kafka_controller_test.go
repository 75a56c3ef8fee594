package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Tests of the ZooKeeper-mode controller built from Kafka's code (KafkaController,
// ReplicaStateMachine, PartitionStateMachine, Election), one per rule, naming the function.

// leaderWrites lists the controller's leader and leader epoch writes for p, as "leader@epoch".
func leaderWrites(evs []Event, p *partition) []string {
	var out []string
	for _, ev := range eventsOf(evs, EvLeaderChange, func(ev Event) bool {
		return ev.Topic == p.topic && ev.Partition.V == p.index
	}) {
		out = append(out, fmt.Sprintf("%d@%d", ev.To.V, ev.Epoch.V))
	}
	return out
}

// killControllerLeader builds 3 brokers where broker 0 is both the controller and the leader of
// t-0 (replicas 0, 1, 2), writes one record, kills broker 0 and runs past its session expiry.
func killControllerLeader(t *testing.T, era string) (*Engine, *partition, []Event) {
	t.Helper()
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, map[string]string{
		"inter.broker.protocol.version": fmt.Sprintf("%q", era),
		"zookeeper.session.timeout.ms":  "6000", "replica.lag.time.max.ms": "30000",
		"auto.leader.rebalance.enable": "false"})
	p := e.partitionOf(ktTopic, 0)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
	runFor(t, e, 1000)
	e.Drain()
	apply(t, e, `{"do":"kill","broker":0}`)
	runFor(t, e, 6500) // the session expires at 7000 ms
	return e, p, e.Drain()
}

// TestKafkaControllerFailoverOfflinesDeadReplicasFirst: KafkaController.onControllerFailover runs
// replicaStateMachine.startup() before partitionStateMachine.startup(). From 2.3
// (KAFKA-3143) ReplicaStateMachine.startup moves the replicas on dead brokers to OfflineReplica;
// doRemoveReplicasFromIsr writes LeaderAndIsr.newLeaderAndIsr(NoLeader, isr - 0) (epoch 1). Then
// PartitionStateMachine.startup elects broker 1 (epoch 2), and broker 1's records carry epoch 2.
func TestKafkaControllerFailoverOfflinesDeadReplicasFirst(t *testing.T) {
	e, p, evs := killControllerLeader(t, "3.7")
	if got, want := leaderWrites(evs, p), []string{"-1@1", "1@2"}; !slices.Equal(got, want) {
		t.Fatalf("leader writes %v, want %v (offline first, then the election)", got, want)
	}
	if e.ctrl.Leader(p.pid) != 1 || e.ctrl.LeaderEpoch(p.pid) != 2 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1, 2}) {
		t.Fatalf("leader %d epoch %d ISR %v; want 1, 2, [1 2]", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid))
	}
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
	runFor(t, e, 1000)
	if got := lastBatchEpoch(e.replicaOn(p.pid, 1)); got != 2 {
		t.Fatalf("the new leader wrote in epoch %d, want 2", got)
	}
}

// TestKafkaControllerFailoverBefore23ElectsOnly: before 2.3 ReplicaStateMachine.startup only moves
// the live replicas to OnlineReplica (handleStateChanges(allLiveReplicas, OnlineReplica)); the
// partition state machine then elects broker 1 from the live ISR with one bump
// (OfflinePartitionLeaderSelector: newIsr = liveBrokersInIsr).
func TestKafkaControllerFailoverBefore23ElectsOnly(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1"} {
		t.Run(era, func(t *testing.T) {
			e, p, evs := killControllerLeader(t, era)
			if got, want := leaderWrites(evs, p), []string{"1@1"}; !slices.Equal(got, want) {
				t.Fatalf("leader writes %v, want %v", got, want)
			}
			if e.ctrl.Leader(p.pid) != 1 || e.ctrl.LeaderEpoch(p.pid) != 1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1, 2}) {
				t.Fatalf("leader %d epoch %d ISR %v; want 1, 1, [1 2]", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid))
			}
		})
	}
}

// TestKafkaControllerFailoverDeadFollower: the controller's broker 0 follows t-0 (leader 1). From
// 2.3 the new controller takes replica 0 out of the ISR at once, with a leader-epoch bump
// (doRemoveReplicasFromIsr); before 2.3 it stays in the ISR, at the same epoch, until leader 1's
// own ISR shrink (Partition.maybeShrinkIsr after replica.lag.time.max.ms).
func TestKafkaControllerFailoverDeadFollower(t *testing.T) {
	for _, tc := range []struct {
		era   string
		epoch int32
		isr   []int32
	}{{"3.7", 1, []int32{1, 2}}, {"2.1", 0, []int32{0, 1, 2}}, {"0.10.2", 0, []int32{0, 1, 2}}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}}, map[string]string{
				"inter.broker.protocol.version": fmt.Sprintf("%q", tc.era),
				"zookeeper.session.timeout.ms":  "6000", "replica.lag.time.max.ms": "30000"})
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, 6500)
			if e.ctrl.Broker() != 1 || e.ctrl.Epoch() != 2 {
				t.Fatalf("controller %d in epoch %d, want broker 1 in epoch 2", e.ctrl.Broker(), e.ctrl.Epoch())
			}
			if e.ctrl.Leader(p.pid) != 1 || e.ctrl.LeaderEpoch(p.pid) != tc.epoch || !slices.Equal(e.ctrl.ISR(p.pid), tc.isr) {
				t.Fatalf("leader %d epoch %d ISR %v; want 1, %d, %v", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid), tc.epoch, tc.isr)
			}
		})
	}
}

// TestKafkaControllerFailoverDeadLastIsrMemberStaysLeader: before 2.3, when the dead leader was
// the last ISR member and unclean election is off, OfflinePartitionLeaderSelector throws
// NoReplicaOnlineException and nothing is written: broker 0 stays recorded as leader, the
// partition stays OfflinePartition. When broker 0 returns, triggerOnlinePartitionStateChange
// elects it again with the next epoch. From 2.3 the failover writes leader none first.
func TestKafkaControllerFailoverDeadLastIsrMemberStaysLeader(t *testing.T) {
	for _, tc := range []struct {
		era            string
		leaderAfter    int32
		epochAfter     int32
		epochRecovered int32
	}{{"2.1", 0, 0, 1}, {"0.11.0", 0, 0, 1}, {"3.7", -1, 1, 2}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1}}, map[string]string{
				"inter.broker.protocol.version":  fmt.Sprintf("%q", tc.era),
				"zookeeper.session.timeout.ms":   "6000",
				"unclean.leader.election.enable": "false",
				"auto.leader.rebalance.enable":   "false"})
			p := e.partitionOf(ktTopic, 0)
			apply(t, e, `{"do":"shutdown","broker":1}`) // ISR {0}, at leader epoch 1
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":0}`) // the controller and the last ISR member
			runFor(t, e, 6500)
			if e.ctrl.Broker() != 2 {
				t.Fatalf("controller is broker %d, want 2", e.ctrl.Broker())
			}
			if e.ctrl.Leader(p.pid) != tc.leaderAfter || e.ctrl.LeaderEpoch(p.pid) != tc.epochAfter+1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0}) {
				t.Fatalf("after failover: leader %d epoch %d ISR %v; want %d, %d, [0]", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid), tc.leaderAfter, tc.epochAfter+1)
			}
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 1000)
			if e.ctrl.Leader(p.pid) != tc.leaderAfter {
				t.Fatalf("broker 1 (not in the ISR) returned: leader %d, want %d (no unclean election)", e.ctrl.Leader(p.pid), tc.leaderAfter)
			}
			apply(t, e, `{"do":"restart","broker":0}`)
			runFor(t, e, 1000)
			if e.ctrl.Leader(p.pid) != 0 || e.ctrl.LeaderEpoch(p.pid) != tc.epochRecovered+1 {
				t.Fatalf("broker 0 returned: leader %d epoch %d; want 0, %d", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), tc.epochRecovered+1)
			}
		})
	}
}

// TestKafkaControllerFirstRebalanceCheck: onControllerFailover schedules the auto-rebalance task
// 5 s out (scheduleAutoLeaderRebalanceTask(delay = 5, unit = TimeUnit.SECONDS); the scheduler's
// initial delay of 5 in 0.10.2), then every leader.imbalance.check.interval.seconds. The cluster's
// start is a failover too. A controlled shutdown moves leadership off the preferred replica 1 at
// 1 s, and broker 1 is back in the ISR soon after; the first check at 5 s moves leadership back.
func TestKafkaControllerFirstRebalanceCheck(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}}, map[string]string{
				"inter.broker.protocol.version": fmt.Sprintf("%q", era)})
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 3800)
			if e.ctrl.Leader(p.pid) != 0 || !slices.Contains(e.ctrl.ISR(p.pid), 1) {
				t.Fatalf("at %d ms leader %d ISR %v; want 0, with 1 back in the ISR", e.now, e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
			}
			runFor(t, e, 200)
			if e.ctrl.Leader(p.pid) != 1 {
				t.Fatalf("at %d ms leader %d, want 1 (the first imbalance check at 5000 ms)", e.now, e.ctrl.Leader(p.pid))
			}
		})
	}
}

// TestKafkaControllerRebalanceCheckAfterFailover: a new controller's first imbalance check comes
// 5 s after it took over, not leader.imbalance.check.interval.seconds (300 s) later.
func TestKafkaControllerRebalanceCheckAfterFailover(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, map[string]string{"zookeeper.session.timeout.ms": "6000"})
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"kill","broker":0}`)
	runFor(t, e, 6100) // failover at 7000 ms: broker 1 leads
	if e.ctrl.Broker() != 1 || e.ctrl.Leader(p.pid) != 1 {
		t.Fatalf("controller %d, leader %d; want 1, 1", e.ctrl.Broker(), e.ctrl.Leader(p.pid))
	}
	apply(t, e, `{"do":"restart","broker":0}`)
	runFor(t, e, 3000) // 10.1 s: broker 0 is back in the ISR
	if e.ctrl.Leader(p.pid) != 1 || !slices.Contains(e.ctrl.ISR(p.pid), 0) {
		t.Fatalf("at %d ms leader %d ISR %v; want 1 with broker 0 back in the ISR", e.now, e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
	}
	runFor(t, e, 2000) // past 12 s: failover + 5 s
	if e.ctrl.Leader(p.pid) != 0 {
		t.Fatalf("at %d ms leader %d, want 0 (the imbalance check 5 s after the failover)", e.now, e.ctrl.Leader(p.pid))
	}
}

// TestKafkaControllerControlledShutdownDropsEveryShuttingDownBroker: doControlledShutdown adds the
// broker to shuttingDownBrokerIds, and Election.leaderForControlledShutdown writes the ISR without
// every shutting-down broker (isr.filter(!shuttingDownBrokerIds.contains)), not only the one
// asking. Broker 2 is shutting down (its request pending: it still leads t-1) when broker 0 asks.
func TestKafkaControllerControlledShutdownDropsEveryShuttingDownBroker(t *testing.T) {
	e := newKafkaEngine(t, 4, [][]int32{{0, 2, 1, 3}}, nil)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	e.ctrl.SetShuttingDownForTest(2) // as doControlledShutdown(2) leaves it
	e.ctrl.DoControlledShutdown(0)
	if e.ctrl.Leader(p.pid) != 1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1, 3}) {
		t.Fatalf("leader %d ISR %v; want 1, [1 3] (neither 0 nor 2)", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
	}
}

// TestKafkaControllerAlterPartitionNewerEpochNotController: tryProcessAlterPartition answers
// NOT_CONTROLLER when the leader sends a higher partition or leader epoch than this controller
// has: the leader has heard from a newer controller.
func TestKafkaControllerAlterPartitionNewerEpochNotController(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, nil)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	for _, tc := range []struct {
		name                string
		leaderEpoch, pEpoch int32
		want                KafkaError
	}{
		{"higher leader epoch", e.ctrl.LeaderEpoch(p.pid) + 1, e.ctrl.PartitionEpoch(p.pid), ErrNotController},
		{"higher partition epoch", e.ctrl.LeaderEpoch(p.pid), e.ctrl.PartitionEpoch(p.pid) + 1, ErrNotController},
		{"lower leader epoch", e.ctrl.LeaderEpoch(p.pid) - 1, e.ctrl.PartitionEpoch(p.pid), ErrFencedLeaderEpoch},
	} {
		req := &Message{ID: 999, Type: MsgAlterPartition, From: 0, To: 0, AlterPartition: &AlterPartitionRequest{
			BrokerID: 0, BrokerEpoch: e.brokers[0].brokerEpoch, TP: p.tp(), LeaderEpoch: tc.leaderEpoch,
			PartitionEpoch: tc.pEpoch, NewISR: []int32{0, 1}}}
		e.Drain()
		e.handleAlterPartition(e.brokers[0], req)
		var got KafkaError
		for _, ev := range e.Drain() {
			if ev.Message != nil && ev.Message.AlterPartitionResponse != nil {
				got = ev.Message.AlterPartitionResponse.Error
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1, 2}) {
			t.Fatalf("%s: the ISR changed to %v", tc.name, e.ctrl.ISR(p.pid))
		}
	}
}

// TestKafkaControllerLastIsrMemberBefore11: KafkaController.removeReplicaFromIsr in 0.10.2 and
// 0.11.0 keeps the last ISR member only while unclean leader election is disabled; with it
// enabled the ISR becomes empty. From 1.1 (KAFKA-5642) doRemoveReplicasFromIsr always keeps it.
func TestKafkaControllerLastIsrMemberBefore11(t *testing.T) {
	for _, tc := range []struct {
		era string
		isr []int32
	}{{"0.10.2", nil}, {"0.11.0", nil}, {"2.1", []int32{1}}, {"3.7", []int32{1}}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, map[string]string{
				"inter.broker.protocol.version":  fmt.Sprintf("%q", tc.era),
				"unclean.leader.election.enable": "true", "zookeeper.session.timeout.ms": "6000"})
			p := e.partitionOf(ktTopic, 0)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 7000)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 7000)
			if e.ctrl.Leader(p.pid) != -1 || !slices.Equal(e.ctrl.ISR(p.pid), tc.isr) {
				t.Fatalf("leader %d ISR %v; want -1, %v", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid), tc.isr)
			}
		})
	}
}
