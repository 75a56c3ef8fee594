package broker

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestFetcherThread drives a thread's state as the engine's fetcher does: its wake-ups and
// request in flight; then its partitions added (one Truncating), a full build putting the ready
// ones in the session and stamping them, an incremental build looking only at the change list, a
// backoff taking a partition out of the session until it ends, a partition leaving with its
// stamps kept by the session handler and taking them back on rejoining, and a new leader epoch
// keeping what the session last sent.
func TestFetcherThread(t *testing.T) {
	t0 := NewFetcherThread(1, 0, 2)
	th := &t0
	if th.Owner() != 1 || th.Leader() != 0 || th.ID() != 2 || th.InFlight() != 0 || th.WakeAt() != -1 || th.LastSent() != -1 {
		t.Fatalf("a new thread: %+v", th)
	}
	if !th.Wake(5) || th.Wake(7) || !th.Wake(3) || th.Woken(5) || !th.Woken(3) || th.WakeAt() != -1 {
		t.Error("a wake-up at 5 covers 7, not 3; only the one due wakes the thread")
	}
	th.RequestSent(9, 3)
	if th.InFlight() != 9 || th.LastSent() != 3 {
		t.Errorf("request 9 sent at 3: in flight %d, last sent %d", th.InFlight(), th.LastSent())
	}
	th.Answered()
	if th.InFlight() != 0 {
		t.Error("answered, a request is still in flight")
	}
	replicas := make([]Partition, 4)
	var names TopicNames
	names.Add("t", 4)
	tp := func(pid int32) protocol.TP { return protocol.TP{Topic: "t", Partition: pid} }
	for _, pid := range []int32{2, 0, 3, 1} {
		if !th.Add(NewPartitionFetchState(pid, 5, 10, 4, pid == 3), &replicas[pid]) {
			t.Fatalf("partition %d not added", pid)
		}
	}
	if th.Add(NewPartitionFetchState(1, 5, 99, 4, true), &replicas[1]) || th.State(1).FetchOffset() != 10 {
		t.Error("a state at the same leader epoch replaced the one there")
	}
	if th.Len() != 4 || !slices.Equal(th.Pids(), []int32{0, 1, 2, 3}) || th.TruncatingCount() != 1 || len(th.Changes()) != 4 {
		t.Fatalf("after adding: pids %v, %d Truncating, changes %v", th.Pids(), th.TruncatingCount(), th.Changes())
	}
	build := func(full bool, now int64) ([]protocol.FetchPartition, []protocol.TP, int64) {
		bd := newFetchBuild(&names, full, true, true, now, now+100, nil, nil)
		if full {
			th.walkAll(&bd)
		} else {
			th.walkChanges(&bd)
		}
		parts, forgotten, next := bd.result()
		th.SetSentCount(th.InSessionCount())
		return parts, forgotten, next
	}
	parts, _, _ := build(true, 0)
	if len(parts) != 3 || th.InSessionCount() != 3 || th.SentCount() != 3 || len(th.Changes()) != 0 {
		t.Fatalf("a full build: %d listed, %d in the session, changes %v", len(parts), th.InSessionCount(), th.Changes())
	}
	if e, o, ok := th.Carried(0, th.State(0)); !ok || e != 5 || o != 10 {
		t.Errorf("partition 0 carried at (%d, %d, %v), want (5, 10, true)", e, o, ok)
	}
	if _, _, ok := th.Carried(3, th.State(3)); ok {
		t.Error("the Truncating partition was carried")
	}
	// What the Fetch carried, from the stamps and (FetcherRules.WalkAll) from a recorded list, alike.
	th.RecordSent()
	stamped, listed := FetchSent{t: th}, th.TakeFetchSent(true)
	for _, s := range []FetchSent{stamped, listed} {
		if p, ok := s.Of(1, th.State(1)); s.Count() != 3 || !ok || p.Epoch() != 5 || p.FetchOffset() != 10 || s.Has(3) || !s.Has(2) {
			t.Errorf("what the Fetch carried (listed: %v): %d partitions, partition 1 %+v", s.Listed(), s.Count(), p)
		}
	}
	// An OffsetsForLeaderEpoch's list: taken by its answer, the next request records apart.
	th.ClearSent()
	th.AddSent(th.State(3), 4)
	asked := th.TakeSent()
	th.AddSent(th.State(0), 0)
	if p := asked.Of(3); len(asked) != 1 || p == nil || p.AskedEpoch() != 4 || p.Pid() != 3 || asked.Of(0) != nil || th.SentLen() != 1 {
		t.Errorf("the list taken: %+v, the next one %d long", asked, th.SentLen())
	}
	// Nothing changed: an incremental build lists nothing.
	if parts, forgotten, _ := build(false, 1); len(parts)+len(forgotten) != 0 {
		t.Errorf("an incremental build with nothing changed: %v, %v", parts, forgotten)
	}
	// Partition 0 fetched on, partition 3 done truncating, partition 1 backing off until 50.
	th.State(0).Fetched(12, 5)
	th.NoteChange(th.State(0))
	th.SetTruncating(th.State(3), false)
	th.State(1).SetDelayUntil(50)
	th.NoteChange(th.State(1))
	parts, forgotten, next := build(false, 2)
	if len(parts) != 2 || parts[0].FetchOffset != 12 || parts[1].TP != tp(3) || !slices.Equal(forgotten, []protocol.TP{tp(1)}) ||
		next != 50 || th.TruncatingCount() != 0 || !slices.Equal(th.Changes(), []int32{1}) {
		t.Fatalf("an incremental build: %v, forgotten %v, next %d, changes %v", parts, forgotten, next, th.Changes())
	}
	if parts, _, _ := build(false, 50); len(parts) != 1 || parts[0].TP != tp(1) || len(th.Changes()) != 0 {
		t.Errorf("the backoff over: %v, changes %v", parts, th.Changes())
	}
	// Partition 2 leaves: the handler keeps what the Fetch in flight carried, and gives it back.
	th.Remove([]int32{2})
	if th.State(2) != nil || th.Len() != 3 || th.InSessionCount() != 3 {
		t.Fatalf("after partition 2 left: %d partitions, %d in the session", th.Len(), th.InSessionCount())
	}
	if e, o, ok := th.Carried(2, nil); !ok || e != 5 || o != 10 {
		t.Errorf("the gone partition carried (%d, %d, %v)", e, o, ok)
	}
	th.Add(NewPartitionFetchState(2, 5, 10, 4, false), &replicas[2])
	if st := th.State(2); !st.InSession() || th.InSessionCount() != 4 {
		t.Errorf("rejoined: in the session %v, %d counted", st.InSession(), th.InSessionCount())
	}
	// A new leader epoch: the state is replaced, the session's entry kept, the change noted.
	th.Add(NewPartitionFetchState(0, 6, 12, 5, false), &replicas[0])
	if st := th.State(0); st.Epoch() != 6 || !st.InSession() || !st.Listed() {
		t.Errorf("at a new epoch: %+v", st)
	}
	// Partition 2 came back with the fetch data the session last sent: not listed.
	if parts, _, _ := build(false, 51); len(parts) != 1 || parts[0].CurrentLeaderEpoch != 6 {
		t.Errorf("after the new epoch and the rejoin: %v", parts)
	}
	th.RemovePartition(0)
	if th.State(0) != nil || !slices.Equal(th.Pids(), []int32{1, 2, 3}) {
		t.Errorf("after removing partition 0: pids %v", th.Pids())
	}
}

// TestSearchPids: the guessing search answers as slices.BinarySearch does, for pids evenly
// spread (the guess right), uneven, and every target in and around them.
func TestSearchPids(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := rng.IntN(40)
		var pids []int32
		next := int32(rng.IntN(5))
		for range n {
			pids = append(pids, next)
			if round%2 == 0 {
				next += 7 // evenly spread
			} else {
				next += 1 + int32(rng.IntN(30))
			}
		}
		for pid := int32(0); pid <= next+3; pid++ {
			wi, wok := slices.BinarySearch(pids, pid)
			if i, ok := searchPids(pids, pid); i != wi || ok != wok {
				t.Fatalf("searchPids(%v, %d) = %d, %v; want %d, %v", pids, pid, i, ok, wi, wok)
			}
		}
	}
}

// TestFetcherThreadIndex: index, which checks its guess on the states, finds what searchPids
// finds in the pids, for partitions evenly spread or not, present or not.
func TestFetcherThreadIndex(t *testing.T) {
	for _, pids := range [][]int32{{}, {4}, {1, 7}, {0, 3, 6, 9, 12}, {2, 3, 10, 11, 40, 41, 90}, {5, 6, 7, 8}} {
		var th FetcherThread
		for _, pid := range pids {
			th.Add(NewPartitionFetchState(pid, 0, 0, -1, false), nil)
		}
		for pid := int32(-1); pid < 95; pid++ {
			i, ok := th.index(pid)
			wi, wok := searchPids(pids, pid)
			if i != wi || ok != wok || (ok && th.At(i).Pid() != pid) {
				t.Errorf("pids %v: index(%d) = %d, %v; searchPids: %d, %v", pids, pid, i, ok, wi, wok)
			}
		}
	}
}
