package clients

import (
	"reflect"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// TestClientsRecord: record ids are run-unique, an acknowledgement lands in its acks' list, and a
// consume reads on from where the last one stopped.
func TestClientsRecord(t *testing.T) {
	var c Clients
	c.Init(2)
	a := c.NewProduce("t", 1, 1, -1, 2, 10)
	b := c.NewProduce("t", 1, 1, 1, 1, 20)
	if !slices.Equal(a.RecordIDs, []int64{1, 2}) || !slices.Equal(b.RecordIDs, []int64{3}) || c.Produce(2) != b || c.ProduceCount() != 2 {
		t.Fatalf("record ids %v %v; want 1, 2 and 3", a.RecordIDs, b.RecordIDs)
	}
	c.Acked(a, 5)
	c.Acked(b, 7)
	p := c.Partition(1)
	if p.Acked() != 3 || !slices.Equal(p.AckedAll(), []OffsetID{{5, 1}, {6, 2}}) || !slices.Equal(p.AckedOne(), []OffsetID{{7, 3}}) {
		t.Fatalf("acked %d, all %v, one %v", p.Acked(), p.AckedAll(), p.AckedOne())
	}
	r := c.NewConsume("t", 1, 1)
	c.Consumed(r, []commitlog.Record{{ID: 1}, {ID: 2}})
	if next := c.NewConsume("t", 1, 1); next.Offset != 2 || p.NextRead() != 2 || len(p.Consumed()) != 2 {
		t.Fatalf("next consume at %d, next read %d, consumed %v; want 2, 2 and two records", next.Offset, p.NextRead(), p.Consumed())
	}
}

// TestProduceStepsByID: across several chunks, step id is the step NewProduce returned (the same
// pointer, as a list of them held), and ProduceOps lists them in order.
func TestProduceStepsByID(t *testing.T) {
	var c Clients
	c.Init(1)
	var made []*ProduceOp
	for i := range 3*opChunkSize + 5 {
		made = append(made, c.NewProduce("t", 0, 0, -1, int64(i%3), int64(i)))
	}
	if c.ProduceCount() != len(made) {
		t.Fatalf("%d steps, want %d", c.ProduceCount(), len(made))
	}
	ops := c.ProduceOps()
	for i, op := range made {
		if got := c.Produce(int64(i + 1)); got != op || ops[i] != op || op.ID != int64(i+1) || op.Sent != int64(i) {
			t.Fatalf("step %d: Produce %p, ProduceOps %p, made %p (id %d)", i+1, got, ops[i], op, op.ID)
		}
	}
}

// TestAckedListsGrow: acknowledgements in batches of every size give the lists append would
// build, and a list handed out earlier never changes.
func TestAckedListsGrow(t *testing.T) {
	var c Clients
	c.Init(1)
	var want []OffsetID
	var seen [][]OffsetID
	base := int64(0)
	for i := range 200 {
		op := c.NewProduce("t", 0, 0, -1, int64(i%64), 0)
		c.Acked(op, base)
		for j, id := range op.RecordIDs {
			want = append(want, OffsetID{Offset: base + int64(j), ID: id})
		}
		base += int64(len(op.RecordIDs))
		got := c.Partition(0).AckedAll()
		if !slices.Equal(got, want) {
			t.Fatalf("batch %d: acked %v, want %v", i, got, want)
		}
		seen = append(seen, got)
	}
	for _, s := range seen {
		if !slices.Equal(s, want[:len(s)]) {
			t.Fatalf("a list handed out changed")
		}
	}
}

// TestSortedPrefixKept: as acknowledgements and consumes add records, in order and then out of
// order (records lost, their offsets acknowledged again), AckedAllSorted and ConsumedSorted are
// how long a prefix of each list is in offset order, read from scratch.
func TestSortedPrefixKept(t *testing.T) {
	fromScratch := func(recs []OffsetID) int {
		n := 0
		for n < len(recs) && (n == 0 || recs[n].Offset >= recs[n-1].Offset) {
			n++
		}
		return n
	}
	var c Clients
	c.Init(1)
	p := c.Partition(0)
	for i, base := range []int64{0, 2, 2, 4, 1, 6, 0} {
		c.Acked(c.NewProduce("t", 0, 0, -1, int64(i%3), 0), base)
		if got, want := p.AckedAllSorted(), fromScratch(p.AckedAll()); got != want {
			t.Fatalf("batch %d: AckedAllSorted %d, want %d (%v)", i, got, want, p.AckedAll())
		}
		r := c.NewConsume("t", 0, 0)
		r.Offset = base
		c.Consumed(r, make([]commitlog.Record, i%3))
		if got, want := p.ConsumedSorted(), fromScratch(p.Consumed()); got != want {
			t.Fatalf("consume %d: ConsumedSorted %d, want %d (%v)", i, got, want, p.Consumed())
		}
	}
	if p.AckedAllSorted() == len(p.AckedAll()) || p.ConsumedSorted() == len(p.Consumed()) {
		t.Fatalf("the lists should have gone out of order: %v, %v", p.AckedAll(), p.Consumed())
	}
}

// TestPartitionIsALine: what an acknowledgement writes and the checker reads of a partition is
// one cache line (Partition).
func TestPartitionIsALine(t *testing.T) {
	if n := reflect.TypeFor[Partition]().Size(); n != 64 {
		t.Fatalf("a Partition is %d bytes, want 64", n)
	}
}

// TestSequencesResolve follows 3.7.0's TransactionManager for one partition: sequences given at
// the first send in order (RecordAccumulator.drain), a batch that expired after it was sent
// leaves its sequence unresolved (markSequenceUnresolved) and holds new batches back
// (shouldStopDrainBatchesForPartition); once nothing is in flight the sequence is resolved if
// the batches after it were acknowledged, else the epoch is bumped (maybeResolveSequences); a
// retry waits until it is the first in flight (firstInFlightSequence); RecordHeader reads a
// record's header from its batch.
func TestSequencesResolve(t *testing.T) {
	var c Clients
	c.Init(1)
	a := c.NewProduce("t", 0, 0, -1, 2, 0)
	b := c.NewProduce("t", 0, 0, -1, 1, 0)
	d := c.NewProduce("t", 0, 0, -1, 1, 0)
	for _, op := range []*ProduceOp{a, b} {
		c.AssignSequence(op)
		op.SetInFlight(true)
	}
	if e, s, ok := c.RecordHeader(3); !ok || e != 0 || s != 2 {
		t.Fatalf("record 3's header %d/%d/%v, want epoch 0 sequence 2", e, s, ok)
	}
	if _, _, ok := c.RecordHeader(4); ok {
		t.Fatal("record 4 (a batch not sent yet) has a header")
	}
	b.SetInFlight(false)
	if !c.HoldRetry(b) {
		t.Fatal("b, a retry behind a, is not held")
	}
	if c.SequenceDone(a, false, true) {
		t.Fatal("a expired with b in flight: bumped at once")
	}
	if next, unresolved := c.UnresolvedNext(b); !next || !unresolved {
		t.Fatalf("b after unresolved a: next %v, unresolved %v", next, unresolved)
	}
	if !c.BlockBehindRetry(d) {
		t.Fatal("a new batch left while a sequence is unresolved")
	}
	if ids := c.UnholdRetries(0); !slices.Equal(ids, []int64{b.ID}) {
		t.Fatalf("held retries %v, want b", ids)
	}
	if c.SequenceDone(b, true, false) {
		t.Fatal("b acknowledged after a expired: the leader had a (b followed it), yet bumped")
	}
	if ids := c.Unblock(0); !slices.Equal(ids, []int64{d.ID}) {
		t.Fatalf("unblocked %v, want d", ids)
	}
	c.AssignSequence(d)
	if e, s, ok := d.Header(); !ok || e != 0 || s != 3 {
		t.Fatalf("d's header %d/%d/%v, want epoch 0 sequence 3", e, s, ok)
	}
	// d expires in retry with nothing after it acknowledged: bumped once nothing is in flight.
	d.Failed()
	if !c.SequenceDone(d, false, true) {
		t.Fatal("d expired, nothing acknowledged after it: no bump")
	}
}
