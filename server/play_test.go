package server

import (
	"testing"
	"time"
)

func TestPlayerTarget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type tick struct {
		now    int64 // engine time when the frame is built
		wallMs int64 // wall time since play began
		want   int64
	}
	for _, tc := range []struct {
		name       string
		speed      float64
		startSim   int64
		maxAdvance int64
		ticks      []tick
	}{
		{"real time", 1, 0, 600_000, []tick{{0, 100, 100}, {100, 200, 200}, {200, 250, 250}}},
		{"speed 10", 10, 0, 600_000, []tick{{0, 100, 1000}, {1000, 200, 2000}}},
		{"slow, under a ms per frame", 0.001, 0, 600_000, []tick{{0, 100, 0}, {0, 1000, 1}, {1, 1500, 1}}},
		// A frame that took long: at most 4 intervals (400 ms × speed) + 1, then the pace restarts.
		{"behind", 1, 0, 600_000, []tick{{0, 100, 100}, {100, 5000, 501}, {501, 5100, 601}}},
		{"behind, capped by max-advance", 1000, 0, 2_000, []tick{{0, 100, 2000}, {2000, 200, 4000}}},
		// The page sought forward to 50 s: the pace restarts there instead of stalling.
		{"ahead after a seek", 1, 0, 600_000, []tick{{0, 100, 100}, {50_000, 200, 50_000}, {50_000, 300, 50_100}}},
		// Play began at 50 s and the page sought back to 1 s: bounded steps from there.
		{"after a seek back", 1, 50_000, 600_000, []tick{{50_000, 100, 50_100}, {1000, 200, 1401}, {1401, 300, 1501}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &player{speed: tc.speed, startWall: t0, startSim: tc.startSim, req: playRequest{IntervalMs: 100, ChunkMs: 1000}}
			for i, k := range tc.ticks {
				if got := p.target(k.now, at(k.wallMs), tc.maxAdvance); got != k.want {
					t.Fatalf("tick %d (now %d, wall +%d ms): target %d, want %d", i, k.now, k.wallMs, got, k.want)
				}
			}
		})
	}
	p := &player{speed: 0, req: playRequest{ChunkMs: 250}}
	if got := p.target(1000, t0, 600_000); got != 1250 {
		t.Errorf("flat out: %d, want 1250", got)
	}
}
