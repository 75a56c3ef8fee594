package broker

import "testing"

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
	st.Stamp()
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
	back.Restore(sp, 5, 12)
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
