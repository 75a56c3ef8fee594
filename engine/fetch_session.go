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

// minIncrementalFetchSessionEvictionMs is KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS:
// a constant in Kafka, not a setting. A session unused for longer is stale; one created longer
// ago may be evicted for a larger or privileged one.
const minIncrementalFetchSessionEvictionMs = 120_000

// cachedPartition is Kafka's CachedPartition.
type cachedPartition struct {
	pid int32
	r   *replica // the broker's replica of the partition; nil if it has none (every read fails)
	// The request data: what the follower last sent for it (updateRequestParams).
	fetchOffset, fetcherLogStartOffset int64
	leaderEpoch, lastFetchedEpoch      int32
	// The response data: what the session last answered (maybeUpdateResponseData); -1 none.
	highWatermark, localLogStartOffset int64
	// dirty: on the session's dirty list (see above).
	dirty bool
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

// fetchSession is Kafka's FetchSession.
type fetchSession struct {
	id         int32
	privileged bool  // a follower's (a consumer's would not be; consumers here are sessionless)
	replicaID  int32 // the follower
	epoch      int32 // the epoch its next fetch must carry
	creationMs int64
	lastUsedMs int64
	// cachedSize is the size at the last touch, and byPrivileged and byAll whether that touch put
	// it in Kafka's evictableByPrivileged and evictableByAll trees.
	cachedSize          int
	byPrivileged, byAll bool
	// parts is the partition map, by pid; dirty the pids of its dirty partitions, each once.
	parts []cachedPartition
	dirty []int32
	// readAt is when its last fetch read its partitions, and brokerEpoch that fetch's broker epoch.
	readAt      int64
	brokerEpoch int64
	// parked is its incremental fetch waiting in purgatory, if any.
	parked *delayedFetch
	// removed: out of the cache while its parked fetch still waits on its partitions.
	removed bool
}

// find is the session's partition pid, or nil. A plain binary search: it runs for every change
// of every replica a session caches.
func (s *fetchSession) find(pid int32) *cachedPartition {
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
		return &s.parts[lo]
	}
	return nil
}

// fetchSessionCache is a broker's FetchSessionCache; it is lost with the process.
type fetchSessionCache struct {
	// sessions are sorted by id.
	sessions []*fetchSession
	// nextID: Kafka draws a random unused id; here a per-broker counter, so that ids are
	// deterministic without a draw from the engine's PRNG (which would move every jitter draw).
	// It survives restarts, as random ids would not repeat: a follower holding a session id from
	// before the leader's restart gets FETCH_SESSION_ID_NOT_FOUND, not another follower's session.
	nextID int32
}

func (c *fetchSessionCache) get(id int32) *fetchSession {
	i, ok := slices.BinarySearchFunc(c.sessions, id, func(s *fetchSession, id int32) int { return cmp.Compare(s.id, id) })
	if !ok {
		return nil
	}
	return c.sessions[i]
}

// newSessionID is FetchSessionCache.newSessionId: positive and unused on this broker.
func (c *fetchSessionCache) newSessionID() int32 {
	for {
		c.nextID++
		if c.nextID <= 0 {
			c.nextID = 1
		}
		if c.get(c.nextID) == nil {
			return c.nextID
		}
	}
}

// touch is FetchSessionCache.touch: the session was used at now, and its size and age decide
// which evictable trees it is in.
func (c *fetchSessionCache) touch(s *fetchSession, now int64) {
	s.lastUsedMs = now
	s.cachedSize = len(s.parts)
	old := now-s.creationMs > minIncrementalFetchSessionEvictionMs
	s.byPrivileged = !s.privileged || old
	s.byAll = old
}

// evictableLess is EvictableKey's order: unprivileged first, then smaller, then lower id.
func evictableLess(aPriv bool, aSize int, aID int32, bPriv bool, bSize int, bID int32) bool {
	if aPriv != bPriv {
		return !aPriv
	}
	if aSize != bSize {
		return aSize < bSize
	}
	return aID < bID
}

// maybeCreateSession is FetchSessionCache.maybeCreateSession: a new session, its partitions cached
// by create, if there is room or one can be evicted (tryEvict); else nil.
func (e *Engine) maybeCreateSession(b *broker, privileged bool, size int, create func(*fetchSession)) *fetchSession {
	c := &b.fetchSessions
	if int64(len(c.sessions)) >= e.cfg.MaxIncrementalFetchSessionSlots && !e.tryEvict(b, privileged, size) {
		return nil
	}
	s := &fetchSession{id: c.newSessionID(), privileged: privileged, creationMs: e.now,
		epoch: nextSessionEpoch(InitialEpoch), cachedSize: -1}
	create(s)
	i, _ := slices.BinarySearchFunc(c.sessions, s.id, func(s *fetchSession, id int32) int { return cmp.Compare(s.id, id) })
	c.sessions = slices.Insert(c.sessions, i, s)
	c.touch(s, e.now)
	return s
}

// tryEvict is FetchSessionCache.tryEvict: the least recently used session if it is stale; else
// the first evictable one (for a privileged newcomer, among the unprivileged and the old, else
// among the old only), if the newcomer's key is not below it. Kafka keeps both orders in trees;
// the cache here is scanned, only when it is full.
func (e *Engine) tryEvict(b *broker, privileged bool, size int) bool {
	var lru, first *fetchSession
	for _, s := range b.fetchSessions.sessions {
		if lru == nil || s.lastUsedMs < lru.lastUsedMs || (s.lastUsedMs == lru.lastUsedMs && s.id < lru.id) {
			lru = s
		}
		in := s.byAll // evictableByAll, or for a privileged newcomer evictableByPrivileged
		if privileged {
			in = s.byPrivileged
		}
		if in && (first == nil || evictableLess(s.privileged, s.cachedSize, s.id, first.privileged, first.cachedSize, first.id)) {
			first = s
		}
	}
	switch {
	case lru == nil:
		return false
	case e.now-lru.lastUsedMs > minIncrementalFetchSessionEvictionMs:
		e.removeSession(b, lru)
		return true
	case first == nil || evictableLess(privileged, size, 0, first.privileged, first.cachedSize, first.id):
		return false
	}
	e.removeSession(b, first)
	return true
}

// removeSession takes a session out of the cache (FetchSessionCache.remove). Its clean
// partitions' follower times are written down; a session whose fetch still waits in purgatory
// stays on its partitions' lists, every partition dirty, until the fetch is answered.
func (e *Engine) removeSession(b *broker, s *fetchSession) {
	c := &b.fetchSessions
	i, ok := slices.BinarySearchFunc(c.sessions, s.id, func(s *fetchSession, id int32) int { return cmp.Compare(s.id, id) })
	if ok && c.sessions[i] == s {
		c.sessions = slices.Delete(c.sessions, i, i+1)
	}
	for i := range s.parts {
		e.markDirty(s, &s.parts[i])
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
			r.fetchSessions = slices.DeleteFunc(r.fetchSessions, func(x *fetchSession) bool { return x == s })
		}
	}
	s.parked = nil
}

// loseFetchSessions drops a broker's cache: its process stopped or restarted. The follower times
// of clean partitions are written down first (a dead broker's replicas still read as it left them).
func (e *Engine) loseFetchSessions(b *broker) {
	for _, s := range b.fetchSessions.sessions {
		for i := range s.parts {
			e.markDirty(s, &s.parts[i])
		}
	}
	for _, pid := range b.hosted {
		b.replicaOf(pid).fetchSessions = nil
	}
	b.fetchSessions.sessions = nil
}

// addCachedPartition adds pid to s with the request data of fp, dirty (the session has sent
// nothing for it yet), and puts s on its replica's list.
func (e *Engine) addCachedPartition(b *broker, s *fetchSession, pid int32, fp *FetchPartition) *cachedPartition {
	i, _ := slices.BinarySearchFunc(s.parts, pid, func(cp cachedPartition, pid int32) int { return cmp.Compare(cp.pid, pid) })
	s.parts = slices.Insert(s.parts, i, cachedPartition{pid: pid, r: b.replicaOf(pid), highWatermark: -1, localLogStartOffset: -1})
	cp := &s.parts[i]
	cp.updateRequestParams(fp)
	if cp.r != nil {
		cp.r.fetchSessions = append(cp.r.fetchSessions, s)
	}
	cp.dirty = true
	s.dirty = append(s.dirty, pid)
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
	e.markDirty(s, cp) // writes down a clean partition's times
	s.dirty = slices.DeleteFunc(s.dirty, func(p int32) bool { return p == pid })
	if r := cp.r; r != nil {
		r.fetchSessions = slices.DeleteFunc(r.fetchSessions, func(x *fetchSession) bool { return x == s })
	}
	s.parts = slices.Delete(s.parts, i, i+1)
}

// sessionsChanged marks r dirty in every session caching it: something a fetch of r reads or
// updates changed (see above). Called before the change where the change resets follower state.
func (e *Engine) sessionsChanged(r *replica) {
	for _, s := range r.fetchSessions {
		if cp := s.find(r.p.pid); cp != nil {
			e.markDirty(s, cp)
		}
	}
}

// markDirty puts a clean partition on its session's dirty list, after writing down the follower
// times its session's reads have set: a clean partition's read at every fetch since it became
// clean would have set them to that fetch's time (updateFollowerFetchState with the follower at
// the LEO).
func (e *Engine) markDirty(s *fetchSession, cp *cachedPartition) {
	if cp.dirty {
		return
	}
	cp.dirty = true
	s.dirty = append(s.dirty, cp.pid)
	if cp.r == nil {
		return
	}
	if rr := cp.r.remote(s.replicaID); rr != nil {
		rr.SawFetchesUntil(s.readAt)
	}
}

// redirty puts back on the dirty list a partition the session has just read and found not clean
// (its follower times are already written).
func (s *fetchSession) redirty(cp *cachedPartition) {
	if !cp.dirty {
		cp.dirty = true
		s.dirty = append(s.dirty, cp.pid)
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
	l := &r.log
	if l.HighWatermark() != d.HighWatermark || l.LogEndOffset() != d.LogEndOffset || l.LogStartOffset() != d.LogStartOffset {
		return false // it moved after the read
	}
	rr := r.remote(s.replicaID)
	return rr != nil && rr.LogEndOffset() == cp.fetchOffset && rr.LogStartOffset() == cp.fetcherLogStartOffset &&
		rr.BrokerEpoch() == s.brokerEpoch && rr.LastFetchLeaderLogEndOffset() >= d.LogEndOffset && r.isr.InISR(s.replicaID)
}

// takeDirty hands out the session's dirty pids, sorted (Kafka's order is the session's; the
// engine answers in partition order); the session's list starts anew in the spare buffer.
func (e *Engine) takeDirty(s *fetchSession) []int32 {
	work := s.dirty
	s.dirty, e.dirtySpare = e.dirtySpare[:0], nil
	slices.Sort(work)
	return work
}

// doneWithDirty gives back the buffer takeDirty handed out.
func (e *Engine) doneWithDirty(work []int32) { e.dirtySpare = work[:0] }

// followerTimes is what a leader knows of when follower rr last fetched r and was caught up: the
// stored times, or the last read of a session in which r is clean.
func (e *Engine) followerTimes(r *replica, rr *brk.Replica) (lastFetch, lastCaughtUp int64) {
	lastFetch, lastCaughtUp = rr.LastFetchTime(), rr.LastCaughtUpTime()
	for _, s := range r.fetchSessions {
		if s.replicaID != rr.Broker() {
			continue
		}
		if cp := s.find(r.p.pid); cp != nil && !cp.dirty {
			lastFetch, lastCaughtUp = max(lastFetch, s.readAt), max(lastCaughtUp, s.readAt)
		}
	}
	return lastFetch, lastCaughtUp
}
