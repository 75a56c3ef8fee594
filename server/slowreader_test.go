package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// heapSampler records the peak live heap while a test runs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	base uint64
	peak uint64
}

func sampleHeap() *heapSampler {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{}), base: ms.HeapAlloc, peak: ms.HeapAlloc}
	go func() {
		defer close(h.done)
		tk := time.NewTicker(2 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tk.C:
				runtime.ReadMemStats(&ms)
				h.peak = max(h.peak, ms.HeapAlloc)
			}
		}
	}()
	return h
}

// growth stops sampling and returns the peak heap above the starting heap, in bytes.
func (h *heapSampler) growth() uint64 {
	close(h.stop)
	<-h.done
	return h.peak - h.base
}

// TestSlowReaderMemoryBound: a client that sends many requests for large replies and reads none
// costs the server at most one reply plus one waiting request; after the write timeout it is
// disconnected. Not parallel: it measures the heap.
func TestSlowReaderMemoryBound(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	srv, ts, logs := startServer(t, Config{WriteTimeout: time.Second, MinWriteRate: 1 << 40})
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, loadReq(1, bigScenario(6, 3000)))
	callOK(t, ctx, c, 2, `{"id":2,"op":"advance","by":3000,"noView":true}`)
	const req = `{"id":%d,"op":"view","view":{"detailLimit":100000},"maxEvents":1}`
	one := call(t, ctx, c, fmt.Sprintf(req, 3))
	replySize := len(one)
	if replySize < 1<<20 {
		t.Fatalf("reply is %d bytes; the test needs ≥ 1 MiB replies", replySize)
	}
	srv.maxUnanswered.Store(0)

	const requests = 200 // unbounded queueing would hold requests × replySize
	h := sampleHeap()
	var wg sync.WaitGroup
	wg.Add(1)
	sent := 0
	go func() { // the client writes and never reads; its writes block once the server stops reading
		defer wg.Done()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for i := range requests {
			if c.Write(wctx, websocket.MessageText, fmt.Appendf(nil, req, 100+i)) != nil {
				return
			}
			sent++
		}
	}()
	waitSessions(t, srv, 0) // the server gives up on the client after the write timeout
	growth := h.growth()
	_ = c.CloseNow()
	wg.Wait()

	t.Logf("reply %d bytes; client sent %d of %d requests before blocking; server heap growth peak %.1f MiB; unanswered peak %d",
		replySize, sent, requests, float64(growth)/(1<<20), srv.maxUnanswered.Load())
	if n := srv.maxUnanswered.Load(); n > 2 {
		t.Errorf("%d requests were read but unanswered at once; want ≤ 2 (one being answered, one waiting)", n)
	}
	// One reply being encoded and written, its view, one waiting request: a few replies' worth,
	// far below requests × replySize.
	if limit := uint64(12 * replySize); growth > limit {
		t.Errorf("heap grew %d bytes, over %d (12 replies); unbounded would be about %d", growth, limit, requests*replySize)
	}
	if !strings.Contains(logs.String(), "slow reader") {
		t.Errorf("no slow-reader log:\n%s", logs)
	}
}

// TestSlowReaderPlay: in play mode a slow reader gets fewer, larger frames, not a queue: the
// simulated time of each frame read keeps up with the wall clock however slowly the client reads.
// Frames are large (full views of 1,000 partitions) and the client's socket buffer small, so
// kernel buffers hold only a frame or two and what the client sees is the server's behaviour.
func TestSlowReaderPlay(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	_, ts, _ := startServer(t, Config{})
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = conn.(*net.TCPConn).SetReadBuffer(16 << 10)
		}
		return conn, err
	}}
	defer tr.CloseIdleConnections()
	c, _, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	callOK(t, ctx, c, 1, loadReq(1, bigScenario(6, 1000)))
	start := time.Now()
	callOK(t, ctx, c, 2, `{"id":2,"op":"play","speed":10,"intervalMs":20,"maxEvents":10,"view":{"detailLimit":100000}}`)
	var last reply
	size := 0
	const reads = 12
	for range reads {
		time.Sleep(150 * time.Millisecond) // a reader 7× slower than the frame rate
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last, size = decodeReply(t, raw), len(raw)
		if last.Push != "play" || last.ID != 2 {
			t.Fatalf("frame: %.200s", raw)
		}
	}
	// Had every 20 ms frame been queued, the frames read would be the first 12, ending at
	// t = 12 × 20 ms × 10 = 2.4 s. Coalesced, they follow the wall clock at speed 10 minus the
	// frames in socket buffers.
	wall := time.Since(start).Milliseconds()
	t.Logf("frames of %d bytes; wall %d ms, last frame read t=%d ms (speed 10), dropped events %d", size, wall, last.T, last.Dropped)
	if queued := int64(reads * 20 * 10); last.T < 2*queued {
		t.Errorf("after %d ms of wall time at speed 10 the frames read reach t=%d; frames are queued, not coalesced", wall, last.T)
	}
}
