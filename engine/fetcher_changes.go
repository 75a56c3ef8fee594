package engine

import (
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// A fetcher thread's turn costs what changed, not the thread's size. Kafka's thread walks every
// partition it fetches at every turn: maybeTruncate looks for Truncating ones, and buildFetch
// (with FetchSessionHandler.Builder) looks at each for readiness and compares its fetch data with
// what the session last sent. The engine keeps the result and looks at fewer partitions:
//
//   - truncatingCount counts the Truncating partitions (setTruncating, joined, leaving);
//     maybeTruncate walks only while there is one.
//   - The change list holds the partitions a build must look at: those whose fetch data or
//     readiness may have changed since the last build (noteChange: added, epoch replaced, fetch
//     offset, last fetched epoch, Truncating or backoff changed, the log start of its log moved)
//     and those backing off at the last build (their readiness changes with time alone). An
//     incremental build looks only at those, in pid order; any other partition is as the last
//     build left it, either in the session with the fetch data the session last sent (neither
//     listed nor forgotten, and its readiness cannot lapse: only a backoff delays it), or
//     Truncating (out of the session, no backoff deadline to report). A full build looks at every
//     partition, as Kafka's full request lists them, and starts the list anew.
//   - What a Fetch carried is stamped on each partition when a build finds it ready (sentEpoch,
//     sentOffset) instead of a list of every partition per build: between a build and its answer
//     no other build runs, so a partition's sess.in says whether the Fetch in flight carried it;
//     one that left the thread since keeps its stamp in the handler's gone list, and takes it
//     back if it rejoins before the next build (fetchSent).
//
// followerWalkAll (tests) walks every partition at every build and at every maybeTruncate, and
// checks answers against the list of what each Fetch carried, as Kafka's thread does;
// TestFollowerChangesMatchWalkingAll requires the same trace, event for event, and the same fetcher
// state. followerCheck (tests) checks, before each incremental build, that every partition off
// the list is as the last build left it (fetcher_check.go).

// noteChange puts st on its thread's change list: its fetch data or readiness may have changed.
func (f *fetcher) noteChange(st *fetchState) {
	if st.List() {
		f.changes = append(f.changes, st.Pid())
	}
}

// setTruncating moves st into or out of the Truncating state.
func (f *fetcher) setTruncating(st *fetchState, truncating bool) {
	if st.SetTruncating(truncating) {
		if truncating {
			f.truncatingCount++
		} else {
			f.truncatingCount--
		}
	}
	f.noteChange(st)
}

// joined counts st, just added to f.parts (after rejoin gave back its session entry).
func (f *fetcher) joined(st *fetchState) {
	if st.Truncating() {
		f.truncatingCount++
	}
	if st.InSession() {
		f.inSession++
	}
	f.noteChange(st)
}

// replace puts st in place of old, the partition's state at another leader epoch (addFetcher):
// the session still has what it last sent, and the Fetch in flight what it carried.
func (f *fetcher) replace(old *fetchState, st fetchState) {
	st.Succeed(&old.PartitionFetchState)
	if old.Truncating() {
		f.truncatingCount--
	}
	if st.Truncating() {
		f.truncatingCount++
	}
	*old = st
	f.noteChange(old)
}

// leaving uncounts st, leaving the thread, and tells the session handler. Its pid may stay on
// the change list: a build skips a pid the thread no longer has.
func (f *fetcher) leaving(st *fetchState) {
	if st.Truncating() {
		f.truncatingCount--
	}
	if st.InSession() {
		f.inSession--
	}
	leave(&f.session, st)
}

// logStartMoved notes that r's log start moved (a follower taking the leader's log start, a
// truncation below it): a Fetch carries the follower's log start, so a thread fetching r must
// look at it again. Rare, so the broker's threads are searched.
func (e *Engine) logStartMoved(r *replica) {
	for _, f := range e.brokers[r.broker].fetchers {
		if st := f.state(r.p.pid); st != nil {
			f.noteChange(st)
		}
	}
}

// fetchBuild is one Fetch build's working state.
type fetchBuild struct {
	full, fencing, lastEpochs bool
	now                       int64
	next                      int64 // the earliest backoff deadline
	parts                     []FetchPartition
	forgotten                 []TP
}

// look is one step of Kafka's buildFetch loop (with Builder.add) for st: a partition not ready to
// fetch (Truncating or backing off) leaves the session, forgotten by an incremental Fetch; a
// ready one is in it, listed by a full Fetch or when its fetch data differ from what the session
// last sent (PartitionData.equals), and stamped with what the Fetch carries for it. It reports
// whether the next build must look at st though nothing changes: it is backing off.
func (f *fetcher) look(bd *fetchBuild, st *fetchState) bool {
	if !st.Ready(bd.now) {
		if st.LeaveSession() {
			if !bd.full {
				bd.forgotten = append(bd.forgotten, st.tp)
			}
			f.inSession--
		}
		if st.Truncating() {
			return false
		}
		bd.next = min(bd.next, st.DelayUntil())
		return true
	}
	logStart, currentEpoch, lastFetched := st.r.log.LogStartOffset(), int32(-1), int32(-1)
	if bd.fencing {
		currentEpoch = st.Epoch() // era.requestEpoch
	}
	if bd.lastEpochs {
		lastFetched = st.LastFetchedEpoch()
	}
	sp := brk.InSession(st.FetchOffset(), logStart, currentEpoch, lastFetched)
	if bd.full || sp != st.Session() {
		bd.parts = append(bd.parts, FetchPartition{TP: st.tp, FetchOffset: st.FetchOffset(), LogStartOffset: logStart,
			CurrentLeaderEpoch: currentEpoch, LastFetchedEpoch: lastFetched})
		if !st.InSession() {
			f.inSession++
		}
		st.SetSession(sp)
	}
	st.Stamp()
	return false
}

// walkAll looks at every partition, in pid order (a full build; every build with
// followerWalkAll, which also records what the Fetch carries in f.sent), and starts the change
// list anew with the partitions backing off.
func (f *fetcher) walkAll(bd *fetchBuild, record bool) {
	f.changes = f.changes[:0]
	if record {
		f.sent = f.sent[:0]
	}
	for i := range f.parts {
		st := &f.parts[i]
		listed := f.look(bd, st)
		st.SetListed(listed)
		if listed {
			f.changes = append(f.changes, st.Pid())
		}
		if record && st.InSession() {
			f.sent = append(f.sent, sentPartition{pid: st.Pid(), epoch: st.Epoch(), fetchOffset: st.FetchOffset()})
		}
	}
}

// walkChanges looks at the partitions on the change list, in pid order, each once; the list
// starts anew with those backing off.
func (f *fetcher) walkChanges(bd *fetchBuild) {
	work := f.changes
	f.changes, f.changesSpare = f.changesSpare[:0], nil
	slices.Sort(work)
	prev := int32(-1) // pids are not negative
	for _, pid := range work {
		if pid == prev {
			continue // left the thread and came back: listed twice
		}
		prev = pid
		st := f.state(pid)
		if st == nil {
			continue // left the thread
		}
		listed := f.look(bd, st)
		st.SetListed(listed)
		if listed {
			f.changes = append(f.changes, pid)
		}
	}
	f.changesSpare = work[:0]
}

// fetchSent is what the Fetch in flight carried, read from the fetch states' stamps (see above),
// or, with followerWalkAll, from the list its build recorded.
type fetchSent struct {
	f       *fetcher
	list    sentPartitions
	walkAll bool
}

// takeFetchSent hands a Fetch answer's handler what its request carried.
func (f *fetcher) takeFetchSent(walkAll bool) fetchSent {
	if walkAll {
		return fetchSent{f: f, list: f.takeSent(), walkAll: true}
	}
	return fetchSent{f: f}
}

// count is how many partitions the Fetch carried.
func (s fetchSent) count() int {
	if s.walkAll {
		return len(s.list)
	}
	return s.f.sentCount
}

// of is what the Fetch carried for pid, whose fetch state is st (nil: not in the thread now), and
// whether it carried pid.
func (s fetchSent) of(pid int32, st *fetchState) (sentPartition, bool) {
	if s.walkAll {
		if p := s.list.of(pid); p != nil {
			return *p, true
		}
		return sentPartition{}, false
	}
	if st != nil {
		epoch, offset := st.Sent()
		return sentPartition{pid: pid, epoch: epoch, fetchOffset: offset}, st.InSession()
	}
	if epoch, offset, ok := s.f.session.GoneSent(pid); ok { // it left the thread since the build
		return sentPartition{pid: pid, epoch: epoch, fetchOffset: offset}, true
	}
	return sentPartition{}, false
}

// has reports whether the Fetch carried pid.
func (s fetchSent) has(pid int32) bool {
	var st *fetchState
	if !s.walkAll {
		st = s.f.state(pid)
	}
	_, ok := s.of(pid, st)
	return ok
}

// sentByTP is a fetchSent as the session handler asks it (broker.SentFetch): by partition name.
type sentByTP struct {
	fetchSent
	pidOf func(TP) int32
}

func (s sentByTP) Count() int { return s.count() }

func (s sentByTP) Carried(tp TP) bool { return s.has(s.pidOf(tp)) }
