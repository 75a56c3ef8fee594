package broker

import "slices"

// FetcherManager is a broker's ReplicaFetcherManager (AbstractFetcherManager): its fetcher
// threads, one per (leader, fetcher id), sorted by leader then id. A partition goes to the thread
// its fetcher id names (FetcherID: num.replica.fetchers threads per leader); a thread starts when
// its first partition comes and stops when the broker finds it idle. Its zero value is a broker
// with no threads (a new or restarted one).
type FetcherManager []*FetcherThread

// For is the thread fetching from leader with fetcher id id, or nil.
func (m FetcherManager) For(leader, id int32) *FetcherThread {
	for _, t := range m {
		if t.leader == leader && t.id == id {
			return t
		}
	}
	return nil
}

// OfRequest is the thread waiting for the answer to request id, or nil.
func (m FetcherManager) OfRequest(id uint64) *FetcherThread {
	for _, t := range m {
		if t.inflight == id {
			return t
		}
	}
	return nil
}

// Started is the thread for (leader, id), started if there is none.
func (m *FetcherManager) Started(h Follower, leader, id int32) *FetcherThread {
	if t := m.For(leader, id); t != nil {
		return t
	}
	t := new(FetcherThread)
	*t = NewFetcherThread(h.BrokerID(), leader, id)
	*m = append(*m, t)
	slices.SortFunc(*m, func(x, y *FetcherThread) int {
		if x.leader != y.leader {
			return int(x.leader - y.leader)
		}
		return int(x.id - y.id)
	})
	h.Emit(Event{Kind: FetcherAdded, Reason: "started", Arg: [4]int64{int64(id), int64(leader)}})
	return t
}

// AddFetcher gives partition st to the thread for (leader, its fetcher id), starting the thread
// if needed (addFetcherForPartitions). A state already there at the same leader epoch is kept
// (no new truncation); a thread given a partition to fetch works at once.
func (m *FetcherManager) AddFetcher(h Follower, leader int32, st PartitionFetchState, numFetchers int64) {
	tp := h.TP(st.Pid())
	t := m.Started(h, leader, FetcherID(tp.Topic, tp.Partition, numFetchers))
	if t.Add(st, h.Replica(st.Pid())) {
		t.WakeUp(h, h.Now())
	}
}

// RemoveFetcherForPartitions takes partitions off every thread.
func (m FetcherManager) RemoveFetcherForPartitions(pids []int32) {
	sorted := slices.Clone(pids)
	slices.Sort(sorted)
	for _, t := range m {
		t.Remove(sorted)
	}
}

// IdleInflight are the requests in flight of the threads left without partitions, in thread
// order: what their shutdown waits for before 1.1 (heldLeaderAndIsr).
func (m FetcherManager) IdleInflight() []uint64 {
	var ids []uint64
	for _, t := range m {
		if len(t.parts) == 0 && t.inflight != 0 {
			ids = append(ids, t.inflight)
		}
	}
	return ids
}

// ShutdownIdleFetchers stops the threads left without partitions.
func (m *FetcherManager) ShutdownIdleFetchers(h Follower) {
	*m = slices.DeleteFunc(*m, func(t *FetcherThread) bool {
		if len(t.parts) > 0 {
			return false
		}
		h.Emit(Event{Kind: FetcherRemoved, Reason: "stopped", Arg: [4]int64{int64(t.id), int64(t.leader)}})
		return true
	})
}

// LogStartMoved notes that the log start of pid's replica moved (a follower taking the leader's
// log start, a truncation below it): a Fetch carries the follower's log start, so a thread
// fetching it must look at it again. Rare, so the threads are searched.
func (m FetcherManager) LogStartMoved(pid int32) {
	for _, t := range m {
		if st := t.State(pid); st != nil {
			t.NoteChange(st)
		}
	}
}
