package hugepages

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE (the syscall package does not name it).
const madvHugepage = 14

// thpDir is where Linux says how it gives out transparent huge pages.
const thpDir = "/sys/kernel/mm/transparent_hugepage/"

// advise allocates an n-byte block, marks its whole huge pages MADV_HUGEPAGE, and frees it.
// Only a kernel in "madvise" mode needs this: in "always" the pages come unasked, and marking
// them would add the kernel's direct compaction (defrag's "madvise" setting) to their faults.
func advise(n int64) int64 {
	mode, err := os.ReadFile(thpDir + "enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	page := uintptr(2 << 20)
	if b, err := os.ReadFile(thpDir + "hpage_pmd_size"); err == nil {
		if v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64); err == nil && v > 0 {
			page = uintptr(v)
		}
	}
	// A fresh block of this size is mapped for it and not yet written: the marking comes before
	// any of its pages is backed.
	block := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	from := (start+page-1)&^(page-1) - start
	to := (start+uintptr(n))&^(page-1) - start
	if to <= from {
		return 0
	}
	if err := syscall.Madvise(block[from:to], madvHugepage); err != nil {
		return 0
	}
	// The block is dead past here (the compiler tracks it), so this collection frees its pages
	// for the cluster to be built in.
	runtime.KeepAlive(block)
	runtime.GC()
	return int64(to - from)
}
