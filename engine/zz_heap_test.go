package engine

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

func TestZZHeap(t *testing.T) {
	if os.Getenv("ZZHEAP") == "" {
		t.Skip()
	}
	sc := &Scenario{Name: "bench", Seed: 1, Brokers: 100,
		Topics: []Topic{{Name: "load", Partitions: 100000, ReplicationFactor: 3}}}
	e, _ := newEngine(sc, false)
	steadyLoad(e, 2, 10_000)
	runtime.GC()
	f, _ := os.Create("/tmp/heap.out")
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MB, %d B/partition", ms.HeapAlloc>>20, ms.HeapAlloc/100000)
	runtime.KeepAlive(e)
}
