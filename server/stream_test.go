package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The overview stream: what one page watching a large cluster receives. The page asks for view
// deltas (view.delta) with one partition in focus, advances time, and kills that partition's
// leader on the way, as the user path does.

const overviewView = `"maxEvents":1000,"view":{"delta":true,"detailLimit":64,"maxMessages":300,"focus":[{"topic":"t","partition":17}]}`

type streamResult struct {
	simMs      int64
	wall       time.Duration
	replies    int
	raw, wire  int64 // bytes after the first view: as JSON, and on the wire (permessage-deflate)
	first      int   // the first (whole) view's size
	largestRaw int
	states     string // the overview letters at the end (a whole view)
}

// openOverview starts a server, loads the cluster and takes the first (whole) overview view. It
// returns the connection, its count of bytes received, and the view's size.
func openOverview(tb testing.TB, ctx context.Context, brokers, partitions int) (*websocket.Conn, *atomic.Int64, int) {
	_, ts, _ := startServer(tb, Config{MaxMessageBytes: 4 << 20, Compress: true})
	c, wire := dialCounting(tb, ctx, ts, websocket.CompressionNoContextTakeover)
	load := fmt.Sprintf(`{"id":1,"op":"load","noView":true,"maxEvents":1,"scenario":%s}`, bigScenario(brokers, partitions))
	if r := decodeReply(tb, call(tb, ctx, c, load)); r.Type != "reply" {
		tb.Fatalf("load: %s", r.Error)
	}
	return c, wire, len(call(tb, ctx, c, `{"id":2,"op":"view",`+overviewView+`}`))
}

// streamOverview advances in steps of stepMs until simMs, killing broker 17 (orders-17's leader)
// at killAt, and ends with a whole view (for its state letters).
func streamOverview(tb testing.TB, brokers, partitions int, stepMs, simMs, killAt int64) streamResult {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, wire, first := openOverview(tb, ctx, brokers, partitions)
	res := streamResult{first: first}
	wire0 := wire.Load()
	t, id := int64(0), int64(3)
	killed := false
	start := time.Now()
	for {
		var req string
		switch {
		case !killed && t >= killAt:
			killed = true
			req = fmt.Sprintf(`{"id":%d,"op":"apply","action":{"do":"kill","broker":17},%s}`, id, overviewView)
		default:
			if t >= simMs {
				res.simMs, res.wall = t, time.Since(start)
				res.wire = wire.Load() - wire0
				if v := decodeReply(tb, call(tb, ctx, c, fmt.Sprintf(`{"id":%d,"op":"view","noView":false}`, id))).View; v != nil {
					res.states = v.States
				}
				return res
			}
			req = fmt.Sprintf(`{"id":%d,"op":"advance","to":%d,%s}`, id, t+stepMs, overviewView)
		}
		id++
		out := call(tb, ctx, c, req)
		r := decodeReply(tb, out)
		if r.Type != "reply" {
			tb.Fatalf("%.80s: %s", req, r.Error)
		}
		if r.View != nil {
			tb.Fatalf("a whole view after the first (reply %d): deltas were not used", id-1)
		}
		t = r.T
		res.replies++
		res.raw += int64(len(out))
		res.largestRaw = max(res.largestRaw, len(out))
	}
}

// playOverview is what the page does on the native backend: server-paced play at 1× with frames
// every 50 ms, for wall time, killing broker 17 at killAt simulated ms.
func playOverview(tb testing.TB, brokers, partitions int, killAt int64, wall time.Duration) streamResult {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, wire, first := openOverview(tb, ctx, brokers, partitions)
	res := streamResult{first: first}
	wire0 := wire.Load()
	start := time.Now()
	send := func(req string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			tb.Fatal(err)
		}
	}
	send(`{"id":3,"op":"play","speed":1,"intervalMs":50,` + overviewView + `}`)
	killed, paused := false, false
	for {
		_, out, err := c.Read(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		r := decodeReply(tb, out)
		if r.Type != "reply" {
			tb.Fatalf("play: %s", r.Error)
		}
		switch {
		case r.ID == 5: // the pause's answer: the end
			res.simMs, res.wall = r.T, time.Since(start)
			res.wire = wire.Load() - wire0
			return res
		case r.View != nil && r.ID != 3:
			tb.Fatalf("a whole view in reply %d: deltas were not used", r.ID)
		}
		res.replies++
		res.raw += int64(len(out))
		res.largestRaw = max(res.largestRaw, len(out))
		if !killed && r.T >= killAt {
			killed = true
			send(`{"id":4,"op":"apply","action":{"do":"kill","broker":17},` + overviewView + `}`)
		}
		if !paused && time.Since(start) >= wall {
			paused = true
			send(`{"id":5,"op":"pause",` + overviewView + `}`)
		}
	}
}

// TestOverviewStreamBound: at 20 brokers × 10,000 partitions, 25 simulated seconds in 100 ms steps
// (the page's step at real time), with a leader killed and its 500 partitions moved on the way
// (the controller acts when the ZooKeeper session expires, 18 s later), stream under 100 KB per
// simulated second, as JSON before compression. Byte counts are deterministic; time is not
// measured here (BenchmarkOverviewStream does).
func TestOverviewStreamBound(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 10,000-partition cluster")
	}
	t.Parallel()
	r := streamOverview(t, 20, 10_000, 100, 25_000, 2_000)
	if u := strings.Count(r.states, "u"); u != 1500 {
		t.Fatalf("%d partitions under-replicated at the end, want 1,500 (the dead broker's replicas)", u)
	}
	perSimS := float64(r.raw) / (float64(r.simMs) / 1000)
	t.Logf("20 × 10,000: first view %d KiB, then %d replies, %.1f KiB per simulated second as JSON (%.1f on the wire), largest reply %d KiB",
		r.first>>10, r.replies, perSimS/1024, float64(r.wire)/(float64(r.simMs)/1000)/1024, r.largestRaw>>10)
	if perSimS > 100*1024 {
		t.Fatalf("%.0f KiB per simulated second streamed; the goal is at most 100", perSimS/1024)
	}
}

// BenchmarkOverviewStream measures the 100,000-partition overview stream (100 brokers, RF 3):
//
//   - per simulated second, in the page's 100 ms steps (what a client receives per second when
//     the engine keeps real time), as JSON and on the wire;
//
//   - played by the server at 1× for 20 s of wall time as the page asks (a frame every 50 ms):
//     bytes per wall second, and the simulated seconds reached.
//
//     go test -run '^$' -bench OverviewStream -benchtime 1x ./server   (make bench-server)
func BenchmarkOverviewStream(b *testing.B) {
	for b.Loop() {
		r := streamOverview(b, 100, 100_000, 100, 30_000, 5_000)
		simS := float64(r.simMs) / 1000
		b.ReportMetric(float64(r.raw)/simS/1024, "KiB/sim-s")
		b.ReportMetric(float64(r.wire)/simS/1024, "wire-KiB/sim-s")
		b.Logf("100 × 100,000, 100 ms steps: first view %d KiB; then %d replies over %.0f simulated s: %.1f KiB per simulated second as JSON, %.1f on the wire; largest reply %d KiB (the kill)",
			r.first>>10, r.replies, simS, float64(r.raw)/simS/1024, float64(r.wire)/simS/1024, r.largestRaw>>10)
		p := playOverview(b, 100, 100_000, 5_000, 20*time.Second)
		wallS := p.wall.Seconds()
		b.ReportMetric(float64(p.raw)/wallS/1024, "KiB/wall-s")
		b.ReportMetric(float64(p.wire)/wallS/1024, "wire-KiB/wall-s")
		b.Logf("100 × 100,000, played by the server at 1× for %.0f s (frames every 50 ms): %d frames (%.1f/s), %.1f KiB/s as JSON, %.1f KiB/s on the wire; reached %.1f simulated s (%.2f × real time)",
			wallS, p.replies, float64(p.replies)/wallS, float64(p.raw)/wallS/1024, float64(p.wire)/wallS/1024, float64(p.simMs)/1000, float64(p.simMs)/1000/wallS)
	}
}
