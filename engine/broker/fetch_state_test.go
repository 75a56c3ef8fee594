package broker

import (
	"testing"
	"unsafe"
)

// TestPartitionFetchState drives one partition's fetch state as a thread does: added Truncating,
// out of Truncating, stamped and put in the session by a build, backing off out of it, taken
// over by its state at a new leader epoch, and given back its session entry on rejoining.
func TestPartitionFetchState(t *testing.T) {
	st := NewPartitionFetchState(3, 5, 10, -1, true)
	if st.Pid() != 3 || st.Epoch() != 5 || st.FetchOffset() != 10 || st.LastFetchedEpoch() != -1 || !st.Truncating() ||
		st.Listed() || st.InSession() || st.Ready(0) {
		t.Fatalf("a new Truncating state: %+v", st)
	}
	if !st.List() || st.List() || !st.Listed() {
		t.Error("List is true once, then the state stays listed")
	}
	if !st.SetTruncating(false) || st.SetTruncating(false) || !st.Ready(0) {
		t.Error("SetTruncating reports a move once; out of Truncating with no backoff it is ready")
	}
	st.Fetched(12, 5)
	sp := InSession(st.FetchOffset(), 0, st.Epoch(), st.LastFetchedEpoch())
	st.SetSession(sp)
	if e, o := st.Sent(); e != 5 || o != 12 || !st.InSession() || st.Session() != sp {
		t.Errorf("stamped at epoch %d offset %d, session %+v", e, o, st.Session())
	}
	st.SetDelayUntil(100)
	if st.Ready(99) || !st.Ready(100) {
		t.Error("a backoff until 100 is not ready before 100 and is at 100")
	}
	if !st.LeaveSession() || st.LeaveSession() || st.InSession() {
		t.Error("LeaveSession reports leaving once")
	}
	// The state at a new leader epoch keeps what the session and the Fetch in flight know.
	next := NewPartitionFetchState(3, 6, 12, 5, false)
	next.Succeed(&st)
	if e, o := next.Sent(); e != 5 || o != 12 || next.Session() != st.Session() || !next.Listed() || next.Epoch() != 6 {
		t.Errorf("a successor: %+v", next)
	}
	// Rejoining the thread: the handler gives back the entry and stamps it kept.
	back := NewPartitionFetchState(3, 6, 12, 5, false)
	back.Restore(sp, 5)
	if e, o := back.Sent(); e != 5 || o != 12 || !back.InSession() {
		t.Errorf("a rejoined state: %+v", back)
	}
	back.SetFetchOffset(20)
	back.SetLastFetchedEpoch(6)
	back.SetEpochForTest(7)
	if back.FetchOffset() != 20 || back.LastFetchedEpoch() != 6 || back.Epoch() != 7 {
		t.Errorf("set by hand: %+v", back)
	}
}

// TestPartitionFetchStateLayout pins a fetch state to one 64-byte cache line (its doc says why):
// what the build, the answer's check and its processing read is all in it.
func TestPartitionFetchStateLayout(t *testing.T) {
	var st PartitionFetchState
	if n := unsafe.Sizeof(st); n != 64 {
		t.Errorf("a PartitionFetchState is %d bytes, want 64 (one cache line)", n)
	}
	if end := unsafe.Offsetof(st.listed) + unsafe.Sizeof(st.listed); end > 64 {
		t.Errorf("its last field ends at byte %d", end)
	}
}

// TestFetchStateSessionEntry: the session entry a state rebuilds from its stamps is the one it
// was given, fenced (currentLeaderEpoch its epoch) or not (-1), and a new state's is the zero
// entry, out of the session.
func TestFetchStateSessionEntry(t *testing.T) {
	st := NewPartitionFetchState(3, 5, 10, 4, false)
	if st.Session() != (SessionPartition{}) {
		t.Errorf("a new state's session entry: %+v", st.Session())
	}
	for _, sp := range []SessionPartition{InSession(10, 2, 5, 4), InSession(10, 2, -1, -1), InSession(10, 0, 5, -1)} {
		st.SetSession(sp)
		if e, o := st.Sent(); st.Session() != sp || e != 5 || o != 10 {
			t.Errorf("carried %+v: entry %+v, stamps %d, %d", sp, st.Session(), e, o)
		}
		st.LeaveSession()
		sp.Leave()
		if st.Session() != sp {
			t.Errorf("out of the session: %+v, want %+v", st.Session(), sp)
		}
	}
	var back PartitionFetchState
	back.Restore(InSession(8, 1, -1, 3), 2)
	if e, o := back.Sent(); back.Session() != InSession(8, 1, -1, 3) || e != 2 || o != 8 {
		t.Errorf("restored: entry %+v, stamps %d, %d", back.Session(), e, o)
	}
}
