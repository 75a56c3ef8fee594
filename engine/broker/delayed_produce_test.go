package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestProducePurgatory: parked produces complete in the order parked once the HW passes their
// batch, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR is below min.insync.replicas; a
// replica that stops leading answers the rest NOT_LEADER_OR_FOLLOWER; an expired produce is
// answered once.
func TestProducePurgatory(t *testing.T) {
	var p ProducePurgatory
	var isr PartitionState
	isr.Commit([]int32{0, 1})
	a := NewDelayedProduce(&protocol.Message{ID: 1}, 0, 2) // commits at HW 2
	b := NewDelayedProduce(&protocol.Message{ID: 2}, 2, 3) // at HW 5
	c := NewDelayedProduce(&protocol.Message{ID: 3}, 5, 1) // at HW 6
	p.Add(a)
	p.Add(b)
	p.Add(c)
	type answer struct {
		id   uint64
		err  protocol.KafkaError
		base int64
	}
	var got []answer
	record := func(dp *DelayedProduce, err protocol.KafkaError, base int64) {
		got = append(got, answer{dp.Request().ID, err, base})
	}
	p.TryComplete(false, true, 5, &isr, 2, record)
	p.TryComplete(false, true, 5, &isr, 3, record) // nothing new
	if len(got) != 2 || got[0] != (answer{1, protocol.ErrNone, 0}) || got[1] != (answer{2, protocol.ErrNone, 2}) || p.Len() != 1 {
		t.Fatalf("at HW 5: %v, %d parked", got, p.Len())
	}
	got = nil
	if !c.Expire() || c.Expire() || !c.Done() {
		t.Error("an expired produce is not answered exactly once")
	}
	d := NewDelayedProduce(&protocol.Message{ID: 4}, 6, 1)
	p.Add(d)
	p.TryComplete(false, true, 7, &isr, 3, record)
	if len(got) != 1 || got[0] != (answer{4, protocol.ErrNotEnoughReplicasAfterAppend, 6}) || p.Len() != 0 {
		t.Fatalf("below min.insync.replicas: %v, %d parked", got, p.Len())
	}
	got = nil
	p.Add(NewDelayedProduce(&protocol.Message{ID: 5}, 7, 1))
	p.TryComplete(false, false, 7, &isr, 1, record)
	if len(got) != 1 || got[0] != (answer{5, protocol.ErrNotLeaderOrFollower, -1}) {
		t.Errorf("after losing leadership: %v", got)
	}
}

// TestDelayedProducesChunks: produces handed out of chunks are distinct and keep their own
// fields across a chunk's end.
func TestDelayedProducesChunks(t *testing.T) {
	var c DelayedProduces
	var dps []*DelayedProduce
	for i := range 3 * delayedProduceChunk {
		dps = append(dps, c.New(&protocol.Message{ID: uint64(i)}, int64(i), 2))
	}
	dps[0].Expire()
	for i, dp := range dps {
		if dp.Request().ID != uint64(i) || dp.RequiredOffset() != int64(i)+2 || dp.Done() != (i == 0) {
			t.Fatalf("produce %d: request %d, required %d, done %v", i, dp.Request().ID, dp.RequiredOffset(), dp.Done())
		}
	}
}

// TestProducePurgatoryInline: one produce parks without an allocation (inline), more grow an
// array in the order parked, and once they are answered the next parks inline again.
func TestProducePurgatoryInline(t *testing.T) {
	var p ProducePurgatory
	a, b := NewDelayedProduce(&protocol.Message{ID: 1}, 0, 1), NewDelayedProduce(&protocol.Message{ID: 2}, 1, 1)
	if n := testing.AllocsPerRun(100, func() { p.Clear(); p.Add(a) }); n != 0 {
		t.Errorf("one produce parked took %v allocations, want 0", n)
	}
	p.Add(b)
	var got []uint64
	record := func(dp *DelayedProduce, _ protocol.KafkaError, _ int64) { got = append(got, dp.Request().ID) }
	var isr PartitionState
	p.TryComplete(false, true, 2, &isr, 0, record)
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || p.Len() != 0 {
		t.Fatalf("answered %v, %d parked; want 1 then 2, none left", got, p.Len())
	}
	c := NewDelayedProduce(&protocol.Message{ID: 3}, 2, 1)
	if n := testing.AllocsPerRun(100, func() { p.produces = p.produces[:0]; p.Add(c) }); n != 0 || p.Len() != 1 {
		t.Errorf("a produce parked once the others were answered took %v allocations (%d parked), want 0", n, p.Len())
	}
}
