package broker

import (
	"cmp"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The leader's FetchSessionCache (KIP-227, FetchSession.scala): the sessions of the followers
// fetching from a broker, the ids it gives out and which session a new one may evict. What a
// session caches per partition is fetch_session.go's; how a fetch reads it, leader_fetch.go's.

// MinIncrementalFetchSessionEvictionMs is KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS:
// a constant in Kafka, not a setting. A session unused for longer is stale; one created longer
// ago may be evicted for a larger or privileged one.
const MinIncrementalFetchSessionEvictionMs = 120_000

// FetchSessionCache is a broker's FetchSessionCache; it is lost with the process.
type FetchSessionCache struct {
	// sessions are sorted by id.
	sessions []*FetchSession
	// nextID: Kafka draws a random unused id; here a per-broker counter, so that ids are
	// deterministic without a draw from the engine's PRNG (which would move every jitter draw).
	// It survives restarts, as random ids would not repeat: a follower holding a session id from
	// before the leader's restart gets FETCH_SESSION_ID_NOT_FOUND, not another follower's session.
	nextID int32
}

func byID(s *FetchSession, id int32) int { return cmp.Compare(s.id, id) }

// Get is the session id, or nil if the cache has none.
func (c *FetchSessionCache) Get(id int32) *FetchSession {
	i, ok := slices.BinarySearchFunc(c.sessions, id, byID)
	if !ok {
		return nil
	}
	return c.sessions[i]
}

// Sessions are the cached sessions, by id. The slice is the cache's: callers only read it.
func (c *FetchSessionCache) Sessions() []*FetchSession { return c.sessions }

// Len is how many sessions the cache holds.
func (c *FetchSessionCache) Len() int { return len(c.sessions) }

// Clear drops every session (the process stopped); ids go on from where they were.
func (c *FetchSessionCache) Clear() { c.sessions = nil }

// newSessionID is FetchSessionCache.newSessionId: positive and unused on this broker.
func (c *FetchSessionCache) newSessionID() int32 {
	for {
		c.nextID++
		if c.nextID <= 0 {
			c.nextID = 1
		}
		if c.Get(c.nextID) == nil {
			return c.nextID
		}
	}
}

// Touch is FetchSessionCache.touch: the session was used at now, and its size and age decide
// which evictable trees it is in.
func (c *FetchSessionCache) Touch(s *FetchSession, now int64) {
	s.lastUsedMs = now
	s.cachedSize = s.Size()
	old := now-s.creationMs > MinIncrementalFetchSessionEvictionMs
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

// MaybeCreateSession is FetchSessionCache.maybeCreateSession: a new session of size partitions,
// whose partitions fill caches, if there are fewer than maxSlots sessions or one can be evicted
// (tryEvict, which takes it out through remove); else nil.
func (c *FetchSessionCache) MaybeCreateSession(now, maxSlots int64, privileged bool, size int,
	remove func(*FetchSession), fill func(*FetchSession)) *FetchSession {
	if int64(len(c.sessions)) >= maxSlots && !c.tryEvict(now, privileged, size, remove) {
		return nil
	}
	s := &FetchSession{id: c.newSessionID(), privileged: privileged, creationMs: now,
		epoch: protocol.NextSessionEpoch(protocol.InitialEpoch), cachedSize: -1}
	fill(s)
	i, _ := slices.BinarySearchFunc(c.sessions, s.id, byID)
	c.sessions = slices.Insert(c.sessions, i, s)
	c.Touch(s, now)
	return s
}

// tryEvict is FetchSessionCache.tryEvict: the least recently used session if it is stale; else
// the first evictable one (for a privileged newcomer, among the unprivileged and the old, else
// among the old only), if the newcomer's key is not below it. Kafka keeps both orders in trees;
// the cache here is scanned, only when it is full. remove takes the session out (Remove, and
// whatever its owner does with a closed session).
func (c *FetchSessionCache) tryEvict(now int64, privileged bool, size int, remove func(*FetchSession)) bool {
	var lru, first *FetchSession
	for _, s := range c.sessions {
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
	case now-lru.lastUsedMs > MinIncrementalFetchSessionEvictionMs:
		remove(lru)
		return true
	case first == nil || evictableLess(privileged, size, 0, first.privileged, first.cachedSize, first.id):
		return false
	}
	remove(first)
	return true
}

// Remove takes s out of the cache (FetchSessionCache.remove); false if it was not there.
func (c *FetchSessionCache) Remove(s *FetchSession) bool {
	i, ok := slices.BinarySearchFunc(c.sessions, s.id, byID)
	if ok && c.sessions[i] == s {
		c.sessions = slices.Delete(c.sessions, i, i+1)
		return true
	}
	return false
}
