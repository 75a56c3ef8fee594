package engine

import (
	"slices"
	"testing"
)

// Audit 10, isolation, zombie leaders and links, against each era's Kafka source (tags 0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAudit10HeldAlterPartitionOwnConnection: a zombie leader healed before its ZooKeeper session
// expired sends on what its cut links held, each message with its own connection's TCP
// retransmission. Its AlterPartition (3.7.0: DefaultAlterPartitionManager on the broker's own
// "alter-partition" NodeToControllerChannelManagerImpl, a NetworkClient of its own) does not
// share a connection with the answer it held for the controller's broker's fetcher thread (the
// follower's ReplicaFetcherThread, BrokerBlockingSender, opened that connection): the shrink sent
// at 6000 into the cut is retransmitted at 9000 (200+400+800+1600 ms), not behind the fetch
// answer held since 1105 (its retransmission at 13705). So the controller's ISR is [1] from 9001
// and the acks=all produce appended at 2001 is acknowledged then (the HW passes it once the
// AlterPartition answer commits the shrink: Partition.handleAlterPartitionUpdate →
// maybeIncrementLeaderHW).
func TestAudit10HeldAlterPartitionOwnConnection(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["replica.lag.time.max.ms"] = "4000" // shrink checks every 2000 ms; the session is 18000
	e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, cfg)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"isolate","broker":1}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
	runFor(t, e, 6000) // the 6000 check finds both followers out of sync: AlterPartition, held
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1, 2}) {
		t.Fatalf("ISR %v before the heal, want [0 1 2]", isr)
	}
	apply(t, e, `{"do":"heal","broker":1}`) // at 8000
	runFor(t, e, 1000)
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1, 2}) {
		t.Fatalf("ISR %v at 9000, want [0 1 2] (the AlterPartition arrives at 9001)", isr)
	}
	runFor(t, e, 5)
	if isr, a := e.ctrl.ISR(p.pid), e.client(p).Acked(); !slices.Equal(isr, []int32{1}) || a != 1 {
		t.Fatalf("at 9005: ISR %v, acked %d; want [1] and 1 (AlterPartition retransmitted at 9000 on its own connection)", isr, a)
	}
}

// TestAudit10ElectWaitsForController: an operator's election asked while the controller cannot
// act (its broker isolated, so cut off from ZooKeeper, or dead) is not refused. Before 2.2 the
// tools write it to ZooKeeper (/admin/reassign_partitions, /admin/preferred_replica_election) and
// the controller acts on the watch when its connection comes back within the session, or a new
// controller reads the pending znodes at failover (onControllerFailover: 0.10.2.2
// maybeTriggerPartitionReassignment and maybeTriggerPreferredReplicaElection, 2.1.1
// fetchPendingPreferredReplicaElections). From 2.2 the admin client sends it to the controller
// (ElectLeaders, AlterPartitionReassignments): an isolated controller takes it and waits for
// ZooKeeper (KafkaZkClient.retryRequestsUntilConnected), electing at a heal within its session and
// losing it when the session expired; with the controller dead, the admin client waits for the
// next one. The engine answered NO_CONTROLLER and dropped it.
func TestAudit10ElectWaitsForController(t *testing.T) {
	elect := `{"do":"elect","topic":"t","partition":0,"broker":2}`
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era+"/heal-within-session", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, eraCfg(era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":0}`) // broker 0 is the controller
			runFor(t, e, 1000)
			apply(t, e, elect)
			runFor(t, e, 2000)
			if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 1 || ep != 0 {
				t.Fatalf("before the heal: leader %d epoch %d, want 1 and 0 (the election waits)", l, ep)
			}
			apply(t, e, `{"do":"heal","broker":0}`) // at 4000, within the session
			// The reassignment that puts broker 2 first bumps the epoch, the preferred election again.
			if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 2 || ep != 2 {
				t.Fatalf("at the heal: leader %d epoch %d, want 2 and 2", l, ep)
			}
		})
		t.Run(era+"/session-expires", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, eraCfg(era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":0}`)
			runFor(t, e, 1000)
			apply(t, e, elect)
			runFor(t, e, 20000) // broker 0's session expired at 7000 (19000 in 3.7): broker 1 controls
			want := int32(2)    // before 2.2 the new controller reads the pending znodes
			if era == "3.7" {
				want = 1 // the isolated controller took it and lost it with its session
			}
			if l := e.ctrl.Leader(p.pid); l != want {
				t.Fatalf("after the failover: leader %d, want %d", l, want)
			}
		})
	}
	t.Run("3.7/controller-dead", func(t *testing.T) {
		e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, eraCfg("3.7"))
		p := e.partitionOf(ktTopic, 0)
		runFor(t, e, 1000)
		apply(t, e, `{"do":"kill","broker":0}`)
		runFor(t, e, 1000)
		apply(t, e, elect) // the admin client waits for a controller
		runFor(t, e, 16999)
		if l := e.ctrl.Leader(p.pid); l != 1 {
			t.Fatalf("at 18999: leader %d, want 1", l)
		}
		runFor(t, e, 1) // broker 0's session expires at 19000: broker 1 takes over and elects
		if l := e.ctrl.Leader(p.pid); l != 2 {
			t.Fatalf("at 19000: leader %d, want 2", l)
		}
	})
	t.Run("2.1/already-leads-at-failover", func(t *testing.T) {
		// A pending preferred election whose preferred replica leads when a new controller
		// reads it is dropped as completed (2.1.1 fetchPendingPreferredReplicaElections), not
		// elected again as the watch path does (PreferredReelectsLeader).
		e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, eraCfg("2.1"))
		p := e.partitionOf(ktTopic, 0)
		runFor(t, e, 1000)
		apply(t, e, `{"do":"kill","broker":0}`)
		apply(t, e, `{"do":"elect","topic":"t","partition":0}`)
		runFor(t, e, 7000)
		if l, ep := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 1 || ep != 0 {
			t.Fatalf("after the failover: leader %d epoch %d, want 1 and 0", l, ep)
		}
	})
}
