// Package memgrow grows the page's WebAssembly memory in one step when a large cluster is loaded
// (wasm/main_js.go, ForPartitions), and the benchmarks' that measure the engine as the page runs
// it (engine.BenchmarkSteadyCluster under WebAssembly).
//
// A Go heap under WebAssembly grows its linear memory 4 MiB at a time (one arena), and in V8
// (Node, Chrome) the growth costs collections of the JavaScript heap as well: a cluster's logs
// grow all run long, and at 10 brokers × 10,000 partitions over 100 simulated seconds in Node,
// V8's collector took 0.8–0.9 s and memory.grow 4% of the run (grown at start: 0.1 s, and no
// growth). Growing the memory once, by allocating a block and letting it go, leaves later
// allocations room that needs no growth: the collector frees the block at once and the heap
// reuses its pages. A page the engine never writes is never touched, so it takes no resident
// memory (peak RSS in Node did not change).
package memgrow

import "runtime"

// PageBytes is the most the page grows its memory by at once: about the heap of a 10 × 10,000
// cluster after 100 simulated seconds.
const PageBytes = 256 << 20

// perPartition is PageBytes over those 10,000 partitions; a cluster under minPartitions grows
// nothing at load (its heap is a few MiB: the page's demos, a docs embed, a phone).
const (
	perPartition  = PageBytes / 10_000
	minPartitions = 1_000
)

// ForPartitions grows the memory for a cluster of n partitions loaded: in proportion, up to
// PageBytes, and not at all under minPartitions. The bridge calls it only for a cluster larger
// than any before, so the memory grows at most a few times in a worker's life.
func ForPartitions(n int) {
	if n < minPartitions {
		return
	}
	Reserve(min(n, 10_000) * perPartition)
}

// Reserve grows the memory by n bytes at once: it allocates a block of n bytes, keeps it alive
// until allocated (KeepAlive, so the compiler does not drop it), then collects it.
func Reserve(n int) {
	block := make([]byte, n)
	runtime.KeepAlive(block)
	runtime.GC()
}
