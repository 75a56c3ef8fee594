// Package gcpace paces the Go collector of the page's engine (wasm/main_js.go), and of the
// benchmarks that measure the engine as the page runs it (engine.BenchmarkSteadyCluster under
// WebAssembly).
//
// Under WebAssembly the collector has one thread, the engine's: every cycle's marking and every
// allocation's assist stop the simulation (natively a second core marks meanwhile). The engine
// keeps a fairly small live heap (the cluster, the logs) and allocates messages at a high rate that
// die young, so letting garbage grow to four times the live heap, as `highwater run` does, makes a
// quarter of the cycles. A WebAssembly memory never shrinks, so the heap is also held under
// PageMemoryLimit, where the collector works harder instead: a page's cluster of 10,000
// partitions keeps about 20 MB live (under 100 MB with its garbage), one of 100,000 about 220 MB.
package gcpace

import "runtime/debug"

const (
	// PagePercent is GOGC for the page: garbage up to four times the live heap.
	PagePercent = 400
	// PageMemoryLimit is GOMEMLIMIT for the page (1 GiB).
	PageMemoryLimit = 1 << 30
)

// Page paces the collector as the page does, and returns a function that puts back the pacing it
// replaced (for a benchmark). The page's host calls it once, before it loads anything.
func Page() (restore func()) {
	percent := debug.SetGCPercent(PagePercent)
	limit := debug.SetMemoryLimit(PageMemoryLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
