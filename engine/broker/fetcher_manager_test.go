package broker

import (
	"fmt"
	"slices"
	"testing"
)

// TestFetcherManager: partitions go to the thread their fetcher id names, per leader, each thread
// started with its first partition and kept sorted by leader and id; a thread given a partition
// wakes at once; one holding the same leader epoch keeps its state; removed partitions leave
// every thread and idle threads stop; a moved log start puts the partition on its thread's change
// list; answers find their thread by request id.
func TestFetcherManager(t *testing.T) {
	h := newFakeFollower(0, 1, 2, 3)
	var m FetcherManager
	// Topic "t" with two fetchers: FetcherID("t", p, 2) is 31·hash("t")+p mod 2.
	ids := make([]int32, 4)
	for pid := range int32(4) {
		ids[pid] = FetcherID("t", pid, 2)
	}
	if ids[0] == ids[1] || ids[0] != ids[2] {
		t.Fatalf("fetcher ids %v: the test wants partitions 0 and 2 on one thread, 1 on the other", ids)
	}
	h.now = 5
	m.AddFetcher(h, 2, NewPartitionFetchState(0, 1, 0, -1, false), 2)
	m.AddFetcher(h, 0, NewPartitionFetchState(1, 1, 0, -1, false), 2)
	m.AddFetcher(h, 2, NewPartitionFetchState(2, 1, 0, -1, false), 2)
	m.AddFetcher(h, 2, NewPartitionFetchState(1, 1, 0, -1, false), 2)
	want := []string{fmt.Sprintf("started fetcher %d for 2 (started)", ids[0]), fmt.Sprintf("started fetcher %d for 0 (started)", ids[1]),
		fmt.Sprintf("started fetcher %d for 2 (started)", ids[1])}
	if len(m) != 3 || m[0].Leader() != 0 || m[1].Leader() != 2 || m[2].Leader() != 2 || m[1].ID() > m[2].ID() {
		t.Fatalf("threads not one per (leader, id), sorted: %d threads", len(m))
	}
	if !slices.Equal(h.calls, want) || !slices.Equal(h.wakes, []int64{5, 5, 5}) {
		t.Errorf("started %q and woke at %v; want %q and a wake-up at 5 for each thread", h.calls, h.wakes, want)
	}
	t2 := m.For(2, ids[0])
	if t2 == nil || t2.Len() != 2 || t2.State(0) == nil || t2.State(2) == nil {
		t.Fatalf("the thread for leader 2, fetcher %d, does not hold partitions 0 and 2", ids[0])
	}
	if m.AddFetcher(h, 2, NewPartitionFetchState(0, 1, 99, -1, true), 2); t2.State(0).FetchOffset() != 0 || len(h.wakes) != 3 {
		t.Error("a state at the same leader epoch was replaced, or woke the thread")
	}
	t2.RequestSent(17, 5)
	if m.OfRequest(17) != t2 || m.OfRequest(18) != nil {
		t.Error("an answer does not find the thread that sent its request")
	}
	t2.Build(true, false, true, true, 5, 1, h, nil) // a full build takes the change list
	m.LogStartMoved(2)
	if !slices.Equal(t2.Changes(), []int32{2}) {
		t.Errorf("after partition 2's log start moved, the change list is %v", t2.Changes())
	}
	h.calls = nil
	m.RemoveFetcherForPartitions([]int32{2, 1, 0})
	m.ShutdownIdleFetchers(h)
	if len(m) != 0 || len(h.calls) != 3 {
		t.Errorf("every partition removed: %d threads left, events %q; want none and three stops", len(m), h.calls)
	}
}
