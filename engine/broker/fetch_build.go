package broker

import (
	"cmp"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// fetchBuild is one Fetch build's working state (RemoteLeaderEndPoint.buildFetch with
// FetchSessionHandler.Builder): whether the Fetch is full, what the era puts on the wire, the
// earliest backoff deadline of a delayed partition, and the partitions the request lists and
// forgets. FetcherThread.Build runs one; BuildFetch (fetcher_work.go) makes the request of what
// it gathered.
type fetchBuild struct {
	names                     PartitionNamer
	full, fencing, lastEpochs bool
	now                       int64
	next                      int64
	parts                     []protocol.FetchPartition
	forgotten                 []protocol.TP
	// orders are the listed partitions' places in the thread's order (a full build's).
	orders []uint64
}

// newFetchBuild starts a build at now, gathering into parts and forgotten; next is the latest
// deadline it reports. fencing puts the leader epoch on the wire (KIP-320), lastEpochs the last
// fetched epoch (truncate on fetch).
func newFetchBuild(names PartitionNamer, full, fencing, lastEpochs bool, now, next int64, parts []protocol.FetchPartition, forgotten []protocol.TP) fetchBuild {
	return fetchBuild{names: names, full: full, fencing: fencing, lastEpochs: lastEpochs, now: now, next: next, parts: parts, forgotten: forgotten}
}

// Result is what the build gathered: the partitions listed and forgotten, and the earliest
// backoff deadline.
func (bd *fetchBuild) result() (parts []protocol.FetchPartition, forgotten []protocol.TP, next int64) {
	return bd.parts, bd.forgotten, bd.next
}

// look is one step of Kafka's buildFetch loop (with Builder.add) for st: a partition not ready to
// fetch (Truncating or backing off) leaves the session, forgotten by an incremental Fetch; a
// ready one is in it, listed by a full Fetch or when its fetch data differ from what the session
// last sent (PartitionData.equals), and stamped with what the Fetch carries for it. It reports
// whether the next build must look at st though nothing changes: it is backing off.
func (t *FetcherThread) look(bd *fetchBuild, st *PartitionFetchState) bool {
	if st.truncating || st.delayUntil > bd.now {
		if st.in {
			if !bd.full {
				bd.forgotten = append(bd.forgotten, bd.names.TP(st.pid))
			}
			st.in = false
			t.inSession--
		}
		if st.truncating {
			return false
		}
		bd.next = min(bd.next, st.delayUntil)
		return true
	}
	logStart, currentEpoch, lastFetched := st.replica.log.LogStartOffset(), int32(-1), int32(-1)
	if bd.fencing {
		currentEpoch = st.epoch // era.requestEpoch
	}
	if bd.lastEpochs {
		lastFetched = st.lastFetchedEpoch
	}
	// The session's entry differs from sp = InSession(st.fetchOffset, logStart, currentEpoch,
	// lastFetched) (st.Session() != sp, read field by field from the stamps it is kept in).
	if bd.full || !st.in || st.sentOffset != st.fetchOffset || st.sentLogStart != logStart ||
		st.sentLastFetched != lastFetched || st.sentCurrentEpoch() != currentEpoch {
		bd.parts = append(bd.parts, protocol.FetchPartition{TP: bd.names.TP(st.pid), FetchOffset: st.fetchOffset,
			LogStartOffset: logStart, CurrentLeaderEpoch: currentEpoch, LastFetchedEpoch: lastFetched})
		if !st.in {
			t.inSession++
		}
	}
	// st.SetSession(sp): the session entry sp (unchanged if it was already), stamped.
	st.sentEpoch, st.sentOffset, st.sentLogStart, st.sentLastFetched = st.epoch, st.fetchOffset, logStart, lastFetched
	st.in, st.unfenced = true, currentEpoch != st.epoch
	return false
}

// walkAll looks at every partition, in pid order (a full build; every build with the engine's
// FetcherRules.WalkAll), and starts the change list anew with the partitions backing off.
func (t *FetcherThread) walkAll(bd *fetchBuild) {
	t.changes = t.changes[:0]
	for i := range t.parts {
		st := &t.parts[i]
		n := len(bd.parts)
		st.listed = t.look(bd, st)
		if st.listed {
			t.changes = append(t.changes, st.pid)
		}
		if bd.full && len(bd.parts) > n {
			bd.orders = append(bd.orders, t.orders[i])
		}
	}
	if bd.full && !slices.IsSorted(bd.orders) {
		// A full Fetch lists its partitions in the thread's order (partitionStates, which
		// buildFetch walks; FetchSessionHandler.Builder keeps it), not in pid order.
		idx := make([]int, len(bd.orders))
		for k := range idx {
			idx[k] = k
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(bd.orders[a], bd.orders[b]) })
		sorted := make([]protocol.FetchPartition, len(idx))
		for k, j := range idx {
			sorted[k] = bd.parts[j]
		}
		copy(bd.parts, sorted)
	}
}

// walkChanges looks at the partitions on the change list, in pid order, each once; the list
// starts anew with those backing off.
func (t *FetcherThread) walkChanges(bd *fetchBuild) {
	work := t.changes
	t.changes, t.changesSpare = t.changesSpare[:0], nil
	slices.Sort(work)
	prev := int32(-1) // pids are not negative
	for _, pid := range work {
		if pid == prev {
			continue // left the thread and came back: listed twice
		}
		prev = pid
		st := t.State(pid)
		if st == nil {
			continue // left the thread
		}
		st.listed = t.look(bd, st)
		if st.listed {
			t.changes = append(t.changes, pid)
		}
	}
	t.changesSpare = work[:0]
}

// PartitionNamer translates between a partition's name on the wire and its pid (the broker's
// TopicNames: a Follower is one).
type PartitionNamer interface {
	PidOf(tp protocol.TP) int32
	TP(pid int32) protocol.TP
}

// Build is RemoteLeaderEndPoint.buildFetch with FetchSessionHandler.Builder over the thread's
// partitions: those it can fetch at now become the session (stamped with what the Fetch carries),
// the Fetch lists those a full Fetch must (all) or an incremental one must (added or changed),
// and forgets the partitions that left (in pid order: names, asked only when some left the
// thread). Before fetch sessions (!sessions) every Fetch is full. A full build looks at every
// partition; an incremental one only at those on the change list, unless walkAll (the engine's
// FetcherRules.WalkAll, which also records the list of what the Fetch carries). fencing and
// lastEpochs are what the era puts on the wire; backoff is replica.fetch.backoff.ms (at least 1).
// It reports the lists, the earliest backoff deadline of a delayed partition, and whether there
// is a Fetch to send (Kafka: not with an empty session and nothing to forget). An incremental
// Fetch's lists are gathered in the thread's buffers, then copied out at their size, the
// partitions into into's storage when they fit (the caller's, allocated with its request: a
// steady incremental Fetch usually carries one partition), else into a new slice: the request
// is shared once sent.
func (t *FetcherThread) Build(sessions, walkAll, fencing, lastEpochs bool, now, backoff int64, names PartitionNamer,
	into []protocol.FetchPartition) (parts []protocol.FetchPartition, forgotten []protocol.TP, next int64, ok bool) {
	h := &t.session
	full := !sessions || h.Full()
	parts = t.partsBuf[:0]
	if full {
		parts = make([]protocol.FetchPartition, 0, len(t.parts))
	}
	bd := newFetchBuild(names, full, fencing, lastEpochs, now, now+backoff, parts, t.forgetBuf[:0])
	bd.orders = t.orderBuf[:0]
	if full || walkAll {
		t.walkAll(&bd)
		if walkAll {
			t.RecordSent()
		}
	} else {
		t.walkChanges(&bd)
	}
	parts, forgotten, next = bd.result()
	t.orderBuf = bd.orders[:0]
	if !full && h.HasGone() {
		forgotten = h.AppendGone(forgotten, names)
		// The request lists partitions in pid order (Kafka: added, then altered).
		slices.SortFunc(forgotten, func(a, b protocol.TP) int { return cmp.Compare(names.PidOf(a), names.PidOf(b)) })
	}
	h.Built()
	if !full {
		t.partsBuf, t.forgetBuf = parts[:0], forgotten[:0]
		if n := len(parts); n > 0 && n <= cap(into) {
			parts = append(into[:0:n], parts...)
		} else {
			parts = slices.Clone(parts) // nil if empty
		}
		forgotten = slices.Clone(forgotten)
	}
	t.sentCount = t.inSession
	if walkAll {
		t.sentCount = len(t.sent) // the reference counts its list
	}
	return parts, forgotten, next, t.sentCount > 0 || len(forgotten) > 0
}
