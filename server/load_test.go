package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine/session"
)

// loadResult is what a load run measured.
type loadResult struct {
	sessions, requests, errors int
	firstErrors                []string
	p50, p90, p99, max         time.Duration
	wall                       time.Duration
	heapGrowth                 uint64 // peak live heap above the start (server and clients share the process)
	bytesIn                    int64  // reply bytes read by the clients
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d sessions, %d requests in %v (%.0f req/s), %d errors; latency p50 %v p90 %v p99 %v max %v; heap growth peak %.1f MiB; %.1f MiB of replies",
		r.sessions, r.requests, r.wall.Round(time.Millisecond), float64(r.requests)/r.wall.Seconds(), r.errors,
		r.p50, r.p90, r.p99, r.max, float64(r.heapGrowth)/(1<<20), float64(r.bytesIn)/(1<<20))
}

// runLoad opens `sessions` websocket sessions at once on loopback; each loads the scenario and
// sends `requests` more (advance 200 ms with a view; a kill at the fifth, a restart at the tenth),
// one at a time as the page does. Everything is bounded by ctx.
func runLoad(ctx context.Context, t testing.TB, sessions, requests int, scenario string, compress bool) loadResult {
	_, ts, _ := startServer(t, Config{MaxSessions: sessions, Compress: compress})
	var dialOpts *websocket.DialOptions
	if compress {
		dialOpts = &websocket.DialOptions{CompressionMode: websocket.CompressionNoContextTakeover}
	}
	var mu sync.Mutex
	var res loadResult
	var lat []time.Duration
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		res.errors++
		if len(res.firstErrors) < 5 {
			res.firstErrors = append(res.firstErrors, fmt.Sprintf(format, args...))
		}
	}
	h := sampleHeap()
	start := time.Now()
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			c, _, err := websocket.Dial(ctx, wsURL(ts), dialOpts)
			if err != nil {
				fail("session %d: dial: %v", s, err)
				return
			}
			defer c.CloseNow()
			c.SetReadLimit(-1)
			mine := make([]time.Duration, 0, requests+1)
			var in int64
			for i := range requests + 1 {
				req := fmt.Sprintf(`{"id":%d,"op":"advance","by":200,"maxEvents":500,"view":{"noRecords":true}}`, i)
				switch i {
				case 0:
					req = loadReq(0, scenario)
				case 5:
					req = fmt.Sprintf(`{"id":%d,"op":"apply","action":{"do":"kill","broker":1}}`, i)
				case 10:
					req = fmt.Sprintf(`{"id":%d,"op":"apply","action":{"do":"restart","broker":1}}`, i)
				}
				t0 := time.Now()
				if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
					fail("session %d request %d: write: %v", s, i, err)
					return
				}
				_, out, err := c.Read(ctx)
				if err != nil {
					fail("session %d request %d: read: %v", s, i, err)
					return
				}
				mine = append(mine, time.Since(t0))
				in += int64(len(out))
				if id, _ := peek(out); id != int64(i) || !slices.Equal(out[:len(`{"id":`)], []byte(`{"id":`)) {
					fail("session %d request %d: reply id %d", s, i, id)
				} else if r := decodeReply(t, out); r.Type != "reply" {
					fail("session %d request %d: %s", s, i, r.Error)
				}
			}
			_ = c.Close(websocket.StatusNormalClosure, "")
			mu.Lock()
			lat = append(lat, mine...)
			res.bytesIn += in
			mu.Unlock()
		})
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.heapGrowth = h.growth()
	res.sessions, res.requests = sessions, len(lat)
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		res.p50, res.p90, res.p99, res.max = lat[n*50/100], lat[n*90/100], lat[n*99/100], lat[n-1]
	}
	return res
}

// TestLoad runs 100 concurrent sessions (20 in -short mode) of 20 requests each on loopback and
// reports errors, latency percentiles and memory. BenchmarkLoad is the heavy variant.
func TestLoad(t *testing.T) {
	sessions, requests := 100, 20
	if testing.Short() {
		sessions, requests = 20, 5
	}
	ctx := testCtx(t, 60*time.Second)
	res := runLoad(ctx, t, sessions, requests, readScenario(t, "leader-crash-truncation.json"), false)
	t.Log(res)
	if res.errors > 0 {
		t.Errorf("%d errors, first: %q", res.errors, res.firstErrors)
	}
	if want := sessions * (requests + 1); res.requests != want {
		t.Errorf("%d requests answered, want %d", res.requests, want)
	}
}

// BenchmarkLoad: 100 concurrent sessions of 200 requests each, per iteration, without and with
// permessage-deflate (what browsers negotiate). Run with
// `go test -run '^$' -bench Load -benchtime 1x ./server` (make bench-server).
func BenchmarkLoad(b *testing.B) {
	scenario := readScenario(b, "leader-crash-truncation.json")
	for _, compress := range []bool{false, true} {
		b.Run(fmt.Sprintf("compress=%v", compress), func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				res := runLoad(ctx, b, 100, 200, scenario, compress)
				cancel()
				b.Log(res)
				if res.errors > 0 {
					b.Errorf("%d errors, first: %q", res.errors, res.firstErrors)
				}
				b.ReportMetric(float64(res.p50.Microseconds()), "p50-µs")
				b.ReportMetric(float64(res.p99.Microseconds()), "p99-µs")
				b.ReportMetric(float64(res.requests)/res.wall.Seconds(), "req/s")
				b.ReportMetric(float64(res.heapGrowth)/(1<<20), "heap-MiB")
			}
		})
	}
}

// BenchmarkRoundTrip compares one small request (advance 100 ms, no view) answered by
// session.HandleJSON directly with the same through the websocket: the server's overhead.
func BenchmarkRoundTrip(b *testing.B) {
	scenario := readScenario(b, "leader-crash-truncation.json")
	const req = `{"id":2,"op":"advance","by":100,"noView":true}`
	b.Run("direct", func(b *testing.B) {
		s := session.New(session.Limits{})
		s.HandleJSON([]byte(loadReq(1, scenario)))
		for b.Loop() {
			s.HandleJSON([]byte(req))
		}
	})
	b.Run("websocket", func(b *testing.B) {
		ctx := testCtx(b, 5*time.Minute)
		_, ts, _ := startServer(b, Config{MaxAdvanceMs: 1 << 40})
		c := dial(b, ctx, ts)
		call(b, ctx, c, loadReq(1, scenario))
		for b.Loop() {
			call(b, ctx, c, req)
		}
	})
}
