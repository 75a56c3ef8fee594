package broker

import "slices"

// SentPartition is what a fetcher thread remembers of a partition in its request in flight
// (Kafka's fetcher keeps its request's partition data): the answer is applied only if the
// partition's state is still the one the request was built from. A Fetch's is stamped on the
// fetch states instead (FetchSent); OffsetsForLeaderEpoch and ListOffsets keep a list.
type SentPartition struct {
	pid         int32
	epoch       int32 // the follower's leader epoch when it sent (whatever the era puts on the wire)
	fetchOffset int64
	askedEpoch  int32 // OffsetsForLeaderEpoch: the epoch asked about
}

func (p *SentPartition) Pid() int32         { return p.pid }
func (p *SentPartition) Epoch() int32       { return p.epoch }
func (p *SentPartition) FetchOffset() int64 { return p.fetchOffset }
func (p *SentPartition) AskedEpoch() int32  { return p.askedEpoch }

// SentPartitions is a request's list, in pid order.
type SentPartitions []SentPartition

// Of is the entry for pid, or nil.
func (s SentPartitions) Of(pid int32) *SentPartition {
	i, found := slices.BinarySearchFunc(s, pid, func(s SentPartition, pid int32) int { return int(s.pid - pid) })
	if !found {
		return nil
	}
	return &s[i]
}

// ClearSent starts the list of the next request; AddSent adds a partition to it (in pid order),
// with the epoch asked about for an OffsetsForLeaderEpoch; SentLen is its length.
func (t *FetcherThread) ClearSent() { t.sent = t.sent[:0] }
func (t *FetcherThread) AddSent(st *PartitionFetchState, askedEpoch int32) {
	t.sent = append(t.sent, SentPartition{pid: st.pid, epoch: st.epoch, fetchOffset: st.fetchOffset, askedEpoch: askedEpoch})
}
func (t *FetcherThread) SentLen() int { return len(t.sent) }

// TakeSent hands an OffsetsForLeaderEpoch or ListOffsets answer's handler (a Fetch's, with the
// FetcherRules.WalkAll) what its request carried; the thread's next request records into
// the other buffer.
func (t *FetcherThread) TakeSent() SentPartitions {
	s := t.sent
	t.sent, t.spare = t.spare[:0], s
	return s
}

// RecordSent lists what the Fetch just built carries, as Kafka's thread keeps its request's
// partition data (FetcherRules.WalkAll; the engine reads the stamps instead).
func (t *FetcherThread) RecordSent() {
	t.sent = t.sent[:0]
	for i := range t.parts {
		if st := &t.parts[i]; st.in {
			t.AddSent(st, 0)
		}
	}
}

// FetchSent is what the Fetch in flight carried, read from the fetch states' stamps, or, with the
// FetcherRules.WalkAll, from the list its build recorded.
type FetchSent struct {
	t       *FetcherThread
	list    SentPartitions
	walkAll bool
}

// TakeFetchSent hands a Fetch answer's handler what its request carried.
func (t *FetcherThread) TakeFetchSent(walkAll bool) FetchSent {
	if walkAll {
		return FetchSent{t: t, list: t.TakeSent(), walkAll: true}
	}
	return FetchSent{t: t}
}

// Listed reports whether it reads a recorded list (FetcherRules.WalkAll) rather than stamps.
func (s FetchSent) Listed() bool { return s.walkAll }

// Count is how many partitions the Fetch carried.
func (s FetchSent) Count() int {
	if s.walkAll {
		return len(s.list)
	}
	return s.t.sentCount
}

// Of is what the Fetch carried for pid, whose fetch state is st (nil: not in the thread now), and
// whether it carried pid.
func (s FetchSent) Of(pid int32, st *PartitionFetchState) (SentPartition, bool) {
	if s.walkAll {
		if p := s.list.Of(pid); p != nil {
			return *p, true
		}
		return SentPartition{}, false
	}
	if epoch, offset, ok := s.t.Carried(pid, st); ok {
		return SentPartition{pid: pid, epoch: epoch, fetchOffset: offset}, true
	}
	return SentPartition{}, false
}

// Has reports whether the Fetch carried pid.
func (s FetchSent) Has(pid int32) bool {
	var st *PartitionFetchState
	if !s.walkAll {
		st = s.t.State(pid)
	}
	_, ok := s.Of(pid, st)
	return ok
}
