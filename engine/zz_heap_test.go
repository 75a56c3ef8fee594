package engine

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestZZMillion(t *testing.T) {
	if os.Getenv("ZZHEAP") == "" {
		t.Skip()
	}
	sc := &Scenario{Name: "bench", Seed: 1, Brokers: 1000,
		Topics: []Topic{{Name: "load", Partitions: 1000000, ReplicationFactor: 3}}}
	t0 := time.Now()
	e, _ := newEngine(sc, false)
	t1 := time.Now()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("new %v heap %d MB", t1.Sub(t0), ms.HeapAlloc>>20)
	if os.Getenv("ZZNEWONLY") == "" {
		steadyLoad(e, 1, 10_000)
	}
	t2 := time.Now()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("1 sim s in %v heap %d MB sys %d MB", t2.Sub(t1), ms.HeapAlloc>>20, ms.Sys>>20)
	runtime.KeepAlive(e)
}
