package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The leader's side of Fetch (Partition.fetchRecords, ReplicaManager.fetchMessages) and the fetch
// purgatory (DelayedFetch). A follower's fetch is answered at once when it brings an error or a
// divergence, or when enough bytes are there; otherwise it waits up to replica.fetch.wait.max.ms
// for data. A consumer's fetch (replica id -1) reads only up to the high watermark and never waits.

// delayedFetch is a fetch parked in purgatory.
type delayedFetch struct {
	req  *Message
	done bool
	// sess is an incremental fetch's session: the fetch waits on the session's partitions (of
	// which only the dirty ones can complete it). newSession: a full fetch that creates a session
	// when answered, with the reads of readAt.
	sess       *fetchSession
	newSession bool
	readAt     int64
	// seq orders parked fetches as they were parked: Kafka's watcher lists keep that order, and
	// completes them in it.
	seq uint64
}

// handleFetch is FetchManager.newContext and the fetch it leads to: a full fetch reads every
// partition it lists (and, at epoch 0, creates a session when answered, closing the one it
// names); an incremental one updates its session and reads the session's partitions. Before
// fetch sessions (1.1), and for consumers, every fetch is sessionless and full.
func (e *Engine) handleFetch(b *broker, m *Message) {
	req := m.Fetch
	switch {
	case !e.era.fetchSessions:
		e.fullFetch(b, m, false)
	case req.SessionEpoch == InitialEpoch || req.SessionEpoch == FinalEpoch:
		if s := b.fetchSessions.Get(req.SessionID); req.SessionID != InvalidSessionID && s != nil {
			e.removeSession(b, s) // a full fetch closes the session it names
		}
		e.fullFetch(b, m, req.SessionEpoch == InitialEpoch)
	default:
		e.incrementalFetch(b, m)
	}
}

// fullFetch reads every partition of a full fetch, updating follower state, and answers at once
// or parks the fetch on every partition it lists.
func (e *Engine) fullFetch(b *broker, m *Message, newSession bool) {
	req := m.Fetch
	consumer := req.ReplicaID == ClientNode
	data := make([]FetchPartitionData, 0, len(req.Partitions))
	var bytes int64
	now := req.MaxWaitMs <= 0 || consumer || len(req.Partitions) == 0
	// The fetch is parked on its partitions in the same walk, while it may still wait; if it is
	// answered at once it is marked done, which every watch list skips (nothing checks a watch
	// list during the walk).
	e.parkSeq++
	df := &delayedFetch{req: m, newSession: newSession, readAt: e.now, seq: e.parkSeq}
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		r := e.localReplica(b.id, fp.TP)
		d, n := e.readPartition(r, req, fp, true)
		bytes += n
		if d.Error != ErrNone || d.DivergingEpoch != nil {
			now = true
		}
		data = append(data, d)
		if !now && r != nil {
			r.watchers = addWatcher(r.watchers, df)
		}
	}
	if now || bytes >= req.MinBytes {
		df.done = true
		e.answerFull(b, df, data)
		return
	}
	e.schedule(delayedFetchDone{e.timer(b), df, df.seq}.due(e.now + req.MaxWaitMs))
}

// answerFull sends a full answer (every partition; FullFetchContext or SessionlessFetchContext):
// at epoch 0 it creates a session first, if the cache has room, from the request and the answer.
func (e *Engine) answerFull(b *broker, df *delayedFetch, data []FetchPartitionData) {
	req := df.req.Fetch
	resp := FetchResponse{Partitions: data}
	if df.newSession {
		if s := e.maybeCreateSession(b, req.ReplicaID != ClientNode, len(data),
			func(s *fetchSession) { e.fillSession(b, s, df, data) }); s != nil {
			resp.SessionID = s.ID()
		}
	}
	e.sendFetchResponse(b, df.req, resp)
}

// fillSession caches a new session's partitions: each with its request data and the answer's HW
// and log start (CachedPartition(part, reqData, respData)), dirty unless clean.
func (e *Engine) fillSession(b *broker, s *fetchSession, df *delayedFetch, data []FetchPartitionData) {
	req := df.req.Fetch
	s.SetReplicaID(req.ReplicaID)
	s.readAt, s.brokerEpoch = df.readAt, req.BrokerEpoch
	s.parts = make([]cachedPartition, 0, len(req.Partitions))
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		pid := e.pidOf(fp.TP)
		cp := cachedPartition{pid: pid, r: b.replicaOf(pid), highWatermark: data[i].HighWatermark,
			localLogStartOffset: data[i].LogStartOffset}
		cp.updateRequestParams(fp)
		cp.dirty = !e.clean(s, &cp, &data[i])
		s.parts = append(s.parts, cp)
		if cp.r != nil {
			cp.r.fetchSessions = append(cp.r.fetchSessions, sessionRef{s, int32(i)}) // i: unless sorted below
		}
	}
	// A follower lists its partitions in pid order; sort in case a request did not.
	if !slices.IsSortedFunc(s.parts, func(a, b cachedPartition) int { return cmp.Compare(a.pid, b.pid) }) {
		slices.SortFunc(s.parts, func(a, b cachedPartition) int { return cmp.Compare(a.pid, b.pid) })
	}
	for i := range s.parts {
		if s.parts[i].dirty {
			s.dirty = append(s.dirty, int32(i))
		}
	}
}

// incrementalFetch is an incremental fetch (epoch > 0): the session must exist and expect this
// epoch; its partitions take the request's changes and lose the forgotten ones; then its dirty
// partitions are read (IncrementalFetchContext).
func (e *Engine) incrementalFetch(b *broker, m *Message) {
	req := m.Fetch
	s := b.fetchSessions.Get(req.SessionID)
	switch {
	case s == nil:
		e.sendFetchResponse(b, m, FetchResponse{Error: ErrFetchSessionIDNotFound, Partitions: []FetchPartitionData{}})
		return
	case s.Epoch() != req.SessionEpoch:
		e.sendFetchResponse(b, m, FetchResponse{Error: ErrInvalidFetchSessionEpoch, Partitions: []FetchPartitionData{}})
		return
	}
	if req.BrokerEpoch != s.brokerEpoch || e.sessionReadAll {
		// Every read updates the follower's broker epoch: none is clean until read again.
		for i := range s.parts {
			e.markDirty(s, i)
		}
		s.brokerEpoch = req.BrokerEpoch
	}
	for i := range req.Partitions { // FetchSession.update
		fp := &req.Partitions[i]
		pid := e.pidOf(fp.TP)
		if i := s.index(pid); i >= 0 {
			e.markDirty(s, i)
			s.parts[i].updateRequestParams(fp)
		} else {
			e.addCachedPartition(b, s, pid, fp)
		}
	}
	for _, tp := range req.ForgottenTopicsData {
		e.removeCachedPartition(s, e.pidOf(tp))
	}
	if len(s.parts) == 0 {
		// Nothing left: the session is closed and the (empty) request answered sessionless.
		e.removeSession(b, s)
		e.sendFetchResponse(b, m, FetchResponse{Partitions: []FetchPartitionData{}})
		return
	}
	if e.era.sessionTouchedByFetch {
		b.fetchSessions.Touch(s, e.now)
	} else if len(s.parts) != s.CachedSize() {
		b.fetchSessions.Touch(s, s.LastUsedMs()) // before KAFKA-9137: only a new size, at the old time
	}
	s.NextEpoch()
	s.readAt = e.now
	e.readSession(b, m, s)
}

// readSession is ReplicaManager.fetchMessages over an incremental fetch's session: the dirty
// partitions are read, updating follower state (a clean one's read would only set the follower's
// times: readAt holds them); then the fetch is answered or parked.
func (e *Engine) readSession(b *broker, m *Message, s *fetchSession) {
	req := m.Fetch
	var full *FetchResponse
	if e.sessionCheck != nil {
		full = e.readWholeSession(s, req)
	}
	work := e.takeDirty(s)
	data := e.sessionData[:0]
	var bytes int64
	now := req.MaxWaitMs <= 0
	for _, i := range work {
		cp := &s.parts[i]
		fp := cp.fetchPartition(e)
		d, n := e.readPartition(cp.r, req, &fp, true)
		bytes += n
		if d.Error != ErrNone || d.DivergingEpoch != nil {
			now = true
		}
		data = append(data, d)
	}
	if now || bytes >= req.MinBytes {
		// The partitions with news are moved to the front of the reads, then copied out.
		kept := 0
		for i, j := range work {
			cp := &s.parts[j]
			cp.dirty = false
			must := cp.maybeUpdateResponseData(&data[i], true)
			if !e.clean(s, cp, &data[i]) {
				s.redirty(j)
			}
			if must {
				data[kept] = data[i]
				kept++
			}
		}
		resp := FetchResponse{SessionID: s.ID(), Partitions: data[:kept]}
		if full != nil {
			e.compareSessionAnswers(s, full, resp)
		}
		e.sendSessionAnswer(b, m, resp)
	} else {
		s.dirty = append(s.dirty, work...) // still dirty: the answer will read them again
		e.parkSeq++
		s.parked = s.newPark(m, e.parkSeq)
		e.schedule(delayedFetchDone{e.timer(b), s.parked, e.parkSeq}.due(e.now + req.MaxWaitMs))
	}
	clear(data)
	e.sessionData = data[:0]
	e.doneWithDirty(work)
}

// readPartition reads one partition of a fetch from r, the leader's replica of it (nil if it has
// none), and, for a follower's first read, updates what the leader knows of the follower. It
// returns the data and the bytes it holds.
func (e *Engine) readPartition(r *replica, req *FetchRequest, fp *FetchPartition, update bool) (FetchPartitionData, int64) {
	d := FetchPartitionData{TP: fp.TP, HighWatermark: -1, LogStartOffset: -1, LogEndOffset: -1}
	if d.Error = e.checkLeaderRequest(r, fp.CurrentLeaderEpoch, req.ReplicaID); d.Error != ErrNone {
		return d, 0
	}
	log := r.Log()
	hw, start, leo := log.HighWatermark(), log.LogStartOffset(), log.LogEndOffset()
	d.HighWatermark, d.LogStartOffset, d.LogEndOffset = hw, start, leo
	consumer := req.ReplicaID == ClientNode
	if fp.LastFetchedEpoch >= 0 && !consumer {
		ep, off := log.Cache().EndOffsetFor(fp.LastFetchedEpoch, leo)
		switch {
		case ep == -1 && off == -1, fp.FetchOffset < start:
			d.Error = ErrOffsetOutOfRange
			return d, 0
		case ep < fp.LastFetchedEpoch || off < fp.FetchOffset:
			// No follower state update on a divergence (KAFKA-13141).
			d.DivergingEpoch = &EpochEndOffset{Epoch: ep, EndOffset: off}
			return d, 0
		}
	}
	if fp.FetchOffset > leo || fp.FetchOffset < start {
		d.Error = ErrOffsetOutOfRange
		return d, 0
	}
	end := leo
	if consumer {
		end = hw
		if fp.MaxRecords > 0 {
			end = min(end, fp.FetchOffset+fp.MaxRecords)
		}
	}
	// replica.fetch.max.bytes per partition; the first record always fits.
	if limit := max(1, e.cfg.ReplicaFetchMaxBytes/e.cfg.RecordSizeBytes); end-fp.FetchOffset > limit {
		end = fp.FetchOffset + limit
	}
	d.Records = log.Read(fp.FetchOffset, end)
	if update && !consumer {
		e.updateFollowerFetchState(r, req.ReplicaID, fp.FetchOffset, fp.LogStartOffset, leo, req.BrokerEpoch)
	}
	return d, int64(len(d.Records)) * e.cfg.RecordSizeBytes
}

// checkLeaderRequest is the epoch and leadership check every leader-bound request passes first
// (brk.Partition.CheckLeaderRequest) on r (nil: the broker has no replica).
func (e *Engine) checkLeaderRequest(r *replica, currentEpoch int32, replicaID int32) KafkaError {
	var p *brk.Partition
	if r != nil {
		p = &r.Partition
	}
	return p.CheckLeaderRequest(currentEpoch, replicaID, e.era.notLeaderForUnknownLocal)
}

// updateFollowerFetchState is Replica.updateFetchState: a fetch at offset f
// while the leader's LEO is leo.
func (e *Engine) updateFollowerFetchState(r *replica, follower int32, f, logStart, leo int64, brokerEpoch int64) {
	rr := r.Remote(follower)
	if rr == nil {
		return
	}
	moved := rr.UpdateFetchState(e.now, f, logStart, leo, brokerEpoch)
	e.maybeExpandIsr(r, rr)
	if moved && e.advanceHW(r, follower) {
		e.completeDelayedProduces(r)
	}
}

// addWatcher parks df on a replica's watch list, dropping the fetches already completed (they
// are skipped when the list is checked; without this, a partition that gets no new data keeps
// every fetch that ever waited on it, and each holds its whole request).
func addWatcher(ws []*delayedFetch, df *delayedFetch) []*delayedFetch {
	kept := ws[:0]
	for _, w := range ws {
		if !w.done {
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	return append(kept, df)
}

// tryCompleteWatchers re-checks the fetches parked on r (new data, a moved HW, a leadership
// change), in the order they were parked (DelayedOperationPurgatory.checkAndComplete): the full
// fetches on its watch list, and the incremental fetches of the sessions caching it.
func (e *Engine) tryCompleteWatchers(b *broker, r *replica) {
	// Collected first: answering one may take its session off r's list. Few: about one per
	// follower.
	var buf [8]*delayedFetch
	parked := buf[:0]
	for _, df := range r.watchers {
		if !df.done {
			parked = append(parked, df)
		}
	}
	sessions := false
	for _, ref := range r.fetchSessions {
		if s := ref.s; s.parked != nil && !s.parked.done {
			parked, sessions = append(parked, s.parked), true
		}
	}
	if sessions {
		slices.SortFunc(parked, func(a, b *delayedFetch) int { return cmp.Compare(a.seq, b.seq) })
	}
	for _, df := range parked {
		if !df.done && e.canCompleteFetch(b, df, r) {
			e.completeFetch(b, df)
		}
	}
	if len(r.watchers) > 0 {
		kept := r.watchers[:0]
		for _, df := range r.watchers {
			if !df.done {
				kept = append(kept, df)
			}
		}
		clear(r.watchers[len(kept):])
		r.watchers = kept
	}
}

// canCompleteFetch is DelayedFetch.tryComplete's conditions (A)–(H) but the timeout: some
// partition can answer at once (an error, a divergence), or the bytes ready reach MinBytes. Every
// partition's bytes are ≥ 0, so one partition that suffices decides it: the partition of r, whose
// change prompted the check, is looked at first. An incremental fetch looks at its session's
// dirty partitions only: a clean one has no bytes and no error.
func (e *Engine) canCompleteFetch(b *broker, df *delayedFetch, r *replica) bool {
	req := df.req.Fetch
	if s := df.sess; s != nil {
		ok := e.sessionReady(s, s.dirty, req.MinBytes)
		if e.sessionCheck != nil {
			all := make([]int32, len(s.parts))
			for i := range all {
				all[i] = int32(i)
			}
			if whole := e.sessionReady(s, all, req.MinBytes); whole != ok {
				e.sessionCheck(fmt.Sprintf("session %d on broker %d: DelayedFetch can complete: dirty partitions say %v, every partition %v", s.ID(), b.id, ok, whole))
			}
		}
		return ok
	}
	parts := req.Partitions
	if r != nil {
		pid := r.p.pid
		i, found := slices.BinarySearchFunc(parts, pid, func(fp FetchPartition, pid int32) int { return cmp.Compare(e.pidOf(fp.TP), pid) })
		if found {
			if now, n := e.fetchPartReady(r, &parts[i]); now || n >= req.MinBytes {
				return true
			}
		}
	}
	var bytes int64
	for i := range parts {
		now, n := e.fetchPartReady(e.localReplica(b.id, parts[i].TP), &parts[i])
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

// sessionReady is canCompleteFetch over the session's partitions at indices idx.
func (e *Engine) sessionReady(s *fetchSession, idx []int32, minBytes int64) bool {
	var bytes int64
	for _, i := range idx {
		cp := &s.parts[i]
		now, n := e.partReady(cp.r, cp.leaderEpoch, cp.fetchOffset, cp.lastFetchedEpoch)
		if now {
			return true
		}
		if bytes += n; bytes >= minBytes {
			return true
		}
	}
	return bytes >= minBytes
}

// fetchPartReady is one partition of canCompleteFetch, read from r (nil: the broker has none):
// whether it completes the fetch at once, else the bytes it has ready.
func (e *Engine) fetchPartReady(r *replica, fp *FetchPartition) (bool, int64) {
	return e.partReady(r, fp.CurrentLeaderEpoch, fp.FetchOffset, fp.LastFetchedEpoch)
}

// partReady is fetchPartReady over the fetch data itself: a session's cached partition is checked
// without building its FetchPartition (its name is not needed).
func (e *Engine) partReady(r *replica, currentLeaderEpoch int32, fetchOffset int64, lastFetchedEpoch int32) (bool, int64) {
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
	return false, (leo - fetchOffset) * e.cfg.RecordSizeBytes
}

// completeFetch answers a parked fetch, re-reading without updating follower state again; the HW
// sent is the one current now.
func (e *Engine) completeFetch(b *broker, df *delayedFetch) {
	df.done = true
	if df.sess != nil {
		e.completeSessionFetch(b, df)
		return
	}
	req := df.req.Fetch
	data := make([]FetchPartitionData, 0, len(req.Partitions))
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		d, _ := e.readPartition(e.localReplica(b.id, fp.TP), req, fp, false)
		data = append(data, d)
	}
	e.answerFull(b, df, data)
}

// completeSessionFetch answers a parked incremental fetch (IncrementalFetchContext
// .updateAndGenerateResponseData): its session's dirty partitions are read again, and those with
// news answered. If the session moved to another epoch meanwhile, the answer is
// INVALID_FETCH_SESSION_EPOCH.
func (e *Engine) completeSessionFetch(b *broker, df *delayedFetch) {
	s, req := df.sess, df.req.Fetch
	if s.parked == df {
		s.parked = nil
	}
	if s.removed {
		defer e.unlinkSession(s)
	}
	if s.Epoch() != nextSessionEpoch(req.SessionEpoch) {
		e.sendFetchResponse(b, df.req, FetchResponse{Error: ErrInvalidFetchSessionEpoch, SessionID: s.ID(),
			Partitions: []FetchPartitionData{}})
		return
	}
	var full *FetchResponse
	if e.sessionCheck != nil {
		full = e.readWholeSession(s, req)
	}
	work := e.takeDirty(s)
	// The partitions with news gather in a scratch buffer, taken while in use, and are copied
	// out at their size.
	news := e.answerData[:0]
	e.answerData = nil
	for _, i := range work {
		cp := &s.parts[i]
		cp.dirty = false
		fp := cp.fetchPartition(e)
		d, _ := e.readPartition(cp.r, req, &fp, false)
		if cp.maybeUpdateResponseData(&d, true) {
			news = append(news, d)
		}
		if !e.clean(s, cp, &d) {
			s.redirty(i)
		}
	}
	e.doneWithDirty(work)
	resp := FetchResponse{SessionID: s.ID(), Partitions: news}
	if full != nil {
		e.compareSessionAnswers(s, full, resp)
	}
	e.sendSessionAnswer(b, df.req, resp)
	clear(news)
	e.answerData = news[:0]
}

// delayedFetchExpired answers a parked fetch at its max wait, unless it was answered (or its
// session's park was reused since: seq is the park's number when the timer was set).
func (e *Engine) delayedFetchExpired(b *broker, df *delayedFetch, seq uint64) {
	if df == nil || df.done || df.seq != seq {
		return
	}
	e.completeFetch(b, df)
}

// The answers to OffsetsForLeaderEpoch and ListOffsets are package broker's (leader_answers.go).

func (e *Engine) handleOffsetsForEpoch(b *broker, m *Message) { b.rm.HandleOffsetsForEpoch(b.host, m) }

func (e *Engine) handleListOffsets(b *broker, m *Message) { b.rm.HandleListOffsets(b.host, m) }

func describeFetchPart(d FetchPartitionData) string {
	switch {
	case d.Error != ErrNone:
		return fmt.Sprintf("%s-%d %s", d.Topic, d.Partition, d.Error)
	case d.DivergingEpoch != nil:
		return fmt.Sprintf("%s-%d diverging epoch %d at %d", d.Topic, d.Partition, d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
	}
	// strconv rather than fmt: a full answer in a large cluster lists thousands.
	return d.Topic + "-" + strconv.Itoa(int(d.Partition)) + " " + strconv.Itoa(len(d.Records)) + " records, HW " +
		strconv.FormatInt(d.HighWatermark, 10)
}
