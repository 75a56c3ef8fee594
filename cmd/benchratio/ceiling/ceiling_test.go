// Package ceiling measures how fast plain Go runs under WebAssembly against natively, on small
// kernels shaped like the engine's work, with no Highwater code in them. `make bench` runs them
// both ways and prints their native/WebAssembly ratios beside the engine's (cmd/benchratio): the
// engine cannot be expected to beat the ratio Go's WebAssembly backend gives plain code of the
// same kind (issue 12 asked for an engine ratio of 0.5, that is 2× in benchratio's terms).
package ceiling

import (
	"cmp"
	"slices"
	"testing"
)

// Each kernel reports ops/s: its units of work per wall second (higher is faster).
func report(b *testing.B, ops int) {
	b.ReportMetric(float64(ops*b.N)/b.Elapsed().Seconds(), "ops/s")
}

// host is called through an interface, as the broker calls the engine (Host, Follower).
type host interface{ Now() int64 }

type clock struct{ now int64 }

//go:noinline
func (c *clock) Now() int64 { c.now++; return c.now }

var sink int64

// BenchmarkInterfaceCalls: a million calls of a method through an interface.
func BenchmarkInterfaceCalls(b *testing.B) {
	var h host = &clock{}
	const n = 1_000_000
	for range b.N {
		s := int64(0)
		for range n {
			s += h.Now()
		}
		sink += s
	}
	report(b, n)
}

// BenchmarkBinarySearch: pid lookups in a sorted list of a thousand (a fetcher thread's partitions).
func BenchmarkBinarySearch(b *testing.B) {
	pids := make([]int32, 1000)
	for i := range pids {
		pids[i] = int32(i * 100)
	}
	const n = 1_000_000
	for range b.N {
		hits := 0
		for i := range n {
			if _, ok := slices.BinarySearch(pids, int32(i*7919%100_000)); ok {
				hits++
			}
		}
		sink += int64(hits)
	}
	report(b, n)
}

// state is shaped like a fetch state: a few offsets and flags in 64 bytes (pad stands for the
// fields the walk does not read).
type state struct {
	pid              int32
	fetchOffset, hw  int64
	sentOffset       int64
	pad              [3]int64
	ready, inSession bool
}

// BenchmarkStructWalk: a walk over 100,000 states updating some (a Fetch's build).
func BenchmarkStructWalk(b *testing.B) {
	states := make([]state, 100_000)
	for i := range states {
		states[i] = state{pid: int32(i), pad: [3]int64{int64(i)}, fetchOffset: int64(i % 7), ready: i%3 != 0}
	}
	for range b.N {
		sent := 0
		for i := range states {
			st := &states[i]
			if st.ready && st.fetchOffset >= st.hw {
				st.sentOffset, st.inSession = st.fetchOffset, true
				sent++
			}
			st.hw++
		}
		sink += int64(sent)
	}
	report(b, len(states))
}

// BenchmarkMap: inserts and lookups in a map keyed by message id (requests in flight).
func BenchmarkMap(b *testing.B) {
	const n = 100_000
	for range b.N {
		m := make(map[uint64]*state, 1024)
		var st state
		for i := range uint64(n) {
			m[i] = &st
			if i >= 512 {
				delete(m, i-512)
			}
		}
		sink += int64(len(m))
	}
	report(b, n)
}

// BenchmarkSort: sorting 100,000 records by (time, sequence) (the agenda's order).
func BenchmarkSort(b *testing.B) {
	type item struct{ at, seq int64 }
	src := make([]item, 100_000)
	for i := range src {
		src[i] = item{at: int64(i * 7919 % 1000), seq: int64(i)}
	}
	buf := make([]item, len(src))
	for range b.N {
		copy(buf, src)
		slices.SortFunc(buf, func(x, y item) int { return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.seq, y.seq)) })
		sink += buf[0].seq
	}
	report(b, len(src))
}

// node is a small heap object with pointers (a message and its payload).
type node struct {
	next *node
	vals []int64
	id   int64
}

// BenchmarkAllocate: short-lived small objects with pointers, as messages are (the collector's load).
func BenchmarkAllocate(b *testing.B) {
	const n = 100_000
	for range b.N {
		var keep *node
		for i := range n {
			x := &node{id: int64(i), vals: make([]int64, 4)}
			if i%64 == 0 {
				x.next, keep = keep, x
			}
		}
		for ; keep != nil; keep = keep.next {
			sink += keep.id
		}
	}
	report(b, n)
}
