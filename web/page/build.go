package page

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/andybalholm/brotli"
)

// BrotliQuality is the quality of the precompressed engine. Measured on the 4.5 MB engine with
// the Go library on 2 busy cores: 10 (with a 16 MiB window) gives 934 KB in 11–24 s, 11 gives
// 918 KB in 25–60 s, 9 gives 1,041 KB in 2 s. 10 keeps it under 1 MB for half the wait of 11;
// Precompress skips the work anyway when the existing files already hold the same bytes.
const BrotliQuality = 10

// brotliWindow is log2 of brotli's window: 24, the largest the format allows (browsers decode it).
const brotliWindow = 24

// Precompress writes file.br (brotli at brQuality) and file.gz (gzip -9) beside file, unless they already
// decompress to file's bytes (then it only touches them). It reports whether it wrote them.
func Precompress(file string, brQuality int) (bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return false, err
	}
	if same(file+".br", data, func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil }) &&
		same(file+".gz", data, func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }) {
		// Newer than the file again (a rebuild rewrites it): the server ignores a compressed copy
		// older than its original, which may be stale.
		now := time.Now()
		return false, errors.Join(os.Chtimes(file+".br", now, now), os.Chtimes(file+".gz", now, now))
	}
	var br, gz bytes.Buffer
	errc := make(chan error, 1)
	go func() { // the two encoders in parallel: brotli takes most of the time
		w := brotli.NewWriterOptions(&br, brotli.WriterOptions{Quality: brQuality, LGWin: brotliWindow})
		_, err := w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		errc <- err
	}()
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, err = zw.Write(data)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if berr := <-errc; err == nil {
		err = berr
	}
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(file+".br", br.Bytes(), 0o644); err != nil {
		return false, err
	}
	return true, os.WriteFile(file+".gz", gz.Bytes(), 0o644)
}

// same reports whether the compressed file decodes to want.
func same(file string, want []byte, decoder func(io.Reader) (io.Reader, error)) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	r, err := decoder(f)
	if err != nil {
		return false
	}
	got, err := io.ReadAll(io.LimitReader(r, int64(len(want))+1))
	return err == nil && bytes.Equal(got, want)
}

// Config is config.json, which the page reads to learn what it can use. `highwater serve`
// answers it itself ({"server": true, …}); the static build carries {"server": false}, and a
// host where it is missing or is not this JSON counts as static too.
type Config struct {
	// Server is true when the page is served by `highwater serve`, so its websocket (/ws next to
	// the page) can run the engine natively.
	Server bool `json:"server"`
	// InPageEngine is true when engine.wasm and wasm_exec.js are there to run the engine in the
	// page's worker.
	InPageEngine bool `json:"inPageEngine"`
}

// Required are the files a static build cannot do without.
var Required = []string{"index.html", "app.js", "worker.js", "engine.wasm", "wasm_exec.js",
	"scenarios/index.json", "vendor/uPlot.iife.min.js"}

// WriteDist writes the static build into dir (made if missing; files of an earlier build are
// overwritten, others left alone): every file of New(pageDir) (the page sources, engine.wasm and
// wasm_exec.js as `make wasm` left them, the vendored chart library, the presets with their
// index), engine.wasm.br and .gz beside the engine, and config.json saying there is no server.
func WriteDist(dir string, pageDir fs.FS, brQuality int) error {
	fsys, err := New(pageDir)
	if err != nil {
		return err
	}
	for _, name := range Required {
		if _, err := fs.Stat(fsys, name); err != nil {
			if errors.Is(err, fs.ErrNotExist) && (name == "engine.wasm" || name == "wasm_exec.js") {
				return fmt.Errorf("%s is missing: run `make wasm` first", name)
			}
			return err
		}
	}
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(name)), 0o755)
		}
		if name == "config.json" {
			return nil // written below
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644)
	})
	if err != nil {
		return err
	}
	if _, err := Precompress(filepath.Join(dir, "engine.wasm"), brQuality); err != nil {
		return err
	}
	cfg, err := json.Marshal(Config{Server: false, InPageEngine: true})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(cfg, '\n'), 0o644)
}
