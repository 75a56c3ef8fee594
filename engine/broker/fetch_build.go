package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// FetchBuild is one Fetch build's working state (RemoteLeaderEndPoint.buildFetch with
// FetchSessionHandler.Builder): whether the Fetch is full, what the era puts on the wire, the
// earliest backoff deadline of a delayed partition, and the partitions the request lists and
// forgets. The engine makes the request of it (engine/fetch_session_handler.go: buildFetch).
type FetchBuild struct {
	full, fencing, lastEpochs bool
	now                       int64
	next                      int64
	parts                     []protocol.FetchPartition
	forgotten                 []protocol.TP
}

// NewFetchBuild starts a build at now, gathering into parts and forgotten; next is the latest
// deadline it reports. fencing puts the leader epoch on the wire (KIP-320), lastEpochs the last
// fetched epoch (truncate on fetch).
func NewFetchBuild(full, fencing, lastEpochs bool, now, next int64, parts []protocol.FetchPartition, forgotten []protocol.TP) FetchBuild {
	return FetchBuild{full: full, fencing: fencing, lastEpochs: lastEpochs, now: now, next: next, parts: parts, forgotten: forgotten}
}

// Result is what the build gathered: the partitions listed and forgotten, and the earliest
// backoff deadline.
func (bd *FetchBuild) Result() (parts []protocol.FetchPartition, forgotten []protocol.TP, next int64) {
	return bd.parts, bd.forgotten, bd.next
}

// look is one step of Kafka's buildFetch loop (with Builder.add) for st: a partition not ready to
// fetch (Truncating or backing off) leaves the session, forgotten by an incremental Fetch; a
// ready one is in it, listed by a full Fetch or when its fetch data differ from what the session
// last sent (PartitionData.equals), and stamped with what the Fetch carries for it. It reports
// whether the next build must look at st though nothing changes: it is backing off.
func (t *FetcherThread) look(bd *FetchBuild, st *PartitionFetchState) bool {
	if st.truncating || st.delayUntil > bd.now {
		if st.sess.in {
			if !bd.full {
				bd.forgotten = append(bd.forgotten, st.tp)
			}
			st.sess.in = false
			t.inSession--
		}
		if st.truncating {
			return false
		}
		bd.next = min(bd.next, st.delayUntil)
		return true
	}
	logStart, currentEpoch, lastFetched := st.log.LogStartOffset(), int32(-1), int32(-1)
	if bd.fencing {
		currentEpoch = st.epoch // era.requestEpoch
	}
	if bd.lastEpochs {
		lastFetched = st.lastFetchedEpoch
	}
	sp := InSession(st.fetchOffset, logStart, currentEpoch, lastFetched)
	if bd.full || sp != st.sess {
		bd.parts = append(bd.parts, protocol.FetchPartition{TP: st.tp, FetchOffset: st.fetchOffset, LogStartOffset: logStart,
			CurrentLeaderEpoch: currentEpoch, LastFetchedEpoch: lastFetched})
		if !st.sess.in {
			t.inSession++
		}
		st.sess = sp
	}
	st.sentEpoch, st.sentOffset = st.epoch, st.fetchOffset
	return false
}

// WalkAll looks at every partition, in pid order (a full build; every build with the engine's
// followerWalkAll), and starts the change list anew with the partitions backing off.
func (t *FetcherThread) WalkAll(bd *FetchBuild) {
	t.changes = t.changes[:0]
	for i := range t.parts {
		st := &t.parts[i]
		st.listed = t.look(bd, st)
		if st.listed {
			t.changes = append(t.changes, st.pid)
		}
	}
}

// WalkChanges looks at the partitions on the change list, in pid order, each once; the list
// starts anew with those backing off.
func (t *FetcherThread) WalkChanges(bd *FetchBuild) {
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
