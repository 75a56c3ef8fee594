package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/highwater-sim/highwater/wasm/memgrow"
)

// benchCluster builds the large steady cluster of the benchmark: brokers × partitions, RF 3,
// Kafka's default timings.
func benchCluster(b *testing.B, brokers, partitions int) *Engine {
	sc := &Scenario{Name: "bench", Seed: 1, Brokers: brokers,
		Topics: []Topic{{Name: "load", Partitions: partitions, ReplicationFactor: 3}}}
	e, err := New(sc)
	if err != nil {
		b.Fatal(err)
	}
	e.SetTrace(false)
	return e
}

// steadyLoad drives e for simSeconds with producers writing acks=all batches of 10 records to
// random partitions, ratePerSec records per simulated second in all.
func steadyLoad(e *Engine, simSeconds int64, ratePerSec int64) {
	rng := rand.New(rand.NewPCG(7, 7))
	n := int32(len(e.partitions))
	// A producer batches: one 10-record batch per 10 ms per 1,000 records/s of load.
	step := int64(10) // ms
	perStep := max(1, ratePerSec*step/1000/10)
	start := e.Now()
	for t := start + step; t <= start+simSeconds*1000; t += step {
		_ = e.RunUntil(t)
		for range perStep {
			e.produce(e.partitions[rng.Int32N(n)], 10, -1)
		}
		e.Drain()
	}
}

// BenchmarkSteadyCluster measures the engine on a large steady cluster: simulated seconds per
// wall second (the real-time factor), agenda items per second and bytes per partition. Under
// WebAssembly the memory is grown first, as the page grows it (wasm/memgrow).
func BenchmarkSteadyCluster(b *testing.B) {
	if runtime.GOOS == "js" {
		memgrow.Reserve(memgrow.PageBytes)
	}
	for _, size := range []struct{ brokers, partitions int }{{10, 1_000}, {10, 10_000}, {100, 10_000}, {100, 100_000}} {
		b.Run(fmt.Sprintf("brokers=%d/partitions=%d", size.brokers, size.partitions), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			e := benchCluster(b, size.brokers, size.partitions)
			steadyLoad(e, 2, 10_000) // warm up: fetch sessions settle
			runtime.GC()
			runtime.ReadMemStats(&after)
			const simSeconds = 10
			p0 := e.Stats().Processed
			b.ResetTimer()
			for range b.N {
				steadyLoad(e, simSeconds, 10_000)
			}
			b.StopTimer()
			wall := b.Elapsed().Seconds()
			items := float64(e.Stats().Processed - p0)
			b.ReportMetric(float64(simSeconds*b.N)/wall, "sim-s/wall-s")
			b.ReportMetric(items/wall, "items/s")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(size.partitions), "bytes/partition")
			if v := e.Violations(); len(v) > 0 {
				b.Fatalf("violations in a steady cluster: %v", v[0].Text)
			}
		})
	}
}
