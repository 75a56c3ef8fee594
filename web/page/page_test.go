package page

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"github.com/highwater-sim/highwater/scenarios"
)

func TestNewOverlaysPresets(t *testing.T) {
	base := fstest.MapFS{
		"index.html":           {Data: []byte("<html>")},
		"vendor/u.js":          {Data: []byte("u")},
		"scenarios/stale.json": {Data: []byte(`{"name":"stale"}`)},
		"scenarios/index.json": {Data: []byte(`[]`)},
		"engine.wasm":          {Data: []byte("\x00asm")},
	}
	fsys, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	presets, _ := scenarios.Index()
	index, err := fs.ReadFile(fsys, "scenarios/index.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []scenarios.Preset
	if err := json.Unmarshal(index, &got); err != nil || len(got) != len(presets) {
		t.Fatalf("index.json from the page: %d presets, want %d (%v)", len(got), len(presets), err)
	}
	// The whole tree walks, with both layers' files, and passes the standard library's checks.
	var names []string
	if err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, name)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index.html", "vendor/u.js", "engine.wasm", "scenarios/" + presets[0].File, "scenarios/stale.json"} {
		if !slices.Contains(names, want) {
			t.Errorf("walk lacks %s: %v", want, names)
		}
	}
	if err := fstest.TestFS(fsys, "index.html", "vendor/u.js", "scenarios/index.json", "scenarios/"+presets[0].File); err != nil {
		t.Fatal(err)
	}
}

func TestPrecompressAndDist(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "page")
	wasm := bytes.Repeat([]byte("highwater engine bytes "), 5000)
	files := map[string]string{"index.html": "<html>", "app.js": "a", "worker.js": "w",
		"engine.wasm": string(wasm), "wasm_exec.js": "go", "vendor/uPlot.iife.min.js": "u", "config.json": `{"server":true}`}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(src, "engine.wasm")
	if wrote, err := Precompress(file, 5); err != nil || !wrote {
		t.Fatalf("Precompress = %v, %v", wrote, err)
	}
	if wrote, err := Precompress(file, 5); err != nil || wrote {
		t.Fatalf("Precompress again = %v, %v; want skipped", wrote, err)
	}
	checkCompressed(t, file, wasm)

	out := filepath.Join(dir, "dist")
	if err := WriteDist(out, os.DirFS(src), 5); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(Required, "engine.wasm.br", "engine.wasm.gz") {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("dist lacks %s", name)
		}
	}
	checkCompressed(t, filepath.Join(out, "engine.wasm"), wasm)
	var cfg Config
	raw, _ := os.ReadFile(filepath.Join(out, "config.json"))
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Server || !cfg.InPageEngine {
		t.Fatalf("config.json = %s (%v); want no server, an in-page engine", raw, err)
	}

	os.Remove(file)
	if err := WriteDist(filepath.Join(dir, "dist2"), os.DirFS(src), 5); err == nil {
		t.Fatal("a dist without engine.wasm was written")
	}
}

func checkCompressed(t *testing.T, file string, want []byte) {
	t.Helper()
	br, _ := os.ReadFile(file + ".br")
	got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s.br does not decode to the file (%v)", file, err)
	}
	gz, _ := os.ReadFile(file + ".gz")
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err == nil {
		got, err = io.ReadAll(zr)
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s.gz does not decode to the file (%v)", file, err)
	}
}
