package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	tw := newTraceWriter(f, nil)
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

// TestTraceWriterReusesBatches: on a run long enough for the writer to hand written batches back
// (engine.ReuseEvents), the engine records into them and the file is still, byte for byte,
// engine.Run's events encoded by json.Encoder; each batch comes back cleared.
func TestTraceWriterReusesBatches(t *testing.T) {
	var steps []string
	for i := range 3000 {
		steps = append(steps, fmt.Sprintf(`{"at":%d,"do":"produce","topic":"t","partition":%d}`, 1+i, i%6))
	}
	data := []byte(`{"name":"reuse","seed":3,"brokers":3,"topics":[{"name":"t","partitions":6,"replicationFactor":3}],` +
		`"duration":4000,"steps":[` + strings.Join(steps, ",") + `]}`)
	sc, err := engine.ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	want := encodedRun(t, sc)

	e, err := engine.NewRun(sc, true)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	reused := 0
	tw := newTraceWriter(f, func(buf []engine.Event) {
		for i, ev := range buf[:cap(buf)] {
			if !reflect.ValueOf(ev).IsZero() {
				t.Fatalf("a batch handed back holds event %d: %+v", i, ev)
			}
		}
		reused++
		e.ReuseEvents(buf)
	})
	if _, err := e.RunStepsUnnarrated(sc, tw.sink); err != nil {
		t.Fatal(err)
	}
	if err := tw.close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if reused < 100 {
		t.Fatalf("%d batches reused; the run should hand back hundreds", reused)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the trace differs from encoding/json's (%d bytes, want %d); first difference at byte %d",
			len(got), want.Len(), firstDifference(got, want.Bytes()))
	}
}
