package broker

import "github.com/highwater-sim/highwater/engine/commitlog"

// PartitionFetchState is a follower's fetch state for one partition in its fetcher thread
// (AbstractFetcherThread's PartitionFetchState): the fetch offset, the leader epoch it fetches
// at (currentLeaderEpoch), the last fetched epoch, whether it is Truncating, and its backoff
// deadline. The engine's thread also keeps on it its entry in the thread's fetch session
// (SessionPartition), whether it is on the thread's change list, and what the last Fetch build
// that found it ready carried for it (its stamps): engine/fetcher_changes.go. The thread's
// counts of Truncating and in-session partitions are the engine's for now, so the methods that
// change those report whether they did.
//
// It is one 64-byte cache line (TestPartitionFetchStateLayout), and in a thread's array (its
// size a multiple of 64 bytes, so that the allocator aligns it to 64) each state is one line:
// the build (FetcherThread.look), the answer's check (FetchSent.Of) and its processing
// (processPartitionData) each read one line, cold by then, where two lines cost two misses. To
// fit, it keeps no partition name (a Fetch's is found from the pid in the broker's topic table,
// TopicNames, when the build lists it), and its session entry and stamps share their fields:
// the build writes both from one look at it (the session's fetch offset is the stamped one, its
// currentLeaderEpoch the stamped epoch or -1), so Session rebuilds the entry from them.
type PartitionFetchState struct {
	pid              int32
	epoch            int32 // currentLeaderEpoch
	lastFetchedEpoch int32 // -1: none
	// sentEpoch and sentOffset are its leader epoch and fetch offset when the last Fetch build
	// found it ready: while in the session, what the Fetch in flight carried for it. sentOffset
	// is also the fetch offset of its session entry.
	sentEpoch   int32
	fetchOffset int64
	delayUntil  int64 // backoff deadline
	// replica is the broker's own replica (a Fetch carries its log start; an answer appends to
	// its log and moves its HW): set when the thread takes the state (FetcherThread.Add). A
	// Partition never moves (it lives in the broker's slab), so the answers reach it without a
	// lookup by pid.
	replica    *Partition
	sentOffset int64
	// The rest of its session entry (SessionPartition): the log start and last fetched epoch the
	// session last sent, whether it is in the session, and whether the entry's currentLeaderEpoch
	// is -1 (unfenced: the era put none on the wire) rather than sentEpoch.
	sentLogStart    int64
	sentLastFetched int32
	in              bool
	unfenced        bool
	truncating      bool
	listed          bool // on the thread's change list
}

// NewPartitionFetchState is partition pid's state as addPartitions takes it (InitialFetchState):
// at leader epoch epoch, fetching from fetchOffset, Truncating or not; lastFetchedEpoch -1 for
// none. It is out of the session, off the change list, with no backoff.
func NewPartitionFetchState(pid, epoch int32, fetchOffset int64, lastFetchedEpoch int32, truncating bool) PartitionFetchState {
	return PartitionFetchState{pid: pid, epoch: epoch, fetchOffset: fetchOffset, lastFetchedEpoch: lastFetchedEpoch,
		truncating: truncating}
}

func (st *PartitionFetchState) Pid() int32              { return st.pid }
func (st *PartitionFetchState) Epoch() int32            { return st.epoch }
func (st *PartitionFetchState) LastFetchedEpoch() int32 { return st.lastFetchedEpoch }
func (st *PartitionFetchState) FetchOffset() int64      { return st.fetchOffset }
func (st *PartitionFetchState) DelayUntil() int64       { return st.delayUntil }
func (st *PartitionFetchState) Truncating() bool        { return st.truncating }

// Listed reports whether it is on the thread's change list.
func (st *PartitionFetchState) Listed() bool { return st.listed }

// Session is its entry in the thread's fetch session; InSession whether that entry is in it.
func (st *PartitionFetchState) Session() SessionPartition {
	return SessionPartition{in: st.in, fetchOffset: st.sentOffset, logStartOffset: st.sentLogStart,
		currentLeaderEpoch: st.sentCurrentEpoch(), lastFetchedEpoch: st.sentLastFetched}
}

// sentCurrentEpoch is its session entry's currentLeaderEpoch.
func (st *PartitionFetchState) sentCurrentEpoch() int32 {
	if st.unfenced {
		return -1
	}
	return st.sentEpoch
}
func (st *PartitionFetchState) InSession() bool { return st.in }

// Sent is what the last build that found it ready carried for it (its stamps).
func (st *PartitionFetchState) Sent() (epoch int32, fetchOffset int64) {
	return st.sentEpoch, st.sentOffset
}

// Ready reports whether a Fetch at now carries it: not Truncating, not backing off.
func (st *PartitionFetchState) Ready(now int64) bool { return !st.truncating && st.delayUntil <= now }

// SetFetchOffset and SetLastFetchedEpoch move where it fetches from (after an append or a
// truncation); Fetched does both.
func (st *PartitionFetchState) SetFetchOffset(o int64)       { st.fetchOffset = o }
func (st *PartitionFetchState) SetLastFetchedEpoch(e int32)  { st.lastFetchedEpoch = e }
func (st *PartitionFetchState) Fetched(o int64, e int32)     { st.fetchOffset, st.lastFetchedEpoch = o, e }
func (st *PartitionFetchState) SetDelayUntil(deadline int64) { st.delayUntil = deadline }

// SetTruncating moves it into or out of the Truncating state, and reports whether it moved.
func (st *PartitionFetchState) SetTruncating(truncating bool) bool {
	if st.truncating == truncating {
		return false
	}
	st.truncating = truncating
	return true
}

// List puts it on the change list and reports whether it was off it.
func (st *PartitionFetchState) List() bool {
	if st.listed {
		return false
	}
	st.listed = true
	return true
}

// LeaveSession takes it out of the session (not ready to fetch) and reports whether it was in.
// The fetch data last sent stay (SessionPartition.Leave).
func (st *PartitionFetchState) LeaveSession() bool {
	if !st.in {
		return false
	}
	st.in = false
	return true
}

// SetSession makes sp its session entry and records that the Fetch being built carries it as it
// is now (its stamps): sp sends its fetch offset, and sp's currentLeaderEpoch is its epoch or -1
// (what the era puts on the wire), as FetcherThread.look makes it.
func (st *PartitionFetchState) SetSession(sp SessionPartition) {
	st.restore(sp, st.epoch)
}

// Restore gives it back a session entry and the epoch stamped with it while it was away from the
// thread (FetchSessionHandler.Rejoin); the stamped fetch offset is the entry's.
func (st *PartitionFetchState) Restore(sess SessionPartition, sentEpoch int32) {
	st.restore(sess, sentEpoch)
}

func (st *PartitionFetchState) restore(sess SessionPartition, sentEpoch int32) {
	st.sentEpoch, st.sentOffset, st.sentLogStart, st.sentLastFetched = sentEpoch, sess.fetchOffset, sess.logStartOffset, sess.lastFetchedEpoch
	st.in, st.unfenced = sess.in, sess.currentLeaderEpoch != sentEpoch
}

// Succeed makes st the partition's state in place of old, its state at another leader epoch: the
// session still has what it last sent, the Fetch in flight what it carried, and the change list
// still holds it if it held old.
func (st *PartitionFetchState) Succeed(old *PartitionFetchState) {
	st.sentEpoch, st.sentOffset, st.sentLogStart, st.sentLastFetched = old.sentEpoch, old.sentOffset, old.sentLogStart, old.sentLastFetched
	st.in, st.unfenced, st.listed = old.in, old.unfenced, old.listed
}

// InitialFetchState is where a new follower of pid at leader epoch currentEpoch starts fetching
// (AbstractFetcherThread.addPartitions with ReplicaManager.initialFetchOffset): with
// truncate-on-fetch it starts Fetching at its LEO with its latest epoch as lastFetchedEpoch;
// otherwise (or with an empty epoch cache) it starts Truncating at its HW.
func InitialFetchState(log *commitlog.Log, pid, currentEpoch int32, truncateOnFetch bool) PartitionFetchState {
	latest := log.Cache().Latest()
	if truncateOnFetch && latest != commitlog.Undefined {
		return NewPartitionFetchState(pid, currentEpoch, log.LogEndOffset(), latest, false)
	}
	return NewPartitionFetchState(pid, currentEpoch, log.HighWatermark(), -1, true)
}
