package engine

import (
	"cmp"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The leader's fetch sessions (KIP-227, Fetch v7, Kafka 1.1; FetchSession.scala): each broker's
// FetchSessionCache holds the sessions of the followers fetching from it, and each FetchSession
// its partitions (CachedPartition): what the follower last asked for and what the session last
// answered. A follower's incremental fetch lists only the partitions whose fetch data changed;
// the leader takes the rest from the session, and answers only the partitions with news.
//
// Kafka's leader reads every session partition on every fetch and then drops the quiet ones. The
// engine reads only the partitions that may have news: a cached partition is either *dirty*
// (listed in its session's dirty list) or *clean*: a read now would be quiet (no records, error
// or divergence; the HW and log start the session last sent), and the follower state update of a
// read would only set the follower's last fetch and caught-up times. Whatever can break that
// marks the partition dirty in every session caching it (sessionsChanged): an append, a HW or
// log start move, a truncation, a role or ISR change. The times a clean partition's reads would
// have set are its session's readAt (followerTimes); marking it dirty writes them down first.
// TestFetchSessionDirtyReads checks, over presets and sweep seeds, that the dirty reads give what
// reading every session partition would.

// cachedPartition is Kafka's CachedPartition.
type cachedPartition struct {
	pid int32
	// dirty: on the session's dirty list (see above). Beside pid, in its padding: 56 bytes a
	// partition, not 64 (a large cluster's sessions are memory its fetches wait on).
	dirty bool
	r     *replica // the broker's replica of the partition; nil if it has none (every read fails)
	// The request data: what the follower last sent for it (updateRequestParams).
	fetchOffset, fetcherLogStartOffset int64
	leaderEpoch, lastFetchedEpoch      int32
	// The response data: what the session last answered (maybeUpdateResponseData); -1 none.
	highWatermark, localLogStartOffset int64
}

// fetchPartition is the partition's fetch data, as the follower last sent it.
func (cp *cachedPartition) fetchPartition(e *Engine) FetchPartition {
	fp := FetchPartition{FetchOffset: cp.fetchOffset, LogStartOffset: cp.fetcherLogStartOffset,
		CurrentLeaderEpoch: cp.leaderEpoch, LastFetchedEpoch: cp.lastFetchedEpoch}
	if cp.pid >= 0 {
		fp.TP = e.partitions[cp.pid].tp()
	}
	return fp
}

// maybeUpdateResponseData is CachedPartition.maybeUpdateResponseData: whether an incremental
// answer must carry d, and, with update, what the session now has sent.
func (cp *cachedPartition) maybeUpdateResponseData(d *FetchPartitionData, update bool) bool {
	must := len(d.Records) > 0
	if cp.highWatermark != d.HighWatermark {
		must = true
		if update {
			cp.highWatermark = d.HighWatermark
		}
	}
	if cp.localLogStartOffset != d.LogStartOffset {
		must = true
		if update {
			cp.localLogStartOffset = d.LogStartOffset
		}
	}
	if d.Error != ErrNone {
		// An error is always sent, and the HW is forgotten so that the partition is sent again
		// when the error goes away.
		must = true
		if update {
			cp.highWatermark = -1
		}
	}
	return must || d.DivergingEpoch != nil
}

// fetchSession is Kafka's FetchSession: its metadata, which the cache orders it by
// (brk.FetchSession), and its partitions.
type fetchSession struct {
	brk.FetchSession
	// parts is the partition map, by pid; dirty the indices in parts of its dirty partitions, each
	// once (kept right when a partition is added or removed). Indices, not pids: a dirty
	// partition is then found without a search, which at 100 × 100,000 partitions was a tenth of
	// the run (each search a few cache misses in a cold session); parts is in pid order, so
	// sorted indices are partition order.
	parts []cachedPartition
	dirty []int32
	// readAt is when its last fetch read its partitions, and brokerEpoch that fetch's broker epoch.
	readAt      int64
	brokerEpoch int64
	// parked is its incremental fetch waiting in purgatory, if any.
	parked *delayedFetch
	// removed: out of the cache while its parked fetch still waits on its partitions.
	removed bool
	// park is the storage newPark reuses for parked: a steady session parks a fetch every round.
	park delayedFetch
}

// newPark is a parked incremental fetch of request m, numbered seq: the session's own park when it
// is free (never used, or answered: a timer still pointing at it checks the number), else a new
// one.
func (s *fetchSession) newPark(m *Message, seq uint64) *delayedFetch {
	df := &s.park
	if df.req != nil && !df.done {
		df = &delayedFetch{}
	}
	*df = delayedFetch{req: m, sess: s, seq: seq}
	return df
}

// Meta and Size make it a session the cache (brk.FetchSessionCache) holds.
func (s *fetchSession) Meta() *brk.FetchSession { return &s.FetchSession }
func (s *fetchSession) Size() int               { return len(s.parts) }

// find is the session's partition pid, or nil.
func (s *fetchSession) find(pid int32) *cachedPartition {
	if i := s.index(pid); i >= 0 {
		return &s.parts[i]
	}
	return nil
}

// index is where partition pid is among the session's partitions, or -1. A plain binary search.
func (s *fetchSession) index(pid int32) int {
	lo, hi := 0, len(s.parts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.parts[m].pid < pid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.parts) && s.parts[lo].pid == pid {
		return lo
	}
	return -1
}

// sessionRef is a fetch session caching a replica, on the replica's list, with where the
// replica's partition was last found among the session's partitions: a guess find checks
// (partitions move when one is added or removed), which spares a binary search at every change
// of every replica a session caches (an append, a HW move).
type sessionRef struct {
	s    *fetchSession
	hint int32
}

// find is the session's partition pid, or nil.
func (ref *sessionRef) find(pid int32) *cachedPartition {
	if i := ref.index(pid); i >= 0 {
		return &ref.s.parts[i]
	}
	return nil
}

// index is where partition pid is among the session's partitions, or -1.
func (ref *sessionRef) index(pid int32) int {
	s := ref.s
	if h := int(ref.hint); h >= 0 && h < len(s.parts) && s.parts[h].pid == pid {
		return h
	}
	i := s.index(pid)
	if i >= 0 {
		ref.hint = int32(i)
	}
	return i
}

// fetchSessionCache is a broker's FetchSessionCache (package broker), holding its sessions.
type fetchSessionCache = brk.FetchSessionCache[*fetchSession]

// maybeCreateSession is FetchSessionCache.maybeCreateSession: a new session, its partitions cached
// by create, if there is room or one can be evicted (tryEvict); else nil.
func (e *Engine) maybeCreateSession(b *broker, privileged bool, size int, create func(*fetchSession)) *fetchSession {
	return b.fetchSessions.MaybeCreateSession(e.now, e.cfg.MaxIncrementalFetchSessionSlots, privileged, size,
		func(s *fetchSession) { e.removeSession(b, s) },
		func(m brk.FetchSession) *fetchSession {
			s := &fetchSession{FetchSession: m}
			create(s)
			return s
		})
}

// removeSession takes a session out of the cache (FetchSessionCache.remove). Its clean
// partitions' follower times are written down; a session whose fetch still waits in purgatory
// stays on its partitions' lists, every partition dirty, until the fetch is answered.
func (e *Engine) removeSession(b *broker, s *fetchSession) {
	b.fetchSessions.Remove(s)
	for i := range s.parts {
		e.markDirty(s, i)
	}
	if s.parked != nil && !s.parked.done {
		s.removed = true
		return
	}
	e.unlinkSession(s)
}

// unlinkSession takes s off its partitions' session lists.
func (e *Engine) unlinkSession(s *fetchSession) {
	for i := range s.parts {
		if r := s.parts[i].r; r != nil {
			r.fetchSessions = slices.DeleteFunc(r.fetchSessions, func(x sessionRef) bool { return x.s == s })
		}
	}
	s.parked = nil
}

// loseFetchSessions drops a broker's cache: its process stopped or restarted. The follower times
// of clean partitions are written down first (a dead broker's replicas still read as it left them).
func (e *Engine) loseFetchSessions(b *broker) {
	for _, s := range b.fetchSessions.Sessions() {
		for i := range s.parts {
			e.markDirty(s, i)
		}
	}
	for _, pid := range b.hosted {
		b.replicaOf(pid).fetchSessions = nil
	}
	b.fetchSessions.Clear()
}

// addCachedPartition adds pid to s with the request data of fp, dirty (the session has sent
// nothing for it yet), and puts s on its replica's list.
func (e *Engine) addCachedPartition(b *broker, s *fetchSession, pid int32, fp *FetchPartition) *cachedPartition {
	i, _ := slices.BinarySearchFunc(s.parts, pid, func(cp cachedPartition, pid int32) int { return cmp.Compare(cp.pid, pid) })
	s.parts = slices.Insert(s.parts, i, cachedPartition{pid: pid, r: b.replicaOf(pid), highWatermark: -1, localLogStartOffset: -1})
	for k, j := range s.dirty { // the partitions after it moved up one
		if int(j) >= i {
			s.dirty[k]++
		}
	}
	cp := &s.parts[i]
	cp.updateRequestParams(fp)
	if cp.r != nil {
		cp.r.fetchSessions = append(cp.r.fetchSessions, sessionRef{s, int32(i)})
	}
	cp.dirty = true
	s.dirty = append(s.dirty, int32(i))
	return cp
}

// updateRequestParams is CachedPartition.updateRequestParams.
func (cp *cachedPartition) updateRequestParams(fp *FetchPartition) {
	cp.fetchOffset, cp.fetcherLogStartOffset = fp.FetchOffset, fp.LogStartOffset
	cp.leaderEpoch, cp.lastFetchedEpoch = fp.CurrentLeaderEpoch, fp.LastFetchedEpoch
}

// removeCachedPartition drops pid from s (a forgotten partition).
func (e *Engine) removeCachedPartition(s *fetchSession, pid int32) {
	i, ok := slices.BinarySearchFunc(s.parts, pid, func(cp cachedPartition, pid int32) int { return cmp.Compare(cp.pid, pid) })
	if !ok {
		return
	}
	cp := &s.parts[i]
	e.markDirty(s, i)   // writes down a clean partition's times
	kept := s.dirty[:0] // it leaves the list, and the partitions after it move down one
	for _, j := range s.dirty {
		switch {
		case int(j) < i:
			kept = append(kept, j)
		case int(j) > i:
			kept = append(kept, j-1)
		}
	}
	s.dirty = kept
	if r := cp.r; r != nil {
		r.fetchSessions = slices.DeleteFunc(r.fetchSessions, func(x sessionRef) bool { return x.s == s })
	}
	s.parts = slices.Delete(s.parts, i, i+1)
}

// sessionsChanged marks r dirty in every session caching it: something a fetch of r reads or
// updates changed (see above). Called before the change where the change resets follower state.
func (e *Engine) sessionsChanged(r *replica) {
	for k := range r.fetchSessions {
		ref := &r.fetchSessions[k]
		if i := ref.index(r.p.pid); i >= 0 {
			e.markDirty(ref.s, i)
		}
	}
}

// markDirty puts a clean partition on its session's dirty list, after writing down the follower
// times its session's reads have set: a clean partition's read at every fetch since it became
// clean would have set them to that fetch's time (updateFollowerFetchState with the follower at
// the LEO).
func (e *Engine) markDirty(s *fetchSession, i int) {
	cp := &s.parts[i]
	if cp.dirty {
		return
	}
	cp.dirty = true
	s.dirty = append(s.dirty, int32(i))
	if cp.r == nil {
		return
	}
	if rr := cp.r.Remote(s.ReplicaID()); rr != nil {
		rr.SawFetchesUntil(s.readAt)
	}
}

// redirty puts back on the dirty list partition i, which the session has just read and found not
// clean (its follower times are already written).
func (s *fetchSession) redirty(i int32) {
	if cp := &s.parts[i]; !cp.dirty {
		cp.dirty = true
		s.dirty = append(s.dirty, i)
	}
}

// clean reports whether cp may leave the dirty list after the session answered d for it (d read
// from the current state, the session's response data already updated): a read now would be
// quiet, and a follower fetch would change nothing but its times, since the follower is at the
// LEO (its fetch sets lastCaughtUpTime), at the offsets the leader last took from it, and in the
// ISR (maybeExpandIsr does nothing).
func (e *Engine) clean(s *fetchSession, cp *cachedPartition, d *FetchPartitionData) bool {
	r := cp.r
	if r == nil || d.Error != ErrNone || d.DivergingEpoch != nil || len(d.Records) > 0 ||
		d.HighWatermark != cp.highWatermark || d.LogStartOffset != cp.localLogStartOffset {
		return false
	}
	l := r.Log()
	if l.HighWatermark() != d.HighWatermark || l.LogEndOffset() != d.LogEndOffset || l.LogStartOffset() != d.LogStartOffset {
		return false // it moved after the read
	}
	rr := r.Remote(s.ReplicaID())
	return rr != nil && rr.LogEndOffset() == cp.fetchOffset && rr.LogStartOffset() == cp.fetcherLogStartOffset &&
		rr.BrokerEpoch() == s.brokerEpoch && rr.LastFetchLeaderLogEndOffset() >= d.LogEndOffset && r.State().InISR(s.ReplicaID())
}

// takeDirty hands out the session's dirty partitions' indices, sorted: partition order (Kafka's
// order is the session's; the engine answers in partition order); the session's list starts
// anew in the spare buffer. No partition is added or removed while they are out.
func (e *Engine) takeDirty(s *fetchSession) []int32 {
	work := s.dirty
	s.dirty, e.dirtySpare = e.dirtySpare[:0], nil
	if len(work) > 1 { // a steady round's one dirty partition needs no sort call
		slices.Sort(work)
	}
	return work
}

// doneWithDirty gives back the buffer takeDirty handed out.
func (e *Engine) doneWithDirty(work []int32) { e.dirtySpare = work[:0] }

// followerTimes is what a leader knows of when follower rr last fetched r and was caught up: the
// stored times, or the last read of a session in which r is clean.
func (e *Engine) followerTimes(r *replica, rr *brk.Replica) (lastFetch, lastCaughtUp int64) {
	lastFetch, lastCaughtUp = rr.LastFetchTime(), rr.LastCaughtUpTime()
	for k := range r.fetchSessions {
		ref := &r.fetchSessions[k]
		s := ref.s
		if s.ReplicaID() != rr.Broker() {
			continue
		}
		if cp := ref.find(r.p.pid); cp != nil && !cp.dirty {
			lastFetch, lastCaughtUp = max(lastFetch, s.readAt), max(lastCaughtUp, s.readAt)
		}
	}
	return lastFetch, lastCaughtUp
}
