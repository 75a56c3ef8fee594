package broker

import "fmt"

// The tests' check of a fetcher thread's change list (FetcherRules.Check set; never in a run):
// before each incremental Fetch build, every partition off the change list must be as the last
// build left it, since the build will not look at it (the engine's fetcher_changes.go), and the
// thread's counts and pid index must be those of its partitions.

// checkChanges reports through rules.Check what in t breaks that.
func (t *FetcherThread) checkChanges(h Follower, rules *FetcherRules) {
	now := h.Now()
	where := fmt.Sprintf("at %d, fetcher %d→%d", now, t.owner, t.leader)
	onList := make(map[int32]bool, len(t.changes))
	for _, pid := range t.changes {
		onList[pid] = true
	}
	truncating, inSession := 0, 0
	if len(t.pids) != len(t.parts) {
		rules.Check(fmt.Sprintf("%s: %d pids indexed for %d partitions", where, len(t.pids), len(t.parts)))
	}
	for i := range t.parts {
		st := &t.parts[i]
		if i < len(t.pids) && t.pids[i] != st.Pid() {
			rules.Check(fmt.Sprintf("%s: pid %d indexed for partition %d", where, t.pids[i], st.Pid()))
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
				rules.Check(fmt.Sprintf("%s: partition %d is marked listed but is not on the change list", where, st.Pid()))
			}
		case st.Truncating():
			if st.InSession() {
				rules.Check(fmt.Sprintf("%s: partition %d is Truncating, off the list, and in the session", where, st.Pid()))
			}
		default:
			lastFetched := int32(-1)
			if rules.TruncateOnFetch {
				lastFetched = st.LastFetchedEpoch()
			}
			sp := InSession(st.FetchOffset(), h.Replica(st.Pid()).Log().LogStartOffset(), rules.RequestEpoch(st.Epoch()), lastFetched)
			sentEpoch, sentOffset := st.Sent()
			if st.DelayUntil() > now || sp != st.Session() || sentEpoch != st.Epoch() || sentOffset != st.FetchOffset() {
				rules.Check(fmt.Sprintf("%s: partition %d is off the change list but changed: fetch offset %d, epoch %d, last fetched epoch %d, truncating %t, delayed until %d; session %+v, sent epoch %d offset %d, now %+v",
					where, st.Pid(), st.FetchOffset(), st.Epoch(), st.LastFetchedEpoch(), st.Truncating(), st.DelayUntil(),
					st.Session(), sentEpoch, sentOffset, sp))
			}
		}
	}
	if truncating != t.truncatingCount || inSession != t.inSession {
		rules.Check(fmt.Sprintf("%s: %d Truncating and %d in the session, counted %d and %d",
			where, truncating, inSession, t.truncatingCount, t.inSession))
	}
}
