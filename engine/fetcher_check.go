package engine

import (
	"fmt"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The tests' check of the fetcher threads' change lists (e.followerCheck set; never in a run):
// before each incremental Fetch build, every partition off the change list must be as the last
// build left it, since the build will not look at it (fetcher_changes.go), and the thread's
// counts and pid index must be those of its partitions.

// checkFollowerChanges reports through e.followerCheck what in f breaks that.
func (e *Engine) checkFollowerChanges(f *fetcher) {
	where := fmt.Sprintf("at %d, fetcher %d→%d", e.now, f.Owner(), f.Leader())
	onList := make(map[int32]bool, len(f.Changes()))
	for _, pid := range f.Changes() {
		onList[pid] = true
	}
	truncating, inSession := 0, 0
	pids := f.Pids()
	if len(pids) != f.Len() {
		e.followerCheck(fmt.Sprintf("%s: %d pids indexed for %d partitions", where, len(pids), f.Len()))
	}
	b := e.brokers[f.Owner()]
	for i := range f.Len() {
		st := f.At(i)
		if i < len(pids) && pids[i] != st.Pid() {
			e.followerCheck(fmt.Sprintf("%s: pid %d indexed for partition %d", where, pids[i], st.Pid()))
		}
		if st.Truncating() {
			truncating++
		}
		if st.InSession() {
			inSession++
		}
		switch {
		case st.Listed():
			if !onList[st.Pid()] {
				e.followerCheck(fmt.Sprintf("%s: partition %d is marked listed but is not on the change list", where, st.Pid()))
			}
		case st.Truncating():
			if st.InSession() {
				e.followerCheck(fmt.Sprintf("%s: partition %d is Truncating, off the list, and in the session", where, st.Pid()))
			}
		default:
			lastFetched := int32(-1)
			if e.era.truncateOnFetch {
				lastFetched = st.LastFetchedEpoch()
			}
			sp := brk.InSession(st.FetchOffset(), b.replicaOf(st.Pid()).Log().LogStartOffset(), e.era.requestEpoch(st.Epoch()), lastFetched)
			sentEpoch, sentOffset := st.Sent()
			if st.DelayUntil() > e.now || sp != st.Session() || sentEpoch != st.Epoch() || sentOffset != st.FetchOffset() {
				e.followerCheck(fmt.Sprintf("%s: partition %d is off the change list but changed: %+v, session %+v, sent epoch %d offset %d, now %+v",
					where, st.Pid(), fetchInfo(st), st.Session(), sentEpoch, sentOffset, sp))
			}
		}
	}
	if truncating != f.TruncatingCount() || inSession != f.InSessionCount() {
		e.followerCheck(fmt.Sprintf("%s: %d Truncating and %d in the session, counted %d and %d",
			where, truncating, inSession, f.TruncatingCount(), f.InSessionCount()))
	}
}
