package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestFetchSessionCacheOnItsOwn follows FetchSessionTest.testSessionCache and
// .testPrivilegedSessionHandling with no engine: a full cache creates no session while nothing is
// evictable, a stale session is evicted first, then the smallest old one; a privileged newcomer
// may evict an unprivileged young one.
func TestFetchSessionCacheOnItsOwn(t *testing.T) {
	var c FetchSessionCache
	create := func(now int64, privileged bool, size int) int32 {
		// A session of size partitions of no replica (only its size counts here).
		s := c.MaybeCreateSession(now, 3, privileged, size, func(s *FetchSession) { c.Remove(s) },
			func(s *FetchSession) { s.parts = make([]CachedPartition, size) })
		if s == nil {
			return 0
		}
		return s.ID()
	}
	ids := func() []int32 {
		var out []int32
		for _, s := range c.Sessions() {
			out = append(out, s.ID())
		}
		return out
	}
	const min = MinIncrementalFetchSessionEvictionMs
	id1, id2, id3 := create(0, false, 10), create(10, false, 20), create(20, false, 30)
	if !slices.Equal(ids(), []int32{1, 2, 3}) || c.Get(id2).Epoch() != 1 {
		t.Fatalf("sessions %v", ids())
	}
	if create(30, false, 40) != 0 {
		t.Error("a session was created with the cache full and nothing evictable")
	}
	c.Touch(c.Get(id1), min+5)
	c.Touch(c.Get(id3), min+5)
	id4 := create(min+11, false, 11) // id2 is stale (last used at 10)
	if !slices.Equal(ids(), []int32{id1, id3, id4}) {
		t.Fatalf("after evicting the stale session: %v", ids())
	}
	id5 := create(min+12, true, 5) // privileged: evicts the smallest unprivileged, id1 (10)
	if !slices.Equal(ids(), []int32{id3, id4, id5}) {
		t.Fatalf("after a privileged newcomer: %v", ids())
	}
	c.Clear()
	if c.Len() != 0 || create(min+13, false, 1) != id5+1 {
		t.Error("ids do not go on after the cache is cleared")
	}
}

// TestKafkaFetchSessionCache ports FetchSessionTest.testSessionCache (times × 1,200): with 3
// slots, no new session while none is stale or evictable; a session unused for longer than the
// eviction time is evicted first; then the first evictable one (older than the eviction time,
// smallest) if the newcomer is not smaller; a privileged newcomer evicts an unprivileged one.
func TestKafkaFetchSessionCache(t *testing.T) {
	var fetchers FetcherManager
	rm := NewReplicaManager(0, &fetchers)
	c := rm.FetchSessions()
	at := func(ms int64) int64 { return ms * 1200 }
	create := func(ms int64, privileged bool, size int) int32 {
		t.Helper()
		s := c.MaybeCreateSession(at(ms), 3, privileged, size, rm.removeSession, func(s *FetchSession) {
			for i := range size {
				s.parts = append(s.parts, CachedPartition{pid: int32(i), highWatermark: -1, localLogStartOffset: -1})
			}
		})
		if s == nil {
			return protocol.InvalidSessionID
		}
		return s.ID()
	}
	contains := func(ids ...int32) {
		t.Helper()
		var got []int32
		for _, s := range c.Sessions() {
			got = append(got, s.ID())
		}
		if !slices.Equal(got, ids) {
			t.Errorf("cache holds sessions %v, want %v", got, ids)
		}
	}
	touch := func(id int32, ms int64) { c.Touch(c.Get(id), at(ms)) }
	id1, id2, id3 := create(0, false, 10), create(10, false, 20), create(20, false, 30)
	if create(30, false, 40) != protocol.InvalidSessionID || create(40, false, 5) != protocol.InvalidSessionID {
		t.Error("a session was created with the cache full and nothing evictable")
	}
	contains(id1, id2, id3)
	touch(id1, 200)
	id4 := create(210, false, 11) // id2 is stale (last used at 10)
	contains(id1, id3, id4)
	touch(id1, 400)
	touch(id3, 390)
	touch(id4, 400)
	id5 := create(410, false, 50) // evicts the smallest evictable: id1 (10 partitions)
	contains(id3, id4, id5)
	if create(410, false, 5) != protocol.InvalidSessionID {
		t.Error("a smaller unprivileged session evicted a larger one")
	}
	id6 := create(410, true, 5) // privileged: evicts the first unprivileged, id4 (11)
	contains(id3, id5, id6)
}
