package hugepages

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
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

// Marked is how many bytes of this process's mappings are marked for huge pages (VmFlags "hg"
// in /proc/self/smaps): what Advise asked for, and the runtime's own marked metadata.
func Marked() (int64, error) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	var total, size int64
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("Size:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/smaps: %q: %v", line, err)
			}
			size = kb << 10
		}
		if flags, ok := bytes.CutPrefix(line, []byte("VmFlags:")); ok && slices.ContainsFunc(bytes.Fields(flags), isHG) {
			total += size
		}
	}
	return total, nil
}

func isHG(flag []byte) bool { return string(flag) == "hg" }
