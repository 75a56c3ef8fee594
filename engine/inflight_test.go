package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInFlightTable checks the in-flight table against a map under sends, answers and
// forgetting in random order, with ids that wrap the table many times (old requests stay
// while new ones probe past them).
func TestInFlightTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var f inFlight
	want := map[uint64]*Message{}
	next := uint64(0)
	for round := range 200_000 {
		switch r := rng.IntN(10); {
		case r < 5 || len(want) == 0:
			next++
			m := &Message{ID: next}
			f.put(m)
			want[next] = m
		case r < 9:
			// Mostly a recent request, sometimes one that waited long.
			id := next - uint64(rng.IntN(min(int(next), 64)))
			if rng.IntN(8) == 0 {
				id = uint64(1 + rng.IntN(int(next)))
			}
			f.remove(id)
			delete(want, id)
		default:
			id := uint64(1 + rng.IntN(int(next)+5))
			if got := f.get(id); got != want[id] {
				t.Fatalf("round %d: get(%d) = %v, want %v", round, id, got, want[id])
			}
		}
		if f.n != len(want) {
			t.Fatalf("round %d: %d in flight, want %d", round, f.n, len(want))
		}
	}
	if ids := f.ids(); !slices.Equal(ids, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("ids differ from the map's keys")
	}
	for id, m := range want {
		if f.get(id) != m {
			t.Fatalf("get(%d) lost its request", id)
		}
	}
}
