package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// FetcherThread is a replica fetcher thread's partition state (AbstractFetcherThread's
// partitionStates, with its FetchSessionHandler): its partitions' PartitionFetchStates in pid
// order, with a pid index, and what keeps a turn's cost to what changed (the engine's
// fetcher_changes.go says why): the change list, how many partitions are Truncating and in the
// session, and how many the Fetch in flight carried, and which request is in flight and its
// wake-up. Its loop and its answers' handling are fetcher_work.go's and fetcher_answers.go's.
type FetcherThread struct {
	// owner is the broker the thread runs on, leader the one it fetches from, id its fetcher id
	// (FetcherID).
	owner, leader, id int32
	inflight          uint64 // the request in flight, 0 for none
	wakeAt            int64  // the pending wake-up, -1 for none
	lastSent          int64  // when the last request left (-1: never)
	// sent is an OffsetsForLeaderEpoch or ListOffsets request in flight's partitions, in pid
	// order (a Fetch's too, with FetcherRules.WalkAll); spare is a second buffer, so an
	// answer's handler can read what was sent while it sends the next request.
	sent, spare []SentPartition
	// partsBuf and forgetBuf are an incremental Fetch's buffers (Build).
	partsBuf  []protocol.FetchPartition
	forgetBuf []protocol.TP
	// parts is sorted by pid; pids are their pids, in the same order: State searches them, which
	// touches two cache lines where a search of parts would touch one per probe.
	parts []PartitionFetchState
	pids  []int32
	// orders are the partitions' places in Kafka's partitionStates, a LinkedHashMap whose
	// updateAndMoveToEnd puts a partition last (added, answered with records, delayed, reset
	// after OFFSET_OUT_OF_RANGE): side by side with parts, a stamp from nextOrder each. A full
	// Fetch lists its partitions in that order (Build), and the leader reads them so under
	// replica.fetch.response.max.bytes.
	orders    []uint64
	nextOrder uint64
	orderBuf  []uint64 // a full build's scratch (fetchBuild.orders)
	session   FetchSessionHandler
	// changes lists pids, each once per fetch state on it (listed); changesSpare is its second
	// buffer.
	changes, changesSpare []int32
	truncatingCount       int
	inSession, sentCount  int
	// sentNames hands an answer's session handler what the Fetch carried, and answered is what
	// its incremental check resolved, for the answer's own handling (fetcher_answers.go).
	sentNames sentByName
	answered  []answeredPartition
	// dead: the thread's run() ended (ShutdownableThread.run returned): on a fatal error
	// (Follower.Exit), or, before 2.3, on an error processing a partition's data
	// (FetcherRules.ErrorKillsThread). It does no more work, but stays its manager's thread for
	// its leader and fetcher id, so what the manager gives it is never fetched, as with Kafka's
	// dead thread, until ShutdownIdleFetchers finds it without partitions.
	dead bool
}

// NewFetcherThread is the thread of broker owner fetching from leader with fetcher id id: no
// partitions, no request in flight, no wake-up, no session.
func NewFetcherThread(owner, leader, id int32) FetcherThread {
	return FetcherThread{owner: owner, leader: leader, id: id, wakeAt: -1, lastSent: -1}
}

func (t *FetcherThread) Owner() int32 { return t.owner }

// Died reports that the thread's run() ended (dead): it fetches nothing any more.
func (t *FetcherThread) Died() bool    { return t.dead }
func (t *FetcherThread) Leader() int32 { return t.leader }
func (t *FetcherThread) ID() int32     { return t.id }

// InFlight is the id of the request in flight, 0 for none; LastSent when the last request left
// (-1: never). RequestSent records request id leaving at now, Answered that its answer (or failure)
// came.
func (t *FetcherThread) InFlight() uint64 { return t.inflight }
func (t *FetcherThread) LastSent() int64  { return t.lastSent }
func (t *FetcherThread) RequestSent(id uint64, now int64) {
	t.inflight, t.lastSent = id, now
}
func (t *FetcherThread) Answered() { t.inflight = 0 }

// WakeAt is the pending wake-up, -1 for none. Wake asks for one at at and reports whether a new
// one must be scheduled (none pending at or before at); Woken takes the wake-up due at now, and
// reports false for a stale one.
func (t *FetcherThread) WakeAt() int64 { return t.wakeAt }
func (t *FetcherThread) Wake(at int64) bool {
	if t.wakeAt >= 0 && t.wakeAt <= at {
		return false
	}
	t.wakeAt = at
	return true
}
func (t *FetcherThread) Woken(now int64) bool {
	if t.wakeAt != now {
		return false
	}
	t.wakeAt = -1
	return true
}

// Len is how many partitions the thread fetches; At the i-th, in pid order.
func (t *FetcherThread) Len() int                      { return len(t.parts) }
func (t *FetcherThread) At(i int) *PartitionFetchState { return &t.parts[i] }

// State is partition pid's state, nil if the thread does not fetch it.
func (t *FetcherThread) State(pid int32) *PartitionFetchState {
	i, found := t.index(pid)
	if !found {
		return nil
	}
	return &t.parts[i]
}

// index is where pid's state is in parts, and whether the thread has it: searchPids, with its
// first guess checked on the state there rather than on pids. The guess is usually right, and
// the state's line is read next anyway, where pids' line would be one more cold line (a miss per
// answered or changed partition).
func (t *FetcherThread) index(pid int32) (int, bool) {
	pids := t.pids
	if n := len(pids); n > 2 && len(t.parts) == n {
		if lo, hi := pids[0], pids[n-1]; lo < pid && pid < hi {
			g := int(int64(pid-lo) * int64(n-1) / int64(hi-lo)) // as searchPids guesses
			if t.parts[g].pid == pid {
				return g, true
			}
		}
	}
	return searchPids(pids, pid)
}

// Session is the thread's FetchSessionHandler.
func (t *FetcherThread) Session() *FetchSessionHandler { return &t.session }

// TruncatingCount and InSessionCount are the thread's counts of Truncating partitions and of
// partitions in the session; SentCount how many partitions the Fetch in flight carried.
func (t *FetcherThread) TruncatingCount() int { return t.truncatingCount }
func (t *FetcherThread) InSessionCount() int  { return t.inSession }
func (t *FetcherThread) SentCount() int       { return t.sentCount }

// SetSentCount records how many partitions the Fetch just built carries.
func (t *FetcherThread) SetSentCount(n int) { t.sentCount = n }

// Pids and Changes are the pid index and the change list, for tests; not to be changed.
func (t *FetcherThread) Pids() []int32    { return t.pids }
func (t *FetcherThread) Changes() []int32 { return t.changes }

// Add gives st to the thread (addPartitions), fetching into r (the broker's own replica); the
// partition's name is not kept (a Fetch build finds it from the pid: PartitionFetchState). A
// state already there at the same leader epoch is kept (no re-truncation) and Add reports false; one at another epoch is replaced, keeping what the session last sent and what the Fetch
// in flight carried. A partition new to the thread takes back its session entry if it left since
// the last build.
func (t *FetcherThread) Add(st PartitionFetchState, r *Partition) bool {
	st.replica = r
	i, found := searchPids(t.pids, st.pid)
	if found {
		old := &t.parts[i]
		t.orders[i] = t.stamp() // addPartitions: updateAndMoveToEnd, kept state or not
		if old.epoch == st.epoch {
			return false
		}
		st.Succeed(old)
		if old.truncating {
			t.truncatingCount--
		}
		if st.truncating {
			t.truncatingCount++
		}
		*old = st
		t.NoteChange(old)
		return true
	}
	st.listed = false
	if sess, epoch, ok := t.session.Rejoin(st.pid); ok {
		st.Restore(sess, epoch)
	}
	t.parts = slices.Insert(t.parts, i, st)
	t.pids = slices.Insert(t.pids, i, st.pid)
	t.orders = slices.Insert(t.orders, i, t.stamp())
	added := &t.parts[i]
	if added.truncating {
		t.truncatingCount++
	}
	if added.in {
		t.inSession++
	}
	t.NoteChange(added)
	return true
}

// Reserve makes room for n more partitions, so that adding a batch of them (a LeaderAndIsr's)
// grows the thread's arrays once.
func (t *FetcherThread) Reserve(n int) {
	t.parts = slices.Grow(t.parts, n)
	t.pids = slices.Grow(t.pids, n)
	t.orders = slices.Grow(t.orders, n)
	t.changes = slices.Grow(t.changes, n)
}

// Remove takes the partitions in pids (sorted) off the thread; RemovePartition takes one. Each
// leaves the session handler its entry; its pid may stay on the change list (a walk skips a pid
// the thread no longer has).
func (t *FetcherThread) Remove(sorted []int32) {
	t.removeIf(func(pid int32) bool {
		_, found := slices.BinarySearch(sorted, pid)
		return found
	})
}

func (t *FetcherThread) RemovePartition(pid int32) {
	t.removeIf(func(p int32) bool { return p == pid })
}

// removeIf takes off the partitions whose pid gone reports, with their orders.
func (t *FetcherThread) removeIf(gone func(pid int32) bool) {
	kept := 0
	for i := range t.parts {
		if gone(t.parts[i].pid) {
			t.leaving(&t.parts[i])
			continue
		}
		t.parts[kept], t.orders[kept] = t.parts[i], t.orders[i]
		kept++
	}
	clear(t.parts[kept:])
	t.parts, t.orders = t.parts[:kept], t.orders[:kept]
	t.indexPids()
}

// stamp is the next place at the end of partitionStates.
func (t *FetcherThread) stamp() uint64 {
	t.nextOrder++
	return t.nextOrder
}

// MoveToEnd is PartitionStates.updateAndMoveToEnd for st: it goes last in the thread's order.
func (t *FetcherThread) MoveToEnd(st *PartitionFetchState) {
	if i, found := t.index(st.pid); found {
		t.orders[i] = t.stamp()
	}
}

// Order is partition pid's place in the thread's order (0 if it is not in the thread).
func (t *FetcherThread) Order(pid int32) uint64 {
	if i, found := t.index(pid); found {
		return t.orders[i]
	}
	return 0
}

func (t *FetcherThread) leaving(st *PartitionFetchState) {
	if st.truncating {
		t.truncatingCount--
	}
	if st.in {
		t.inSession--
	}
	t.session.Leave(st.pid, st.Session(), st.sentEpoch)
}

// indexPids makes pids the pids of parts again, after partitions left.
func (t *FetcherThread) indexPids() {
	if len(t.pids) == len(t.parts) {
		return // none left
	}
	t.pids = t.pids[:0]
	for i := range t.parts {
		t.pids = append(t.pids, t.parts[i].pid)
	}
}

// NoteChange puts st on the change list: its fetch data or readiness may have changed.
func (t *FetcherThread) NoteChange(st *PartitionFetchState) {
	if st.List() {
		t.changes = append(t.changes, st.pid)
	}
}

// SetTruncating moves st into or out of the Truncating state, counted, and notes the change.
func (t *FetcherThread) SetTruncating(st *PartitionFetchState, truncating bool) {
	if st.SetTruncating(truncating) {
		if truncating {
			t.truncatingCount++
		} else {
			t.truncatingCount--
		}
	}
	t.NoteChange(st)
}

// Carried is what the Fetch in flight carried for pid, read from its stamps (st: its state now,
// nil if it left the thread, when the session handler kept them), and whether it carried pid.
func (t *FetcherThread) Carried(pid int32, st *PartitionFetchState) (epoch int32, fetchOffset int64, ok bool) {
	if st != nil {
		return st.sentEpoch, st.sentOffset, st.in
	}
	return t.session.GoneSent(pid)
}

// searchPids is slices.BinarySearch over pids, sorted and each once (a thread's or a fetch
// session's partitions), with a first guess where pid would be if pids were evenly spread: a
// thread or session holds a leader's partitions with one follower, and an assignment spreads
// those evenly (Kafka's and the scenarios' default alike: a leader's partitions a broker count
// apart), so the guess is usually right. A binary search of a thousand partitions reads five or
// six cache lines of pids that are cold by the next fetch; the guess reads the two ends and one.
func searchPids(pids []int32, pid int32) (int, bool) {
	n := len(pids)
	if n == 0 {
		return 0, false
	}
	lo, hi := pids[0], pids[n-1]
	switch {
	case pid <= lo:
		return 0, pid == lo
	case pid >= hi:
		if pid == hi {
			return n - 1, true
		}
		return n, false
	}
	g := int(int64(pid-lo) * int64(n-1) / int64(hi-lo)) // lo < pid < hi: 0 ≤ g < n-1
	switch at := pids[g]; {
	case at == pid:
		return g, true
	case at < pid:
		i, ok := slices.BinarySearch(pids[g+1:], pid)
		return g + 1 + i, ok
	default:
		return slices.BinarySearch(pids[:g], pid)
	}
}
