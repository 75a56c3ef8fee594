package main

import (
	"os"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// TestTraceWriterDiskFull: a write error reaches close, which still waits for the writer and
// closes the file.
func TestTraceWriterDiskFull(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	tw := newTraceWriter(f)
	for i := range 3 * traceGroupEvents {
		tw.sink([]engine.Event{{T: int64(i), Type: engine.EvCaption, Text: "a line of the trace"}})
	}
	if err := tw.close(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("close: %v, want the disk-full error", err)
	}
	if err := f.Close(); err == nil {
		t.Error("the file is still open after close")
	}
}
