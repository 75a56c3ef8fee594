package hugepages

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	ms, err := mappings()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range ms {
		if slices.Contains(strings.Fields(m.flags), "hg") {
			total += int64(m.hi - m.lo)
		}
	}
	return total, nil
}

// mapping is one of this process's mappings as /proc/self/smaps lists it: its address range,
// its VmFlags and its AnonHugePages (kB).
type mapping struct {
	lo, hi uintptr
	flags  string
	hugeKB int64
}

// mappings reads /proc/self/smaps.
func mappings() ([]mapping, error) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	var out []mapping
	for line := range strings.Lines(string(data)) {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			out = append(out, mapping{lo: lo, hi: hi})
			continue
		}
		if len(out) == 0 {
			continue
		}
		m := &out[len(out)-1]
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &m.hugeKB); err != nil {
				return nil, fmt.Errorf("/proc/self/smaps: %q: %v", line, err)
			}
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			m.flags = strings.TrimSpace(v)
		}
	}
	return out, nil
}
