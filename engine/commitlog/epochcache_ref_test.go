package commitlog

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refCache is the epoch cache as one slice, as it was before it kept its latest entry inline:
// the literal version EpochCache is held to.
type refCache struct{ entries []EpochEntry }

func (c *refCache) assign(e int32, o int64) {
	if n := len(c.entries); n > 0 && c.entries[n-1].Epoch == e && c.entries[n-1].StartOffset <= o {
		return
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= e || c.entries[n-1].StartOffset >= o) {
		n--
	}
	c.entries = append(c.entries[:n:n], EpochEntry{Epoch: e, StartOffset: o})
}

func (c *refCache) truncateFromEnd(o int64) {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= o {
		n--
	}
	c.entries = c.entries[:n:n]
}

func (c *refCache) truncateFromStart(o int64) {
	last := -1
	for i, en := range c.entries {
		if en.StartOffset <= o {
			last = i
		}
	}
	if last < 0 {
		return
	}
	c.entries = append([]EpochEntry{{Epoch: c.entries[last].Epoch, StartOffset: o}}, c.entries[last+1:]...)
}

func (c *refCache) endOffsetFor(req int32, leo int64) (int32, int64) {
	n := len(c.entries)
	switch {
	case req == Undefined || n == 0:
		return Undefined, Undefined
	case req == c.entries[n-1].Epoch:
		return req, leo
	}
	for i, en := range c.entries {
		if en.Epoch > req {
			if i == 0 {
				return req, en.StartOffset
			}
			return c.entries[i-1].Epoch, en.StartOffset
		}
	}
	return Undefined, Undefined
}

// TestEpochCacheMatchesSlice drives an EpochCache and the one-slice version with random assigns
// (with and without a buffer), truncations, clears and clones: their entries (nil or not, which
// a trace tells apart), latest epoch, length and endOffsetFor answers agree at every step.
func TestEpochCacheMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := 0; round < 300; round++ {
		var c EpochCache
		var r refCache
		for step := 0; step < 40; step++ {
			e, o := int32(rng.IntN(8))-1, int64(rng.IntN(40))
			switch rng.IntN(7) {
			case 0, 1:
				c.Assign(e, o)
				r.assign(e, o)
			case 2:
				c.AssignIn(make([]EpochEntry, 0, rng.IntN(4)), e, o)
				r.assign(e, o)
			case 3:
				c.TruncateFromEnd(o)
				r.truncateFromEnd(o)
			case 4:
				c.TruncateFromStart(o)
				r.truncateFromStart(o)
			case 5:
				if rng.IntN(4) == 0 {
					c.Clear()
					r.entries = nil
				}
			case 6:
				c = c.Clone()
				r.entries = append([]EpochEntry(nil), r.entries...)
			}
			got := c.Entries()
			if !slices.Equal(got, r.entries) || (got == nil) != (r.entries == nil) || c.Len() != len(r.entries) {
				t.Fatalf("round %d step %d: entries %v (nil %v), want %v (nil %v)", round, step, got, got == nil, r.entries, r.entries == nil)
			}
			want := int32(Undefined)
			if n := len(r.entries); n > 0 {
				want = r.entries[n-1].Epoch
			}
			if c.Latest() != want {
				t.Fatalf("round %d step %d: latest %d, want %d", round, step, c.Latest(), want)
			}
			for req := int32(-1); req < 8; req++ {
				ge, go_ := c.EndOffsetFor(req, 50)
				we, wo := r.endOffsetFor(req, 50)
				if ge != we || go_ != wo {
					t.Fatalf("round %d step %d: endOffsetFor(%d) = (%d,%d), want (%d,%d)", round, step, req, ge, go_, we, wo)
				}
			}
		}
	}
}
