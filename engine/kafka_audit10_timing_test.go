package engine

import (
	"slices"
	"testing"
)

// Audit of the timing a grader observes at a given millisecond (ISR changes, HW moves, their
// schedules) against each era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test
// names the Kafka function it follows.

// isrChangeTimes returns, per partition pid, the times the controller's ISR of it changed.
func isrChangeTimes(e *Engine, pids ...int32) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, ev := range eventsOf(e.events, "isr-change", nil) {
		for _, pid := range pids {
			if ev.Partition.Set && e.partitions[pid].topic == ev.Topic && ev.Partition.V == e.partitions[pid].index {
				out[pid] = append(out[pid], ev.T)
			}
		}
	}
	return out
}

// TestAuditOneAlterPartitionInFlightPerBroker: 3.7.0 DefaultAlterPartitionManager (core
// AlterPartitionManager.scala) keeps one AlterPartition in flight per broker: submit puts the
// change in unsentIsrUpdates and maybePropagateIsrChanges sends every unsent change only when
// inflightRequest is false; the response handler clears the flag and sends what was submitted
// meanwhile. Leader 0 leads t-0 and t-1, and follower 1's Fetch link is cut at 1000 (the last
// Fetch it got through arrived at 503: lastCaughtUpTimeMs 503); a record goes to each partition.
// The isr-expiration run at 15000 finds follower 1 out of sync in both: the first partition's
// AlterPartition leaves at 15000 and the controller (broker 0) commits it at 15001; the second
// waits for the answer (15002), so the controller commits it at 15003 and its HW moves at 15004.
// The engine sent both at 15000. Which partition goes first is the order of ReplicaManager's
// allPartitions, a hash map (the engine walks partition order), so the test reads the two times
// as a set.
func TestAuditOneAlterPartitionInFlightPerBroker(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["replica.lag.time.max.ms"] = "10000"
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {0, 1, 2}}, cfg)
	p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
	apply(t, e, `{"do":"produce","topic":"t","partition":1,"acks":1}`)
	if err := e.RunUntil(15004); err != nil {
		t.Fatal(err)
	}
	changes := isrChangeTimes(e, p0.pid, p1.pid)
	got := []int64{}
	for _, pid := range []int32{p0.pid, p1.pid} {
		if len(changes[pid]) != 1 {
			t.Fatalf("ISR changes of pid %d at %v, want one", pid, changes[pid])
		}
		got = append(got, changes[pid][0])
		if isr := e.ctrl.ISR(pid); !slices.Equal(isr, []int32{0, 2}) {
			t.Fatalf("ISR of pid %d at 15004: %v, want [0 2]", pid, isr)
		}
		if hw := e.replicaOn(pid, 0).Log().HighWatermark(); hw != 1 {
			t.Fatalf("leader's HW of pid %d at 15004: %d, want 1", pid, hw)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{15001, 15003}) {
		t.Fatalf("the controller committed the two shrinks at %v, want 15001 and 15003 (one AlterPartition in flight per broker)", got)
	}
}
