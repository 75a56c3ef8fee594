package broker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The fetch purgatory (DelayedFetch.scala, DelayedOperationPurgatory): a fetch that found too few
// bytes waits on its partitions until one of them can complete it (new data, a moved HW, a
// leadership change) or until its max wait.

// DelayedFetch is a fetch parked in purgatory.
type DelayedFetch struct {
	req  *protocol.Message
	done bool
	// sess is an incremental fetch's session: the fetch waits on the session's partitions (of
	// which only the dirty ones can complete it). newSession: a full fetch that creates a session
	// when answered, with the reads of readAt.
	sess       *FetchSession
	newSession bool
	readAt     int64
	// seq orders parked fetches as they were parked: Kafka's watcher lists keep that order, and
	// complete them in it.
	seq uint64
}

// Request is the fetch waiting; Done whether it has been answered; Seq the number of its park
// (a timer set for it checks it: a session reuses its park).
func (df *DelayedFetch) Request() *protocol.Message { return df.req }
func (df *DelayedFetch) Done() bool                 { return df.done }
func (df *DelayedFetch) Seq() uint64                { return df.seq }

// SessionSize is the size of the session an incremental fetch waits on (its request lists only
// the partitions that changed); 0 for a full fetch.
func (df *DelayedFetch) SessionSize() int {
	if df.sess == nil {
		return 0
	}
	return len(df.sess.parts)
}

// watchList is the full fetches parked on a replica, in the order they parked: in inline while
// two fit, one allocation where the list and its array were three (at a cluster's start both
// followers' first Fetch, full, parks on each leader replica: 300,000 of the 1,200,000
// allocations of a 100,000-partition run).
type watchList struct {
	fetches []*DelayedFetch
	inline  [2]*DelayedFetch
}

// newWatchList is an empty list, its fetches in inline.
func newWatchList() *watchList {
	w := &watchList{}
	w.fetches = w.inline[:0]
	return w
}

// watching is the full fetches parked on r (some may be done, until its list is next checked).
func (r *Partition) watching() []*DelayedFetch {
	if r.lead == nil || r.lead.watchers == nil {
		return nil
	}
	return r.lead.watchers.fetches
}

// watch parks df on r's watch list (addWatcher), made at the first.
func (r *Partition) watch(df *DelayedFetch) {
	l := r.leadership()
	if l.watchers == nil {
		l.watchers = newWatchList()
	}
	l.watchers.fetches = addWatcher(l.watchers.fetches, df)
}

// addWatcher parks df on a replica's watch list, dropping the fetches already completed (they
// are skipped when the list is checked; without this, a partition that gets no new data keeps
// every fetch that ever waited on it, and each holds its whole request).
func addWatcher(ws []*DelayedFetch, df *DelayedFetch) []*DelayedFetch {
	kept := ws[:0]
	for _, w := range ws {
		if !w.done {
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	return append(kept, df)
}

// TryCompleteWatchers re-checks the fetches parked on r, the broker's replica of a partition (new
// data, a moved HW, a leadership change), in the order they were parked
// (DelayedOperationPurgatory.checkAndComplete): the full fetches on its watch list, and the
// incremental fetches of the sessions caching it.
func (rm *ReplicaManager) TryCompleteWatchers(h Host, r *Partition) {
	l := r.lead
	if l == nil {
		return // nothing parked on it, no session caching it
	}
	// Collected first: answering one may take its session off r's list. Few: about one per
	// follower.
	var buf [8]*DelayedFetch
	parked := buf[:0]
	if w := l.watchers; w != nil {
		for _, df := range w.fetches {
			if !df.done {
				parked = append(parked, df)
			}
		}
	}
	sessions := false
	for _, ref := range l.fetchSessions {
		if s := ref.s; s.parked != nil && !s.parked.done {
			parked, sessions = append(parked, s.parked), true
		}
	}
	if sessions {
		slices.SortFunc(parked, func(a, b *DelayedFetch) int { return cmp.Compare(a.seq, b.seq) })
	}
	if len(parked) > 0 {
		rules := h.LeaderFetchRules()
		for _, df := range parked {
			if !df.done && rm.canCompleteFetch(h, &rules, df, r) {
				rm.completeFetch(h, &rules, df)
			}
		}
	}
	if w := l.watchers; w != nil { // still r's: answering a fetch neither resets r nor makes it follow
		kept := w.fetches[:0]
		for _, df := range w.fetches {
			if !df.done {
				kept = append(kept, df)
			}
		}
		clear(w.fetches[len(kept):])
		w.fetches = kept
		if len(kept) == 0 {
			l.watchers = nil // a steady cluster's fetches park in sessions: no list to look in
		}
	}
}

// canCompleteFetch is DelayedFetch.tryComplete's conditions (A)–(H) but the timeout: some
// partition can answer at once (an error, a divergence), or the bytes ready reach MinBytes. Every
// partition's bytes are ≥ 0, so one partition that suffices decides it: the partition of r, whose
// change prompted the check, is looked at first. An incremental fetch looks at its session's
// dirty partitions only: a clean one has no bytes and no error.
func (rm *ReplicaManager) canCompleteFetch(h Host, rules *LeaderFetchRules, df *DelayedFetch, r *Partition) bool {
	req := df.req.Fetch
	if s := df.sess; s != nil {
		ok := s.ready(rules, s.dirty, req.MinBytes)
		if rules.Check != nil {
			all := make([]int32, len(s.parts))
			for i := range all {
				all[i] = int32(i)
			}
			if whole := s.ready(rules, all, req.MinBytes); whole != ok {
				rules.Check(fmt.Sprintf("session %d on broker %d: DelayedFetch can complete: dirty partitions say %v, every partition %v", s.ID(), rm.broker, ok, whole))
			}
		}
		return ok
	}
	parts := req.Partitions
	consumer := req.ReplicaID == protocol.ClientNode
	if r != nil {
		// A follower lists its partitions in its thread's order, not by pid: searched.
		tp := h.TP(r.pid)
		if i := slices.IndexFunc(parts, func(fp protocol.FetchPartition) bool { return fp.TP == tp }); i >= 0 {
			if now, n := partReady(rules, r, consumer, &parts[i]); now || n >= req.MinBytes {
				return true
			}
		}
	}
	var bytes int64
	for i := range parts {
		_, p := h.ReplicaNamed(parts[i].TP)
		now, n := partReady(rules, p, consumer, &parts[i])
		if now {
			return true
		}
		bytes += n
		if bytes >= req.MinBytes {
			return true
		}
	}
	return bytes >= req.MinBytes
}

// ready is canCompleteFetch over the session's partitions at indices idx.
func (s *FetchSession) ready(rules *LeaderFetchRules, idx []int32, minBytes int64) bool {
	var bytes int64
	for _, i := range idx {
		cp := &s.parts[i]
		now, n := readyBytes(rules, cp.r, false, cp.leaderEpoch, cp.fetchOffset, cp.lastFetchedEpoch) // a session is a follower's
		if now {
			return true
		}
		if bytes += n; bytes >= minBytes {
			return true
		}
	}
	return bytes >= minBytes
}

// partReady is one partition of canCompleteFetch, read from r (nil: the broker has none):
// whether it completes the fetch at once, else the bytes it has ready.
func partReady(rules *LeaderFetchRules, r *Partition, consumer bool, fp *protocol.FetchPartition) (bool, int64) {
	return readyBytes(rules, r, consumer, fp.CurrentLeaderEpoch, fp.FetchOffset, fp.LastFetchedEpoch)
}

// readyBytes is partReady over the fetch data itself: a session's cached partition is checked
// without building its FetchPartition (its name is not needed). A consumer's fetch counts the
// bytes up to the high watermark, a follower's up to the LEO (DelayedFetch.tryComplete's
// endOffset: FetchIsolation.HIGH_WATERMARK or LOG_END; 0.10.2.2: fetchOnlyCommitted), each up to
// its partition limit (max.partition.fetch.bytes, replica.fetch.max.bytes).
func readyBytes(rules *LeaderFetchRules, r *Partition, consumer bool, currentLeaderEpoch int32, fetchOffset int64, lastFetchedEpoch int32) (bool, int64) {
	if r == nil || !r.IsLeader() || r.Offline() {
		return true, 0
	}
	if currentLeaderEpoch >= 0 && currentLeaderEpoch < r.LeaderEpoch() {
		return true, 0
	}
	leo := r.Log().LogEndOffset()
	if fetchOffset > leo {
		return true, 0
	}
	if lastFetchedEpoch >= 0 {
		ep, off := r.Log().Cache().EndOffsetFor(lastFetchedEpoch, leo)
		if ep < lastFetchedEpoch || off < fetchOffset {
			return true, 0
		}
	}
	// DelayedFetch.tryComplete counts min(endOffset.positionDiff(fetchOffset), fetchInfo.maxBytes)
	// per partition (0.10.2.2 to 3.7.0): no more than replica.fetch.max.bytes of a partition
	// counts toward replica.fetch.min.bytes.
	if consumer {
		// A high watermark at or below the fetch offset has nothing for it (the "messageOffset
		// equal" path; below it is the same segment, neither Case F).
		return false, min(max(0, r.Log().HighWatermark()-fetchOffset)*rules.RecordSizeBytes, consumerMaxPartitionFetchBytes)
	}
	return false, min((leo-fetchOffset)*rules.RecordSizeBytes, rules.MaxBytes)
}

// completeFetch answers a parked fetch (DelayedFetch.onComplete), re-reading without updating
// follower state again; the HW sent is the one current now.
func (rm *ReplicaManager) completeFetch(h Host, rules *LeaderFetchRules, df *DelayedFetch) {
	df.done = true
	if df.sess != nil {
		rm.completeSessionFetch(h, rules, df)
		return
	}
	req := df.req.Fetch
	data := rm.parkedReads(len(req.Partitions)) // the answer keeps it
	lim := newResponseLimit(rules, req)
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		pid, r := h.ReplicaNamed(fp.TP)
		d, _ := rm.readPartition(h, rules, pid, r, req, fp, false, &lim)
		data = append(data, d)
	}
	rm.answerFull(h, rules, df, data)
}

// completeSessionFetch answers a parked incremental fetch (IncrementalFetchContext
// .updateAndGenerateResponseData): its session's dirty partitions are read again, and those with
// news answered. If the session moved to another epoch meanwhile, the answer is
// INVALID_FETCH_SESSION_EPOCH.
func (rm *ReplicaManager) completeSessionFetch(h Host, rules *LeaderFetchRules, df *DelayedFetch) {
	s, req := df.sess, df.req.Fetch
	if s.parked == df {
		s.parked = nil
	}
	if s.removed {
		defer s.unlinkAll()
	}
	if s.Epoch() != protocol.NextSessionEpoch(req.SessionEpoch) {
		h.SendFetchResponse(df.req, protocol.FetchResponse{Error: protocol.ErrInvalidFetchSessionEpoch, SessionID: s.ID(),
			Partitions: []protocol.FetchPartitionData{}})
		return
	}
	var full *protocol.FetchResponse
	if rules.Check != nil {
		full = rm.readWholeSession(h, rules, s, req)
	}
	work := rm.takeDirty(s)
	// The partitions with news gather in a scratch buffer, taken while in use, and are copied
	// out at their size.
	news := rm.answerData[:0]
	rm.answerData = nil
	lim := newResponseLimit(rules, req)
	for _, i := range work {
		cp := &s.parts[i]
		cp.dirty = false
		fp := cp.fetchData() // unnamed: the answer names what it carries
		// Read in place into the answer's next entry, which stays only if it has news.
		news = append(news, protocol.FetchPartitionData{})
		d := &news[len(news)-1]
		rm.readPartitionTo(d, h, rules, cp.pid, cp.r, req, &fp, false, &lim)
		must := cp.maybeUpdateResponseData(d, true)
		if !s.clean(cp, d) {
			s.redirty(i)
		}
		if must {
			if len(d.Records) > 0 {
				s.moveToEnd(i)
			}
			d.TP = cp.name(h)
		} else {
			*d = protocol.FetchPartitionData{}
			news = news[:len(news)-1]
		}
	}
	rm.doneWithDirty(work)
	resp := protocol.FetchResponse{SessionID: s.ID(), Partitions: news}
	if full != nil {
		rm.compareSessionAnswers(h, rules, s, full, resp)
	}
	h.SendSessionAnswer(df.req, resp)
	clear(news)
	rm.answerData = news[:0]
}

// DelayedFetchExpired answers a parked fetch at its max wait (DelayedFetch.onExpiration), unless
// it was answered (or its session's park was reused since: seq is the park's number when the
// timer was set).
func (rm *ReplicaManager) DelayedFetchExpired(h Host, df *DelayedFetch, seq uint64) {
	if df == nil || df.done || df.seq != seq {
		return
	}
	rules := h.LeaderFetchRules()
	rm.completeFetch(h, &rules, df)
}
