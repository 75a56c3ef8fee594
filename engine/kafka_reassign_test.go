package engine

import (
	"fmt"
	"slices"
	"testing"
)

// The operator's chosen-leader election (the elect step with a broker): kafka-reassign-partitions.sh
// reorders the replicas so the chosen one comes first, then kafka-leader-election.sh (or
// kafka-preferred-replica-election.sh before 2.4) runs a preferred election. The reassignment is
// KafkaController.onPartitionReassignment; with the same replicas it completes at once and
// moveReassignedPartitionLeaderIfRequired keeps the live leader but writes the partition at the
// next leader epoch (updateLeaderEpochAndSendRequest → updateLeaderEpoch: "increment the leader
// epoch even if there are no leader or isr changes"), read in 0.10.2.0, 0.11.0.0, 2.1.0 and 3.7.0.

// TestKafkaControllerReassignmentBumpsLeaderEpoch: leader 0 of replicas [0 1 2]; electing broker 2
// writes leader 0 at epoch 1 (the reassignment), then leader 2 at epoch 2 (the preferred
// election), each sent in a LeaderAndIsr of its own: broker 0 takes epoch 1 as leader before it
// follows. Broker 2's records carry epoch 2.
func TestKafkaControllerReassignmentBumpsLeaderEpoch(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, map[string]string{
				"inter.broker.protocol.version": fmt.Sprintf("%q", era)})
			p := e.partitionOf(ktTopic, 0)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":2}`)
			runFor(t, e, 100)
			evs := e.Drain()
			if got := e.ctrl.Assignment(p.pid); !slices.Equal(got, []int32{2, 0, 1}) {
				t.Fatalf("assignment %v, want [2 0 1]", got)
			}
			if e.ctrl.Leader(p.pid) != 2 || e.ctrl.LeaderEpoch(p.pid) != 2 {
				t.Fatalf("leader %d epoch %d, want 2 at epoch 2 (reassignment, then election)", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid))
			}
			if got, want := leaderWrites(evs, p), []string{"2@2"}; !slices.Equal(got, want) {
				t.Errorf("leader changes %v, want %v", got, want)
			}
			// Broker 0 got (leader 0, epoch 1) before (leader 2, epoch 2).
			var toZero []string
			for _, ev := range evs {
				if m := ev.Message; ev.Type == MsgLeaderAndIsr && m != nil && m.To == 0 {
					for _, ps := range m.LeaderAndIsr.Partitions {
						toZero = append(toZero, fmt.Sprintf("%d@%d", ps.Leader, ps.LeaderEpoch))
					}
				}
			}
			if want := []string{"0@1", "2@2"}; !slices.Equal(toZero, want) {
				t.Fatalf("broker 0 got LeaderAndIsr %v, want %v", toZero, want)
			}
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			runFor(t, e, 1000)
			for b := int32(0); b < 3; b++ {
				if got := logString(e.replicaOn(p.pid, b).Log()); got != "0/e0 1/e2" {
					t.Errorf("broker %d log %q, want \"0/e0 1/e2\"", b, got)
				}
			}
			if v := e.ViolationNames(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}

// TestKafkaControllerElectPreferredHeadNoReassignment: electing the replica already first in the
// assignment needs no reassignment (nothing to reorder): a plain preferred election, one bump.
// Here broker 0 is first but not leader after its controlled shutdown and restart.
func TestKafkaControllerElectPreferredHeadNoReassignment(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, map[string]string{"auto.leader.rebalance.enable": "false"})
	p := e.partitionOf(ktTopic, 0)
	apply(t, e, `{"do":"shutdown","broker":0}`)
	runUntilTrue(t, e, 30000, "broker 0 stopped", func() bool { return e.brokers[0].Dead() })
	apply(t, e, `{"do":"restart","broker":0}`)
	runUntilTrue(t, e, 60000, "broker 0 back in the ISR", func() bool { return slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1, 2}) })
	before := e.ctrl.LeaderEpoch(p.pid)
	apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":0}`)
	runFor(t, e, 100)
	if e.ctrl.Leader(p.pid) != 0 || e.ctrl.LeaderEpoch(p.pid) != before+1 {
		t.Fatalf("leader %d epoch %d, want 0 at epoch %d", e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), before+1)
	}
}
