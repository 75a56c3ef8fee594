package commitlog

import (
	"testing"
	"unsafe"
)

// TestLogLayout holds the order a Partition's cache lines rely on (broker's TestPartitionLayout):
// the HW, LEO and log start are the Log's first 24 bytes, then the chunks and the epoch cache.
func TestLogLayout(t *testing.T) {
	var l Log
	for name, got := range map[string]uintptr{"hw": unsafe.Offsetof(l.hw), "leo": unsafe.Offsetof(l.leo),
		"start": unsafe.Offsetof(l.start), "chunks": unsafe.Offsetof(l.chunks)} {
		want := map[string]uintptr{"hw": 0, "leo": 8, "start": 16, "chunks": 24}[name]
		if got != want {
			t.Errorf("Log.%s is at byte %d, want %d", name, got, want)
		}
	}
	if s := unsafe.Sizeof(l); s != 88 {
		t.Errorf("Log is %d bytes, want 88", s)
	}
}
