package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// TestRunTraceIsEncodingJSON: the file `highwater run --trace` writes is, byte for byte, every
// event of engine.Run encoded by json.Encoder, as the trace was written before it had its own
// encoder; for every preset.
func TestRunTraceIsEncodingJSON(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := engine.ParseScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			want := encodedRun(t, sc)
			trace := filepath.Join(t.TempDir(), "trace.jsonl")
			if code := runScenario([]string{file, "--trace", trace}, io.Discard, io.Discard); code == 2 {
				t.Fatalf("exit %d", code)
			}
			got, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("the trace differs from encoding/json's (%d bytes, want %d); first difference at byte %d",
					len(got), want.Len(), firstDifference(got, want.Bytes()))
			}
		})
	}
}

// encodedRun is every event of engine.Run on sc, encoded by json.Encoder: what the trace file
// must hold byte for byte.
func encodedRun(t *testing.T, sc *engine.Scenario) *bytes.Buffer {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	if _, _, err := engine.Run(sc, func(evs []engine.Event) {
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return &want
}

// firstDifference is the index of the first byte where a and b differ.
func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
