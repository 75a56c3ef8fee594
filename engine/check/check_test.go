package check

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/clients"
	"github.com/highwater-sim/highwater/engine/commitlog"
)

// fake is a one-partition cluster of three brokers, as the checker reads it.
type fake struct {
	now      int64
	leader   int32
	epoch    int32
	dead     map[int32]bool
	logs     [3]commitlog.Log
	leaders  [3]bool
	acked    []clients.OffsetID
	consumed []clients.OffsetID
}

func (f *fake) Now() int64                          { return f.now }
func (f *fake) PartitionName(int32) (string, int32) { return "t", 0 }
func (f *fake) Leader(int32) (int32, int32)         { return f.leader, f.epoch }
func (f *fake) BrokerDead(b int32) bool             { return f.dead[b] }
func (f *fake) AckedAll(int32) ([]clients.OffsetID, int) {
	return f.acked, sortedPrefix(f.acked)
}
func (f *fake) Consumed(int32) ([]clients.OffsetID, int) {
	return f.consumed, sortedPrefix(f.consumed)
}

// sortedPrefix is how long a prefix of recs is in offset order.
func sortedPrefix(recs []clients.OffsetID) int {
	n := 0
	for n < len(recs) && (n == 0 || recs[n].Offset >= recs[n-1].Offset) {
		n++
	}
	return n
}
func (f *fake) Replica(_ int32, b int32) Replica {
	return Replica{Broker: b, Log: &f.logs[b], HWConfirmed: true, LeaderEpoch: f.epoch, IsLeader: f.leaders[b]}
}
func (f *fake) Replicas(pid int32, buf []Replica) []Replica {
	for b := range int32(len(f.logs)) {
		buf = append(buf, f.Replica(pid, b))
	}
	return buf
}

// TestCheckerOnItsOwn drives the checker with facts alone: a leader lowering its HW, then an
// acknowledged record cut from the leader, whose cause is the truncation that cut it.
func TestCheckerOnItsOwn(t *testing.T) {
	f := &fake{leader: 0, leaders: [3]bool{true}}
	var heard []string
	k := New(f, func(v *Violation) { heard = append(heard, v.Name) })
	for b := range f.logs {
		f.logs[b].AppendAsFollower([]commitlog.Record{{ID: 1}, {ID: 2}})
		f.logs[b].SetHighWatermark(2)
	}
	f.acked = []clients.OffsetID{{Offset: 0, ID: 1}, {Offset: 1, ID: 2}}

	f.now = 10
	f.logs[0].SetHighWatermark(1)
	k.HWMoved(0, 0, 2)
	f.now = 20
	cut := f.logs[0].TruncateTo(1)
	k.Truncated(0, 0, 1, cut, "broker 0 truncated t-0 to 1")
	k.LogCut(0, 0, 1)
	// A second break of the same invariant on the partition is not reported again.
	k.LogCut(0, 0, 0)

	if got := k.Names(); len(got) != 2 || got[0] != "acked-write-lost" || got[1] != "hw-regression" {
		t.Fatalf("broken: %v", got)
	}
	if len(heard) != 2 || heard[0] != "hw-regression" {
		t.Fatalf("heard %v", heard)
	}
	lost := k.Violations()[1]
	if lost.T != 20 || len(lost.Records) != 1 || lost.Records[0].ID != 2 {
		t.Fatalf("acked-write-lost: %+v", lost)
	}
	if lost.Cause == nil || lost.Cause.Type != CauseTruncate || lost.Cause.T != 20 || lost.Cause.Broker.V != 0 {
		t.Fatalf("cause %+v; want broker 0's truncation at 20", lost.Cause)
	}
	// A follower's log does not matter; a dead leader's neither.
	k2 := New(f, nil)
	k2.LogCut(0, 1, 0)
	f.dead = map[int32]bool{0: true}
	k2.Elected(0)
	if len(k2.Violations()) != 0 {
		t.Fatalf("violations %v", k2.Violations())
	}
}

// TestMissingSkipsInOrder: missing with the ordered prefix of a list gives what it gives reading
// every record, for every from, on a list in offset order and on one that is not past its middle
// (records lost, their offsets acknowledged again). The clients keep the prefix as a list grows
// (clients' TestSortedPrefixKept).
func TestMissingSkipsInOrder(t *testing.T) {
	var log commitlog.Log
	log.AppendAsLeader(1, []int64{10, 11, 12, 13, 14, 15})
	at := func(o, id int64) clients.OffsetID { return clients.OffsetID{Offset: o, ID: id} }
	inOrder := []clients.OffsetID{at(0, 10), at(1, 11), at(2, 99), at(3, 13), at(3, 13), at(5, 98)}
	outOfOrder := append(slices.Clone(inOrder), at(1, 97), at(4, 14))
	for _, recs := range [][]clients.OffsetID{nil, inOrder, outOfOrder} {
		for grown := range len(recs) + 1 { // the list as it grows
			list := recs[:grown]
			sorted := sortedPrefix(list)
			if want := min(grown, len(inOrder)); sorted != want {
				t.Fatalf("sortedPrefix(%v) = %d, want %d", list, sorted, want)
			}
			for from := int64(-1); from <= 7; from++ {
				if got, want := missing(&log, list, from, sorted), missing(&log, list, from, 0); !slices.Equal(got, want) {
					t.Errorf("missing(%v, from %d) = %v, want %v", list, from, got, want)
				}
			}
		}
	}
}
