package broker

import (
	"slices"
	"testing"
)

// fakeSession is a cached session with no partitions of its own, only a size.
type fakeSession struct {
	FetchSession
	size int
}

func (s *fakeSession) Meta() *FetchSession { return &s.FetchSession }
func (s *fakeSession) Size() int           { return s.size }

// TestFetchSessionCacheOnItsOwn follows FetchSessionTest.testSessionCache and
// .testPrivilegedSessionHandling with no engine: a full cache creates no session while nothing is
// evictable, a stale session is evicted first, then the smallest old one; a privileged newcomer
// may evict an unprivileged young one.
func TestFetchSessionCacheOnItsOwn(t *testing.T) {
	var c FetchSessionCache[*fakeSession]
	create := func(now int64, privileged bool, size int) int32 {
		s := c.MaybeCreateSession(now, 3, privileged, size, func(s *fakeSession) { c.Remove(s) },
			func(m FetchSession) *fakeSession { return &fakeSession{FetchSession: m, size: size} })
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
