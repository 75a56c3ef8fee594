// Package hugepages asks Linux, when the user opts in, to back a large run's heap with
// transparent huge pages.
//
// A 100,000-partition run touches about 260 MB of fresh memory. With 4 KB pages that is about
// 72,000 page faults (0.3-0.4 s of kernel time on the machine the README measures) and a TLB
// miss on most of the engine's scattered reads of partition state. Backed by 2 MB pages, the
// same run takes about 3,300 faults, and its user time falls by about a quarter.
//
// Kernels set to "always" give a program huge pages unasked; kernels set to "madvise" (Ubuntu's
// and many hosts' default) give them only to memory marked MADV_HUGEPAGE. Go's runtime does not
// mark its heap, so before building a large cluster the CLI and the server mark the part of the
// heap the cluster will be built in: they allocate one block of about the cluster's size, mark
// it, and free it, and the allocator hands out those pages next (it gives the lowest free
// address first). This is the JVM's -XX:+UseTransparentHugePages done by hand for Go.
//
// It is opt-in (HIGHWATER_HUGEPAGES=on), as the JVM's is, because a huge page's first fault can
// cost more than the 512 small ones it replaces: the kernel may compact memory to find it, and in
// a virtual machine whose host backs guest memory lazily, zeroing it is 512 host faults. On the
// README's machine (such a VM) repeated runs gained (the 100,000-partition run 1.7 -> 1.1 s, the
// million 4.6 -> 2.8 s), and the first run after memory was used in small pages lost (2.1 s and
// 8.0 s; see the README's measurements).
//
// Nothing the engine computes depends on it: only where its memory lies.
package hugepages

import (
	"os"
	"runtime/debug"

	"github.com/highwater-sim/highwater/engine"
)

// MinBytes is the least estimate worth marking: below it the faults saved cost less than the
// collection that frees the marked block.
const MinBytes = 128 << 20

// bytesPerReplica and bytesPerFileByte estimate a cluster's heap from its scenario: at 100 ×
// 100,000 partitions (RF 3) with 100,000 produce steps the heap reaches about 260 MB, and at
// 1,000 × 1,000,000 about 1.7 GB. Too large an estimate costs address space only (a page is
// backed when first written); too small leaves the rest of the heap on small pages.
const (
	bytesPerReplica  = 1 << 10
	bytesPerFileByte = 16
)

// Estimate is the heap in bytes a run of sc, read from a file of fileBytes, is expected to reach.
func Estimate(sc *engine.Scenario, fileBytes int) int64 {
	var replicas int64
	for _, t := range sc.Topics {
		if t.Assignment != nil {
			for _, r := range t.Assignment {
				replicas += int64(len(r))
			}
			continue
		}
		replicas += int64(max(t.Partitions, 0)) * int64(max(t.ReplicationFactor, 1))
	}
	return replicas*bytesPerReplica + int64(fileBytes)*bytesPerFileByte
}

// Advise marks about n bytes of the heap for huge pages, if HIGHWATER_HUGEPAGES is "on", n is at
// least MinBytes, and the kernel leaves huge pages to the program. It returns the bytes
// marked (0 when it did nothing). The block is capped at three quarters of the Go memory limit,
// so that the freed block never pushes the heap over it.
func Advise(n int64) int64 {
	if os.Getenv("HIGHWATER_HUGEPAGES") != "on" {
		return 0
	}
	if limit := debug.SetMemoryLimit(-1); n > limit/4*3 {
		n = limit / 4 * 3
	}
	if n < MinBytes {
		return 0
	}
	return advise(n)
}
