package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLoadMixed: small sessions (20, each a small cluster advancing 200 ms at a time, as a
// page does) next to heavy ones (each a 100 broker × 100,000 partition cluster advancing 10 s at a
// time, non-stop), with the default running slots (one per core) and request budget. It reports
// the small sessions' reply latency with and without the heavy ones, and how far the heavy ones
// got: one client cannot starve the others. make bench-server runs it.
func BenchmarkLoadMixed(b *testing.B) {
	small := readScenario(b, "leader-crash-truncation.json")
	for _, heavy := range []int{0, 2} {
		b.Run(fmt.Sprintf("heavy=%d", heavy), func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				srv, ts, _ := startServer(b, Config{MaxPartitions: 100_000, MaxTotalPartitions: 250_000})
				stop := make(chan struct{})
				var heavyMs atomic.Int64
				var heavyWG sync.WaitGroup
				ready := make(chan struct{}, heavy)
				for h := range heavy {
					heavyWG.Go(func() {
						c := dial(b, ctx, ts)
						callOK(b, ctx, c, 1, `{"id":1,"op":"load","noView":true,"scenario":`+bigScenario(100, 100_000)+`}`)
						ready <- struct{}{}
						for id := int64(2); ; id++ {
							select {
							case <-stop:
								return
							default:
							}
							r := decodeReply(b, call(b, ctx, c, fmt.Sprintf(`{"id":%d,"op":"advance","by":10000,"noView":true,"maxEvents":100}`, id)))
							if r.Type != "reply" {
								b.Errorf("heavy session %d: %s", h, r.Error)
								return
							}
							heavyMs.Store(max(heavyMs.Load(), r.T))
						}
					})
				}
				for range heavy {
					<-ready
				}
				var mu sync.Mutex
				var lat []time.Duration
				var wg sync.WaitGroup
				start := time.Now()
				for s := range 20 {
					wg.Go(func() {
						c := dial(b, ctx, ts)
						callOK(b, ctx, c, 1, `{"id":1,"op":"load","noView":true,"scenario":`+small+`}`)
						mine := make([]time.Duration, 0, 50)
						for id := int64(2); id < 52; id++ {
							t0 := time.Now()
							r := decodeReply(b, call(b, ctx, c, fmt.Sprintf(`{"id":%d,"op":"advance","by":200,"maxEvents":500,"view":{"noRecords":true}}`, id)))
							mine = append(mine, time.Since(t0))
							if r.Type != "reply" {
								b.Errorf("small session %d: %s", s, r.Error)
								return
							}
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					})
				}
				wg.Wait()
				wall := time.Since(start)
				close(stop)
				heavyWG.Wait()
				cancel()
				slices.Sort(lat)
				n := len(lat)
				if n == 0 {
					b.Fatal("no small request answered")
				}
				p50, p99 := lat[n*50/100], lat[n*99/100]
				b.Logf("%d heavy sessions (100 × 100,000 partitions) reached %.1f s simulated; 20 small sessions × 50 requests in %v: p50 %v, p99 %v, max %v; %d requests waited for a slot",
					heavy, float64(heavyMs.Load())/1000, wall.Round(time.Millisecond), p50, p99, lat[n-1], srv.Queued())
				b.ReportMetric(float64(p50.Microseconds()), "small-p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "small-p99-µs")
			}
		})
	}
}
