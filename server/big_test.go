package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkBigCluster measures one session with a large cluster over a real websocket, as the
// page uses it: load time, live heap of the session, the first (whole) overview view, then
// `advance by 1000` with view deltas and one partition in focus: wall time per simulated second
// (the real-time factor) and bytes per reply; then the engine alone (no view). It ends with the
// largest cluster that kept real time. The clusters are idle (no producers): the engine's own
// benchmark (BenchmarkSteadyCluster) measures 100,000 partitions under load.
//
//	go test -run '^$' -bench BigCluster -benchtime 1x ./server   (make bench-server)
func BenchmarkBigCluster(b *testing.B) {
	largest := ""
	for _, size := range []struct{ brokers, partitions int }{{30, 1_000}, {100, 10_000}, {200, 50_000}, {100, 100_000}, {200, 100_000}, {200, 200_000}, {1000, 1_000_000}} {
		b.Run(fmt.Sprintf("brokers=%d/partitions=%d", size.brokers, size.partitions), func(b *testing.B) {
			for b.Loop() {
				if factor := benchBig(b, size.brokers, size.partitions); factor >= 1 {
					largest = fmt.Sprintf("%d brokers × %d partitions, idle (%.2f × real time with the overview streaming)", size.brokers, size.partitions, factor)
				}
			}
		})
	}
	if largest == "" {
		largest = "none of the sizes"
	}
	// Printed, not logged: a parent benchmark's log is not shown.
	fmt.Printf("largest cluster one session ran at real time: %s\n", largest)
}

// benchBig returns simulated ms per wall ms with the overview streaming.
func benchBig(b *testing.B, brokers, partitions int) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, ts, _ := startServer(b, Config{MaxMessageBytes: 4 << 20, Compress: true})
	c, wire := dialCounting(b, ctx, ts, websocket.CompressionNoContextTakeover)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	loadOut := call(b, ctx, c, fmt.Sprintf(`{"id":1,"op":"load","noView":true,"maxEvents":1,"scenario":%s}`, bigScenario(brokers, partitions)))
	loadTime := time.Since(t0)
	if r := decodeReply(b, loadOut); r.Type != "reply" {
		b.Fatalf("load: %s", r.Error)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	first := call(b, ctx, c, `{"id":2,"op":"view",`+overviewView+`}`)
	const steps, stepMs = 5, 1000
	var wall time.Duration
	bytes := 0
	wire0 := wire.Load()
	for i := range steps {
		t0 := time.Now()
		out := call(b, ctx, c, fmt.Sprintf(`{"id":%d,"op":"advance","by":%d,%s}`, i+3, stepMs, overviewView))
		wall += time.Since(t0)
		bytes += len(out)
		if r := decodeReply(b, out); r.Type != "reply" {
			b.Fatalf("advance: %s", r.Error)
		}
	}
	var bare time.Duration // the engine alone: no view, one event
	for i := range steps {
		t0 := time.Now()
		out := call(b, ctx, c, fmt.Sprintf(`{"id":%d,"op":"advance","by":%d,"maxEvents":1,"noView":true}`, i+100, stepMs))
		bare += time.Since(t0)
		if r := decodeReply(b, out); r.Type != "reply" {
			b.Fatalf("advance: %s", r.Error)
		}
	}
	simMs := float64(steps * stepMs)
	wireBytes := wire.Load() - wire0
	factor := simMs / float64(max(1, wall.Milliseconds()))
	b.ReportMetric(loadTime.Seconds(), "load-s")
	b.ReportMetric(float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))/(1<<20), "session-MiB")
	b.ReportMetric(factor, "sim-s/wall-s")
	b.ReportMetric(simMs/float64(max(1, bare.Milliseconds())), "noview-sim-s/wall-s")
	b.ReportMetric(float64(bytes)/steps/1024, "KiB/reply")
	b.ReportMetric(float64(wireBytes)/steps/1024, "wire-KiB/reply")
	b.Logf("%d brokers, %d partitions: load %v, session heap %.0f MiB, first overview view %d KiB; advance 1 s with view deltas in %v (%.2f × real time), %.1f KiB per reply, %.1f KiB compressed on the wire; without a view 1 s takes %v",
		brokers, partitions, loadTime.Round(time.Millisecond), float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))/(1<<20), len(first)/1024,
		(wall / steps).Round(time.Millisecond), factor, float64(bytes)/steps/1024, float64(wireBytes)/steps/1024, (bare / steps).Round(time.Millisecond))
	return factor
}

// countingConn counts the bytes read off a TCP connection (what crossed the wire).
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// dialCounting dials /ws offering the given compression and counts the bytes received.
func dialCounting(tb testing.TB, ctx context.Context, ts *httptest.Server, mode websocket.CompressionMode) (*websocket.Conn, *atomic.Int64) {
	tb.Helper()
	n := &atomic.Int64{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{conn, n}, nil
	}}
	tb.Cleanup(tr.CloseIdleConnections)
	c, _, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}, CompressionMode: mode})
	if err != nil {
		tb.Fatal(err)
	}
	c.SetReadLimit(-1)
	tb.Cleanup(func() { _ = c.CloseNow() })
	return c, n
}
