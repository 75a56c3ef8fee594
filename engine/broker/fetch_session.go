package broker

import (
	"cmp"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The leader's fetch sessions (KIP-227, Fetch v7, Kafka 1.1; FetchSession.scala): the broker's
// FetchSessionCache (fetch_session_cache.go) holds the sessions of the followers fetching from
// it, and each FetchSession its partitions (CachedPartition): what the follower last asked for
// and what the session last answered. A follower's incremental fetch lists only the partitions
// whose fetch data changed; the leader takes the rest from the session, and answers only the
// partitions with news.
//
// Kafka's leader reads every session partition on every fetch and then drops the quiet ones. This
// one reads only the partitions that may have news: a cached partition is either *dirty* (listed
// in its session's dirty list) or *clean*: a read now would be quiet (no records, error or
// divergence; the HW and log start the session last sent), and the follower state update of a
// read would only set the follower's last fetch and caught-up times. Whatever can break that
// marks the partition dirty in every session caching it (Partition.SessionsChanged): an append,
// a HW or log start move, a truncation, a role or ISR change. The times a clean partition's reads
// would have set are its session's readAt (FollowerTimes); marking it dirty writes them down
// first. The engine's TestFetchSessionDirtyReads checks, over presets and sweep seeds, that the
// dirty reads give what reading every session partition would (fetch_session_check.go).

// CachedPartition is Kafka's CachedPartition.
type CachedPartition struct {
	pid int32
	// dirty: on the session's dirty list (see above). Beside pid, in its padding: 64 bytes a
	// partition with order, not 72 (a large cluster's sessions are memory its fetches wait on).
	dirty bool
	r     *Partition // the broker's replica of the partition; nil if it has none (every read fails)
	// The request data: what the follower last sent for it (updateRequestParams).
	fetchOffset, fetcherLogStartOffset int64
	leaderEpoch, lastFetchedEpoch      int32
	// The response data: what the session last answered (maybeUpdateResponseData); -1 none.
	highWatermark, localLogStartOffset int64
	// order is the partition's place in the session's order (FetchSession.nextOrder). Here, not
	// in a slice beside parts: sorting a read's dirty partitions by it then reads the entries
	// the read itself reads next, where a slice of its own was a cold line more per partition.
	// It takes the 8 bytes the separate slice took (64 bytes a partition).
	order uint64
}

// fetchPartition is the partition's fetch data, as the follower last sent it.
func (cp *CachedPartition) fetchPartition(h Host) protocol.FetchPartition {
	fp := cp.fetchData()
	fp.TP = cp.name(h)
	return fp
}

// fetchData is fetchPartition without the partition's name. A read does not need the name, only
// the answer does (its partitions are named where the answer takes them: nameAnswered), and most
// of a session's reads find nothing to answer: naming every read was 2% of the 100 × 100,000 user
// path.
func (cp *CachedPartition) fetchData() protocol.FetchPartition {
	return protocol.FetchPartition{FetchOffset: cp.fetchOffset, LogStartOffset: cp.fetcherLogStartOffset,
		CurrentLeaderEpoch: cp.leaderEpoch, LastFetchedEpoch: cp.lastFetchedEpoch}
}

// name is the partition's name (none if the broker does not know it: pid -1).
func (cp *CachedPartition) name(h Host) protocol.TP {
	if cp.pid >= 0 {
		return h.TP(cp.pid)
	}
	return protocol.TP{}
}

// maybeUpdateResponseData is CachedPartition.maybeUpdateResponseData: whether an incremental
// answer must carry d, and, with update, what the session now has sent.
func (cp *CachedPartition) maybeUpdateResponseData(d *protocol.FetchPartitionData, update bool) bool {
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
	if d.Error != protocol.ErrNone {
		// An error is always sent, and the HW is forgotten so that the partition is sent again
		// when the error goes away.
		must = true
		if update {
			cp.highWatermark = -1
		}
	}
	return must || d.DivergingEpoch != nil
}

// updateRequestParams is CachedPartition.updateRequestParams. Before 2.5 (KAFKA-9338) the
// session does not keep the fetch's currentLeaderEpoch (keepEpoch false): 2.1.1's reqData reads
// with Optional.empty(), unchecked.
func (cp *CachedPartition) updateRequestParams(fp *protocol.FetchPartition, keepEpoch bool) {
	cp.fetchOffset, cp.fetcherLogStartOffset = fp.FetchOffset, fp.LogStartOffset
	cp.leaderEpoch, cp.lastFetchedEpoch = fp.CurrentLeaderEpoch, fp.LastFetchedEpoch
	if !keepEpoch {
		cp.leaderEpoch = -1
	}
}

// FetchSession is Kafka's FetchSession: its id, whose it is, the epoch its next fetch must carry,
// what the cache's eviction orders read, and its partitions.
type FetchSession struct {
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

	// parts is the partition map, by pid; dirty the indices in parts of its dirty partitions, each
	// once (kept right when a partition is added or removed). Indices, not pids: a dirty
	// partition is then found without a search, which at 100 × 100,000 partitions was a tenth of
	// the run (each search a few cache misses in a cold session); parts is in pid order, so
	// sorted indices are partition order.
	parts []CachedPartition
	dirty []int32
	// pids is parts' pids, side by side, for index's binary search: a probe into parts itself
	// lands on a 56-byte entry of a cold session, a cache miss each (5% of the 100 × 100,000
	// user path); four probes into pids share a line or two.
	pids []int32
	// nextOrder stamps the partitions' places in Kafka's partitionMap (an
	// ImplicitLinkedHashCollection; CachedPartition.order): the full request's order at
	// creation, a partition added by an incremental fetch last, and one answered with records
	// moved last (IncrementalFetchContext's PartitionIterator, "for fairness"). The leader reads
	// the session in that order (takeDirty), which decides who gets data under
	// replica.fetch.response.max.bytes.
	nextOrder uint64
	// readAt is when its last fetch read its partitions, and brokerEpoch that fetch's broker epoch.
	readAt      int64
	brokerEpoch int64
	// parked is its incremental fetch waiting in purgatory, if any.
	parked *DelayedFetch
	// removed: out of the cache while its parked fetch still waits on its partitions.
	removed bool
	// hwEveryFetch: every follower fetch recomputes the HW (before 2.4, HWRules
	// .EveryFollowerFetch), against replica.lag.time.max.ms hwLagMs: see clean.
	hwEveryFetch bool
	hwLagMs      int64
	// keepsLeaderEpoch: its partitions keep the currentLeaderEpoch their fetches sent, so its
	// incremental reads are fenced (KAFKA-9338, 2.5); before, CachedPartition.reqData carries
	// Optional.empty() and only the full fetch that created it was checked (2.1.1).
	keepsLeaderEpoch bool
	// park is the storage newPark reuses for parked: a steady session parks a fetch every round.
	park DelayedFetch
}

func (s *FetchSession) ID() int32         { return s.id }
func (s *FetchSession) Privileged() bool  { return s.privileged }
func (s *FetchSession) ReplicaID() int32  { return s.replicaID }
func (s *FetchSession) Epoch() int32      { return s.epoch }
func (s *FetchSession) LastUsedMs() int64 { return s.lastUsedMs }
func (s *FetchSession) CachedSize() int   { return s.cachedSize }

// Size is how many partitions it caches (FetchSession.size).
func (s *FetchSession) Size() int { return len(s.parts) }

// EvictableByAll reports whether the last touch put the session in evictableByAll (old enough
// for any newcomer to evict).
func (s *FetchSession) EvictableByAll() bool { return s.byAll }

// Parked is its incremental fetch waiting in purgatory (nil: none, or answered).
func (s *FetchSession) Parked() *DelayedFetch {
	if s.parked == nil || s.parked.done {
		return nil
	}
	return s.parked
}

// Caches reports whether partition pid is among its partitions.
func (s *FetchSession) Caches(pid int32) bool { return s.index(pid) >= 0 }

// nextEpoch moves the epoch the next fetch must carry on (an incremental fetch was accepted).
func (s *FetchSession) nextEpoch() { s.epoch = protocol.NextSessionEpoch(s.epoch) }

// newPark is a parked incremental fetch of request m, numbered seq: the session's own park when it
// is free (never used, or answered: a timer still pointing at it checks the number), else a new
// one.
func (s *FetchSession) newPark(m *protocol.Message, seq uint64) *DelayedFetch {
	df := &s.park
	if df.req != nil && !df.done {
		df = &DelayedFetch{}
	}
	*df = DelayedFetch{req: m, sess: s, seq: seq}
	return df
}

// index is where partition pid is among the session's partitions, or -1 (searchPids).
func (s *FetchSession) index(pid int32) int {
	if i, ok := searchPids(s.pids, pid); ok {
		return i
	}
	return -1
}

// sessionRef is a fetch session caching a replica, on the replica's list, with where the
// replica's partition was last found among the session's partitions: a guess index checks
// (partitions move when one is added or removed), which spares a binary search at every change
// of every replica a session caches (an append, a HW move).
type sessionRef struct {
	s    *FetchSession
	hint int32
}

// index is where partition pid is among the session's partitions, or -1. The guess is checked
// against the partition's own entry, not pids: every caller reads that entry next (its dirty
// flag), so a right guess costs the session no other cache line.
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

// cachedBy puts s, where p's partition is its i-th, on p's session list. A leader's list is made
// with room for a session per follower: each follower's caches it, and the list grown one by one
// was two allocations per leader (100,000 of a 100,000-partition run's start).
func (p *Partition) cachedBy(s *FetchSession, i int) {
	l := p.leadership()
	if l.fetchSessions == nil {
		l.fetchSessions = make([]sessionRef, 0, max(1, len(l.remotes)))
	}
	l.fetchSessions = append(l.fetchSessions, sessionRef{s, int32(i)})
}

// unlink takes s off p's session list.
func (p *Partition) unlink(s *FetchSession) {
	if l := p.lead; l != nil {
		l.fetchSessions = slices.DeleteFunc(l.fetchSessions, func(x sessionRef) bool { return x.s == s })
	}
}

// SessionsChanged marks p dirty in every session caching it: something a fetch of p reads or
// updates changed (see above). Called before the change where the change resets follower state.
func (p *Partition) SessionsChanged() {
	if p.lead == nil {
		return // a follower's: no session caches it
	}
	refs := p.lead.fetchSessions
	for k := range refs {
		ref := &refs[k]
		if i := ref.index(p.pid); i >= 0 {
			ref.s.markDirty(i)
		}
	}
}

// FetchSessionCount is how many of the broker's fetch sessions cache p.
func (p *Partition) FetchSessionCount() int { return len(p.sessionRefs()) }

// sessionRefs are the fetch sessions caching p (none without a leader's state).
func (p *Partition) sessionRefs() []sessionRef {
	if p.lead == nil {
		return nil
	}
	return p.lead.fetchSessions
}

// SessionSentHW reports whether a fetch session of follower caching p last answered hw as its
// HW (CachedPartition's response data).
func (p *Partition) SessionSentHW(follower int32, hw int64) bool {
	for _, ref := range p.sessionRefs() {
		if ref.s.replicaID == follower {
			if i := ref.s.index(p.pid); i >= 0 && ref.s.parts[i].highWatermark == hw {
				return true
			}
		}
	}
	return false
}

// FollowerTimes is what the leader p knows of when follower rr last fetched it and was caught
// up: the stored times, or the last read of a session in which p is clean.
func (p *Partition) FollowerTimes(rr *Replica) (lastFetch, lastCaughtUp int64) {
	lastFetch, lastCaughtUp = rr.LastFetchTime(), rr.LastCaughtUpTime()
	refs := p.sessionRefs()
	for k := range refs {
		ref := &refs[k]
		s := ref.s
		if s.replicaID != rr.Broker() {
			continue
		}
		if i := ref.index(p.pid); i >= 0 && !s.parts[i].dirty {
			lastFetch, lastCaughtUp = max(lastFetch, s.readAt), max(lastCaughtUp, s.readAt)
		}
	}
	return lastFetch, lastCaughtUp
}

// markDirty puts a clean partition on its session's dirty list, after writing down the follower
// times its session's reads have set: a clean partition's read at every fetch since it became
// clean would have set them to that fetch's time (updateFollowerFetchState with the follower at
// the LEO).
func (s *FetchSession) markDirty(i int) {
	cp := &s.parts[i]
	if cp.dirty {
		return
	}
	cp.dirty = true
	s.dirty = append(s.dirty, int32(i))
	if cp.r == nil {
		return
	}
	if rr := cp.r.Remote(s.replicaID); rr != nil {
		rr.SawFetchesUntil(s.readAt)
	}
}

// markAllDirty marks every partition dirty (a read of each will update the follower's state).
func (s *FetchSession) markAllDirty() {
	for i := range s.parts {
		s.markDirty(i)
	}
}

// redirty puts back on the dirty list partition i, which the session has just read and found not
// clean (its follower times are already written).
func (s *FetchSession) redirty(i int32) {
	if cp := &s.parts[i]; !cp.dirty {
		cp.dirty = true
		s.dirty = append(s.dirty, i)
	}
}

// clean reports whether cp may leave the dirty list after the session answered d for it (d read
// from the current state, the session's response data already updated): a read now would be
// quiet, and a follower fetch would change nothing but its times, since the follower is at the
// LEO (its fetch sets lastCaughtUpTime), at the offsets the leader last took from it, and in the
// ISR (maybeExpandIsr does nothing). Before 2.4 a follower fetch also recomputes the HW at its
// time (hwEveryFetch), which can raise it once a follower outside the ISR that bounds it is no
// longer caught up: while one does (outsiderCaughtUp), the partition is not clean.
func (s *FetchSession) clean(cp *CachedPartition, d *protocol.FetchPartitionData) bool {
	r := cp.r
	if r == nil || d.Error != protocol.ErrNone || d.DivergingEpoch != nil || len(d.Records) > 0 ||
		d.HighWatermark != cp.highWatermark || d.LogStartOffset != cp.localLogStartOffset {
		return false
	}
	l := r.Log()
	if l.HighWatermark() != d.HighWatermark || l.LogEndOffset() != d.LogEndOffset || l.LogStartOffset() != d.LogStartOffset {
		return false // it moved after the read
	}
	if cp.fetchOffset != d.LogEndOffset {
		return false // records left unread: the answer's replica.fetch.response.max.bytes was spent
	}
	rr := r.Remote(s.replicaID)
	return rr != nil && rr.LogEndOffset() == cp.fetchOffset && rr.LogStartOffset() == cp.fetcherLogStartOffset &&
		rr.BrokerEpoch() == s.brokerEpoch && rr.LastFetchLeaderLogEndOffset() >= d.LogEndOffset && r.State().InISR(s.replicaID) &&
		!(s.hwEveryFetch && r.outsiderCaughtUp(s.readAt, s.hwLagMs))
}

// fill caches a new session's partitions, those of full fetch req answered data (read at
// readAt): each with its request data and the answer's HW and log start
// (CachedPartition(part, reqData, respData)), dirty unless clean, and puts the session on the
// list of each replica the broker has.
func (s *FetchSession) fill(h Host, req *protocol.FetchRequest, readAt int64, data []protocol.FetchPartitionData) {
	s.replicaID = req.ReplicaID
	s.readAt, s.brokerEpoch = readAt, req.BrokerEpoch
	hw := h.HWRules()
	s.hwEveryFetch, s.hwLagMs = hw.EveryFollowerFetch, hw.LagTimeMaxMs
	s.keepsLeaderEpoch = h.LeaderFetchRules().SessionKeepsLeaderEpoch
	s.parts = make([]CachedPartition, 0, len(req.Partitions))
	byPid := make([]int32, len(req.Partitions)) // the request's places, by pid once sorted
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		pid, r := h.ReplicaNamed(fp.TP)
		cp := CachedPartition{pid: pid, r: r, highWatermark: data[i].HighWatermark,
			localLogStartOffset: data[i].LogStartOffset}
		cp.updateRequestParams(fp, s.keepsLeaderEpoch)
		cp.dirty = !s.clean(&cp, &data[i])
		s.parts = append(s.parts, cp)
		byPid[i] = int32(i)
		if cp.r != nil {
			cp.r.cachedBy(s, i) // i: unless sorted below
		}
	}
	// parts is by pid; a full request lists its thread's order (orders keeps it).
	if !slices.IsSortedFunc(s.parts, func(a, b CachedPartition) int { return cmp.Compare(a.pid, b.pid) }) {
		slices.SortFunc(byPid, func(a, b int32) int { return cmp.Compare(s.parts[a].pid, s.parts[b].pid) })
		slices.SortFunc(s.parts, func(a, b CachedPartition) int { return cmp.Compare(a.pid, b.pid) })
	}
	s.pids = make([]int32, len(s.parts))
	s.nextOrder = uint64(len(s.parts))
	for i := range s.parts {
		s.parts[i].order = uint64(byPid[i]) // FullFetchContext: cachedPartitions in the request's order
		s.pids[i] = s.parts[i].pid
		if s.parts[i].dirty {
			s.dirty = append(s.dirty, int32(i))
		}
	}
}

// add adds partition pid (the broker's replica r, nil if none) with the request data of fp, dirty
// (the session has sent nothing for it yet), and puts s on r's list (FetchSession.update).
func (s *FetchSession) add(pid int32, r *Partition, fp *protocol.FetchPartition) {
	i, _ := searchPids(s.pids, pid)
	// FetchSession.update: mustAdd, last in the order.
	s.parts = slices.Insert(s.parts, i, CachedPartition{pid: pid, r: r, highWatermark: -1, localLogStartOffset: -1, order: s.nextOrder})
	s.pids = slices.Insert(s.pids, i, pid)
	s.nextOrder++
	for k, j := range s.dirty { // the partitions after it moved up one
		if int(j) >= i {
			s.dirty[k]++
		}
	}
	cp := &s.parts[i]
	cp.updateRequestParams(fp, s.keepsLeaderEpoch)
	if r != nil {
		r.cachedBy(s, i)
	}
	cp.dirty = true
	s.dirty = append(s.dirty, int32(i))
}

// remove drops partition pid from s (a forgotten partition).
func (s *FetchSession) remove(pid int32) {
	i, ok := searchPids(s.pids, pid)
	if !ok {
		return
	}
	cp := &s.parts[i]
	s.markDirty(i)      // writes down a clean partition's times
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
		r.unlink(s)
	}
	s.parts = slices.Delete(s.parts, i, i+1)
	s.pids = slices.Delete(s.pids, i, i+1)
}

// moveToEnd puts partition i last in the session's order: an incremental answer carried
// records for it (IncrementalFetchContext's PartitionIterator: partitionMap.remove, then
// mustAdd, 2.1.1 FetchSession.scala l.429-430, 3.7.0 l.492-493).
func (s *FetchSession) moveToEnd(i int32) {
	s.parts[i].order = s.nextOrder
	s.nextOrder++
}

// inOrder sorts indices into parts by the session's order.
func (s *FetchSession) inOrder(idx []int32) {
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(s.parts[a].order, s.parts[b].order) })
}

// unlinkAll takes s off its partitions' session lists; its parked fetch is forgotten.
func (s *FetchSession) unlinkAll() {
	for i := range s.parts {
		if r := s.parts[i].r; r != nil {
			r.unlink(s)
		}
	}
	s.parked = nil
}
