package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit 15: the controller's state machines, its ControllerChannelManager and its ZooKeeper writes
// (PartitionStateMachine, ReplicaStateMachine, PartitionLeaderSelector / Election,
// ControllerChannelManager, ControllerContext, ZkUtils / KafkaZkClient, ReplicationUtils), read at
// each era's tag (0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0) and through their history between them. Each
// test names the Kafka function or change it follows.

// stopReplicaSends lists, in order, when the controller sent broker to a StopReplica and the
// partitions (of topic t) each named.
func stopReplicaSends(evs []Event, to int32) ([]int64, []string) {
	var at []int64
	var parts []string
	for _, ev := range eventsOf(evs, MsgStopReplica, func(ev Event) bool { return ev.Message.To == to }) {
		at = append(at, ev.T)
		var ps []int32
		for _, tp := range ev.Message.StopReplica.Partitions {
			ps = append(ps, tp.Partition)
		}
		parts = append(parts, fmt.Sprint(ps))
	}
	return at, parts
}

// TestAudit15StopReplicaOneRequestPerPartition: in 2.1.1 doControlledShutdown adds each followed
// partition's StopReplica with a callback (`addStopReplicaRequestForBrokers(Seq(id), partition,
// deletePartition = false, (_, _) => ())`), and so does ReplicaStateMachine's OfflineReplica
// transition; ControllerBrokerRequestBatch.sendRequestsToBrokers sends the StopReplicas without a
// callback as one request (`replicasToGroup`, here none: an empty request, sent all the same),
// then each of the others as its own request (`replicasToNotGroup.foreach`), in the order they
// were added, which is ControllerContext.partitionsOnBroker's: t's partitions in a Scala 2.11/2.12
// mutable.HashMap of Int (0..3 iterate 2, 1, 3, 0), a Set4 keeping it. Every request waits in
// broker 1's queue for the answer to the one before (RequestSendThread). 1.1.0 added the callbacks
// (KAFKA-5642's rewrite) and 2.3 removed them (KAFKA-8294); 3.7.0 sends one StopReplica per broker
// and batch (sendStopReplicaRequests, StopReplica v3).
//
// t-0, t-1, t-2 on [0,1] (led by 0), t-3 on [1,2]. Broker 2 shuts down at 1000, leaving t-3's ISR
// [1]; at 2000 broker 1 asks to shut down: t-3 cannot move, so it stays up (60 s backoff) and its
// queue drains. The ControlledShutdown arrives at 2001; broker 1 gets no LeaderAndIsr (its one led
// partition found no leader, and a batch without LeaderAndIsr has no UpdateMetadata), so its first
// StopReplica leaves at once, and each next one two ms later (1 ms links), except that the
// OfflineReplica batch's UpdateMetadata (its LeaderAndIsr requests go to broker 0) takes a round
// trip before that batch's StopReplicas (sendRequestsToBrokers: LeaderAndIsr, UpdateMetadata,
// StopReplica). Its fetcher for leader 0 stops when the last of its partitions is stopped.
func TestAudit15StopReplicaOneRequestPerPartition(t *testing.T) {
	for _, c := range []struct {
		era   string
		at    []int64
		parts []string
		stop  int64
	}{
		{"2.1", []int64{2001, 2003, 2005, 2007, 2011, 2013, 2015, 2017},
			[]string{"[]", "[2]", "[1]", "[0]", "[]", "[2]", "[1]", "[0]"}, 2008},
		{"3.7", []int64{2001, 2005}, []string{"[0 1 2]", "[0 1 2]"}, 2002},
	} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["controlled.shutdown.retry.backoff.ms"] = "60000"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1}, {0, 1}, {0, 1}, {1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			evs := e.Drain()
			at, parts := stopReplicaSends(evs, 1)
			if !slices.Equal(at, c.at) || !slices.Equal(parts, c.parts) {
				t.Errorf("StopReplica to broker 1 at %v naming %v, want at %v naming %v", at, parts, c.at, c.parts)
			}
			stopped := eventsOf(evs, EvFetcher, func(ev Event) bool { return ev.Broker.Set && ev.Broker.V == 1 && ev.Reason == "stopped" })
			if len(stopped) != 1 || stopped[0].T != c.stop {
				t.Errorf("broker 1's fetcher stops: %d events, want one at %d", len(stopped), c.stop)
			}
		})
	}
}

// TestAudit15OfflineReplicaNotInIsrStillSent: the OfflineReplica transition of a replica that is
// not in its partition's ISR writes nothing, but the partition's state as it stands still goes to
// the other replicas: 2.1.1's and 3.7.0's ReplicaStateMachine.doRemoveReplicasFromIsr returns
// `leaderAndIsrsWithoutReplica ++ successfulUpdates`, and the OfflineReplica case adds each to the
// batch for `partitionReplicaAssignment(partition).filterNot(_ == replicaId)`; 0.10.2.2's
// KafkaController.removeReplicaFromIsr returns Some(the current state) after "Cannot remove
// replica ... since it is not in the ISR", which ReplicaStateMachine sends the same way. The
// recipients ignore it (the leader epoch is not newer: STALE_CONTROLLER_EPOCH for the partition,
// ReplicaManager.becomeLeaderOrFollower), but it is a LeaderAndIsr on their queues.
//
// Follower 2 of t-0 [1,2] shuts down at 1000: its OfflineReplica takes it out of the ISR (leader
// epoch 1, a LeaderAndIsr to broker 1), and it stops once the answer reaches it (1002), closing its
// session: onBrokerFailure moves it to OfflineReplica again, and broker 1 gets t-0 at leader epoch
// 1 once more, which it answers STALE_CONTROLLER_EPOCH. Before, the engine sent nothing then.
func TestAudit15OfflineReplicaNotInIsrStillSent(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era+"/shutdown", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runFor(t, e, 100)
			evs := e.Drain()
			if got := fmt.Sprint(leaderAndIsrRequests(evs, 1)); got != "[[t-0:1/1] [t-0:1/1]]" {
				t.Errorf("LeaderAndIsr requests to broker 1: %s, want [[t-0:1/1] [t-0:1/1]] (the shrink, then the dead replica's OfflineReplica)", got)
			}
			answers := eventsOf(evs, MsgLeaderAndIsrResponse, onBroker(1))
			if len(answers) != 2 || len(answers[1].Message.LeaderAndIsrResponse.Partitions) != 1 ||
				answers[1].Message.LeaderAndIsrResponse.Partitions[0].Error != ErrStaleControllerEpoch {
				t.Errorf("broker 1's answers %v, want the second with t-0 STALE_CONTROLLER_EPOCH", answers)
			}
			if p := e.partitionOf(ktTopic, 0); e.ctrl.LeaderEpoch(p.pid) != 1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1}) {
				t.Errorf("t-0 epoch %d ISR %v, want 1 [1]", e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid))
			}
		})
	}
	// The leader's own shrink (Partition.maybeShrinkIsr writing ZooKeeper, before 2.7) leaves the
	// leader epoch at 0; the follower, cut off from its leader, is killed after it and its session
	// expires at 22000 (zookeeper.session.timeout.ms 6000): a LeaderAndIsr with t-0 as it stands
	// (leader 1, epoch 0, ISR [1]) goes to broker 1 then.
	t.Run("2.1/leader shrank it", func(t *testing.T) {
		e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg("2.1"))
		runFor(t, e, 1000)
		apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
		runFor(t, e, 1000)
		apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
		runFor(t, e, 14000)
		p := e.partitionOf(ktTopic, 0)
		if e.ctrl.LeaderEpoch(p.pid) != 0 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1}) {
			t.Fatalf("t-0 epoch %d ISR %v at 16000, want 0 [1] (the leader's own shrink)", e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid))
		}
		apply(t, e, `{"do":"kill","broker":2}`)
		e.Drain()
		runFor(t, e, 6100)
		evs := e.Drain()
		sent := eventsOf(evs, MsgLeaderAndIsr, func(ev Event) bool { return ev.Message.To == 1 })
		if len(sent) != 1 || sent[0].T != 22000 {
			t.Fatalf("LeaderAndIsr to broker 1: %d, want one at 22000", len(sent))
		}
		ps := sent[0].Message.LeaderAndIsr.Partitions
		if len(ps) != 1 || ps[0].Leader != 1 || ps[0].LeaderEpoch != 0 || !slices.Equal(ps[0].ISR, []int32{1}) {
			t.Errorf("LeaderAndIsr to broker 1 carries %+v, want t-0 leader 1 epoch 0 ISR [1]", ps)
		}
	})
}
