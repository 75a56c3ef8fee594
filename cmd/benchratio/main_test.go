package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRatio(t *testing.T) {
	dir := t.TempDir()
	native := filepath.Join(dir, "native.txt")
	wasm := filepath.Join(dir, "wasm.txt")
	// As go test prints them: natively with a GOMAXPROCS suffix, under WebAssembly without.
	os.WriteFile(native, []byte("goos: linux\nBenchmarkSteadyCluster/brokers=10/partitions=1000-2  1  302 ns/op  33.00 sim-s/wall-s  12 items/s\n"+
		"BenchmarkSteadyCluster/brokers=100/partitions=100000-2  1  9 ns/op  3.000 sim-s/wall-s\n"), 0o644)
	os.WriteFile(wasm, []byte("goos: js\nBenchmarkSteadyCluster/brokers=10/partitions=1000  1  900 ns/op  11.00 sim-s/wall-s\n"), 0o644)
	a, order, err := read(native, "sim-s/wall-s")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := read(wasm, "sim-s/wall-s")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report(&out, a, b, order, "sim-s/wall-s", "native", "wasm"); err != nil {
		t.Fatal(err)
	}
	want := "ratio SteadyCluster/brokers=10/partitions=1000: 3.0 × (native 33.00, wasm 11.00 sim-s/wall-s)\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
	if err := report(&out, a, map[string]float64{}, order, "sim-s/wall-s", "native", "wasm"); err == nil {
		t.Fatal("no common benchmark: want an error")
	}
}
