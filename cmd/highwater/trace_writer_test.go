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

// TestRunTraceDiskFullFails: `highwater run` whose trace cannot be written whole says so and exits
// with exitTraceFailed, after the run's own summary.
func TestRunTraceDiskFullFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	var out, errOut strings.Builder
	code := runScenario([]string{"../../scenarios/kill-the-leader.json", "--trace", "/dev/full"}, &out, &errOut)
	if code != exitTraceFailed || !strings.Contains(errOut.String(), "--trace /dev/full: ") ||
		!strings.Contains(errOut.String(), "no space left") || !strings.Contains(errOut.String(), "the trace is incomplete") {
		t.Fatalf("exit %d, stderr %q; want %d and the disk-full error", code, errOut.String(), exitTraceFailed)
	}
	if !strings.Contains(out.String(), "ok: every expectation held") {
		t.Fatalf("stdout %q: the run's own result is still reported", out.String())
	}
}
