package broker

import (
	"cmp"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The leader's FetchSessionCache (KIP-227, FetchSession.scala): the sessions of the followers
// fetching from a broker, the ids it gives out and which session a new one may evict. What a
// session caches per partition (CachedPartition) and how a fetch reads it are still the engine's
// (engine/fetch_session.go, leader_fetch.go); the engine's session embeds FetchSession, the part
// the cache orders sessions by, and the cache holds the engine's sessions (S).

// MinIncrementalFetchSessionEvictionMs is KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS:
// a constant in Kafka, not a setting. A session unused for longer is stale; one created longer
// ago may be evicted for a larger or privileged one.
const MinIncrementalFetchSessionEvictionMs = 120_000

// FetchSession is what Kafka's FetchSession holds besides its partitions: its id, whose it is,
// the epoch its next fetch must carry, and what the cache's eviction orders read.
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
}

func (s *FetchSession) ID() int32         { return s.id }
func (s *FetchSession) Privileged() bool  { return s.privileged }
func (s *FetchSession) ReplicaID() int32  { return s.replicaID }
func (s *FetchSession) Epoch() int32      { return s.epoch }
func (s *FetchSession) LastUsedMs() int64 { return s.lastUsedMs }
func (s *FetchSession) CachedSize() int   { return s.cachedSize }

// EvictableByAll reports whether the last touch put the session in evictableByAll (old enough
// for any newcomer to evict).
func (s *FetchSession) EvictableByAll() bool { return s.byAll }

// SetReplicaID names the follower whose fetch created the session.
func (s *FetchSession) SetReplicaID(id int32) { s.replicaID = id }

// NextEpoch moves the epoch the next fetch must carry on (an incremental fetch was accepted).
func (s *FetchSession) NextEpoch() { s.epoch = protocol.NextSessionEpoch(s.epoch) }

// Session is a cached session: the engine's, with its partitions, around a FetchSession.
type Session interface {
	comparable
	// Meta is the session's FetchSession.
	Meta() *FetchSession
	// Size is how many partitions it caches (FetchSession.size).
	Size() int
}

// FetchSessionCache is a broker's FetchSessionCache; it is lost with the process.
type FetchSessionCache[S Session] struct {
	// sessions are sorted by id.
	sessions []S
	// nextID: Kafka draws a random unused id; here a per-broker counter, so that ids are
	// deterministic without a draw from the engine's PRNG (which would move every jitter draw).
	// It survives restarts, as random ids would not repeat: a follower holding a session id from
	// before the leader's restart gets FETCH_SESSION_ID_NOT_FOUND, not another follower's session.
	nextID int32
}

func byID[S Session](s S, id int32) int { return cmp.Compare(s.Meta().id, id) }

// Get is the session id, or the zero S (nil) if the cache has none.
func (c *FetchSessionCache[S]) Get(id int32) S {
	i, ok := slices.BinarySearchFunc(c.sessions, id, byID[S])
	if !ok {
		var none S
		return none
	}
	return c.sessions[i]
}

// Sessions are the cached sessions, by id. The slice is the cache's: callers only read it.
func (c *FetchSessionCache[S]) Sessions() []S { return c.sessions }

// Len is how many sessions the cache holds.
func (c *FetchSessionCache[S]) Len() int { return len(c.sessions) }

// Clear drops every session (the process stopped); ids go on from where they were.
func (c *FetchSessionCache[S]) Clear() { c.sessions = nil }

// newSessionID is FetchSessionCache.newSessionId: positive and unused on this broker.
func (c *FetchSessionCache[S]) newSessionID() int32 {
	var none S
	for {
		c.nextID++
		if c.nextID <= 0 {
			c.nextID = 1
		}
		if c.Get(c.nextID) == none {
			return c.nextID
		}
	}
}

// Touch is FetchSessionCache.touch: the session was used at now, and its size and age decide
// which evictable trees it is in.
func (c *FetchSessionCache[S]) Touch(s S, now int64) {
	m := s.Meta()
	m.lastUsedMs = now
	m.cachedSize = s.Size()
	old := now-m.creationMs > MinIncrementalFetchSessionEvictionMs
	m.byPrivileged = !m.privileged || old
	m.byAll = old
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

// MaybeCreateSession is FetchSessionCache.maybeCreateSession: a new session of size partitions,
// made by create from its FetchSession, if there are fewer than maxSlots sessions or one can be
// evicted (tryEvict, which takes it out through remove); else the zero S (nil).
func (c *FetchSessionCache[S]) MaybeCreateSession(now, maxSlots int64, privileged bool, size int,
	remove func(S), create func(FetchSession) S) S {
	if int64(len(c.sessions)) >= maxSlots && !c.tryEvict(now, privileged, size, remove) {
		var none S
		return none
	}
	s := create(FetchSession{id: c.newSessionID(), privileged: privileged, creationMs: now,
		epoch: protocol.NextSessionEpoch(protocol.InitialEpoch), cachedSize: -1})
	i, _ := slices.BinarySearchFunc(c.sessions, s.Meta().id, byID[S])
	c.sessions = slices.Insert(c.sessions, i, s)
	c.Touch(s, now)
	return s
}

// tryEvict is FetchSessionCache.tryEvict: the least recently used session if it is stale; else
// the first evictable one (for a privileged newcomer, among the unprivileged and the old, else
// among the old only), if the newcomer's key is not below it. Kafka keeps both orders in trees;
// the cache here is scanned, only when it is full. remove takes the session out (Remove, and
// whatever its owner does with a closed session).
func (c *FetchSessionCache[S]) tryEvict(now int64, privileged bool, size int, remove func(S)) bool {
	var lru, first *FetchSession
	var lruS, firstS S
	for _, x := range c.sessions {
		s := x.Meta()
		if lru == nil || s.lastUsedMs < lru.lastUsedMs || (s.lastUsedMs == lru.lastUsedMs && s.id < lru.id) {
			lru, lruS = s, x
		}
		in := s.byAll // evictableByAll, or for a privileged newcomer evictableByPrivileged
		if privileged {
			in = s.byPrivileged
		}
		if in && (first == nil || evictableLess(s.privileged, s.cachedSize, s.id, first.privileged, first.cachedSize, first.id)) {
			first, firstS = s, x
		}
	}
	switch {
	case lru == nil:
		return false
	case now-lru.lastUsedMs > MinIncrementalFetchSessionEvictionMs:
		remove(lruS)
		return true
	case first == nil || evictableLess(privileged, size, 0, first.privileged, first.cachedSize, first.id):
		return false
	}
	remove(firstS)
	return true
}

// Remove takes s out of the cache (FetchSessionCache.remove); false if it was not there.
func (c *FetchSessionCache[S]) Remove(s S) bool {
	i, ok := slices.BinarySearchFunc(c.sessions, s.Meta().id, byID[S])
	if ok && c.sessions[i] == s {
		c.sessions = slices.Delete(c.sessions, i, i+1)
		return true
	}
	return false
}
