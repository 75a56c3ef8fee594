package hugepages

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseMarksTheHeap checks the whole path: after Advise, a large allocation lands in memory
// the kernel holds as marked for huge pages (VmFlags "hg" in /proc/self/smaps).
func TestAdviseMarksTheHeap(t *testing.T) {
	mode, err := os.ReadFile(thpDir + "enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("this kernel's transparent huge pages are %q, not madvise: Advise has nothing to ask", strings.TrimSpace(string(mode)))
	}
	t.Setenv("HIGHWATER_HUGEPAGES", "on")
	marked := Advise(256 << 20)
	if marked < 200<<20 {
		t.Fatalf("Advise(256 MB) marked %d bytes, want nearly all of it", marked)
	}
	// A 64 MB object needs 64 MB of contiguous free pages: the freed block is where they are.
	block := make([]byte, 64<<20)
	for i := 0; i < len(block); i += 4096 {
		block[i] = 1
	}
	// Its middle: its first pages may lie before the marked range, which starts at a huge page.
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(block))) + uintptr(len(block)/2)
	flags, huge, err := vmaAt(addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the block allocated after Advise lies in a mapping without the hg flag: VmFlags %q", flags)
	}
	// Whether the kernel found free huge pages is its own business (it falls back to small ones).
	t.Logf("marked %d MB; the 64 MB block's mapping holds %d kB in huge pages", marked>>20, huge)
}

// vmaAt reads the VmFlags and AnonHugePages (kB) of the mapping holding addr.
func vmaAt(addr uintptr) (flags string, hugeKB int64, err error) {
	ms, err := mappings()
	if err != nil {
		return "", 0, err
	}
	for _, m := range ms {
		if m.lo <= addr && addr < m.hi {
			return m.flags, m.hugeKB, nil
		}
	}
	return "", 0, fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}
