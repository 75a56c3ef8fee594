//go:build !js

package browsertest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/highwater-sim/highwater/scenarios"
	shipped "github.com/highwater-sim/highwater/web/page"
)

// TestStaticBuild: the static build (what `make dist` writes, here with a quick brotli level)
// works behind a plain file server with no Highwater handler: the engine runs in the page, a
// preset loads and plays, the chart library loads, and the backend switch is hidden since there
// is no websocket to reach.
func TestStaticBuild(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	dir := t.TempDir()
	if err := shipped.WriteDist(dir, os.DirFS(pageDir), 1); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join(dir, "engine.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for ext, dec := range map[string]func(io.Reader) (io.Reader, error){
		".br": func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		".gz": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
	} {
		f, err := os.Open(filepath.Join(dir, "engine.wasm"+ext))
		if err != nil {
			t.Fatal(err)
		}
		r, err := dec(f)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
		}
		f.Close()
		if err != nil || !bytes.Equal(got, wasm) {
			t.Fatalf("engine.wasm%s does not decode to engine.wasm (%v)", ext, err)
		}
	}
	srv := httptest.NewServer(noStore(http.FileServer(http.Dir(dir))))
	defer srv.Close()

	p := newPageAt(t, srv.URL, "", 1280, 900)
	p.loaded()
	if s := evalJS[string](p, `document.getElementById("status").textContent`); !strings.Contains(s, "in-page engine") {
		t.Fatalf("status = %q", s)
	}
	presets, _ := scenarios.Index()
	if n := evalJS[int](p, `document.querySelectorAll("#preset option[value$='.json']").length`); n != len(presets) {
		t.Fatalf("%d presets offered, want %d", n, len(presets))
	}
	p.wait("the default preset", `document.getElementById("preset").value === "leader-crash-truncation.json"`)
	if !evalJS[bool](p, `getComputedStyle(document.getElementById("backend").closest("label")).display === "none"`) {
		t.Fatal("the backend switch is shown on a static host")
	}
	if evalJS[bool](p, `document.getElementById("backend-note") !== null`) {
		t.Fatal("a backend note on a static host")
	}
	p.change("speed", "100")
	p.click("#play")
	p.wait("t ≥ 3000", `window.highwater.t >= 3000`)
	p.click("#play")
	p.wait("the HW/LEO chart", `document.querySelector("#chart .uplot canvas") !== null`)
	p.screenshot("static-build")
}

// TestGoInstallBinary: `go build ./cmd/highwater` on a clean copy of the repository (the files git
// would commit: tracked and not ignored, so no engine.wasm, no node_modules), with no make step,
// gives a binary whose page reaches a loaded preset. It has no in-page engine, so the page runs
// on the server's engine by itself and says so in one line; the presets and the chart library
// come from the binary, compressed. Skipped with -short (a first build takes a minute on 2 cores).
func TestGoInstallBinary(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	if testing.Short() {
		t.Skip("builds the binary from a clean copy (-short)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): cannot make a clean copy", err)
	}
	src := filepath.Join(t.TempDir(), "highwater")
	copied := 0
	for name := range strings.SplitSeq(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		copied++
	}
	for _, built := range []string{"web/dist/engine.wasm", "web/dist/wasm_exec.js", "web/node_modules"} {
		if _, err := os.Stat(filepath.Join(src, built)); err == nil {
			t.Fatalf("the clean copy has %s: it should not be committed", built)
		}
	}
	bin := filepath.Join(t.TempDir(), "highwater")
	start := time.Now()
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/highwater")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/highwater in a clean copy: %v\n%s", err, out)
	}
	t.Logf("%d files copied; go build took %.1f s", copied, time.Since(start).Seconds())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0")
	serve.Cancel = func() error { return serve.Process.Signal(syscall.SIGTERM) }
	serve.WaitDelay = 10 * time.Second
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", stderr.String())
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's first line: %v (log: %s)", err, stderr.String())
	}
	// "highwater: serving http://127.0.0.1:PORT/ (websocket ws://…/ws)"
	fields := strings.Fields(line)
	if len(fields) < 3 || !strings.HasPrefix(fields[2], "http://") {
		t.Fatalf("unexpected first line %q", line)
	}
	base := strings.TrimSuffix(fields[2], "/")

	// Over HTTP: no engine.wasm; config.json says so; the presets and the chart library are there,
	// compressed for a browser that accepts it.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	head := func(path, accept string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Accept-Encoding", accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if r := head("/engine.wasm", ""); r.StatusCode != http.StatusNotFound {
		t.Fatalf("engine.wasm: %d, want 404 (no make wasm)", r.StatusCode)
	}
	if r := head("/vendor/uPlot.iife.min.js", "gzip, deflate, br"); r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("the chart library: %d, %q", r.StatusCode, r.Header.Get("Content-Encoding"))
	}
	if r := head("/scenarios/index.json", "gzip"); r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the preset index: %d, %q", r.StatusCode, r.Header.Get("Content-Encoding"))
	}
	req, _ := http.NewRequest("GET", base+"/config.json", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cfg shipped.Config
	err = json.NewDecoder(resp.Body).Decode(&cfg)
	resp.Body.Close()
	if err != nil || cfg != (shipped.Config{Server: true, InPageEngine: false}) {
		t.Fatalf("config.json: %+v, %v", cfg, err)
	}

	p := newPageAt(t, base, "", 1280, 900)
	p.loaded()
	if s := evalJS[string](p, `document.getElementById("status").textContent`); !strings.Contains(s, "native engine") {
		t.Fatalf("status = %q", s)
	}
	p.wait("the default preset", `document.getElementById("preset").value === "leader-crash-truncation.json"`)
	if note := evalJS[string](p, `document.getElementById("backend-note")?.textContent ?? ""`); note != "Running on the server's engine: this build has no in-page engine (build it with make)." {
		t.Fatalf("backend note = %q", note)
	}
	if !evalJS[bool](p, `document.querySelector('#backend option[value="wasm"]').disabled && document.getElementById("backend").value === "native"`) {
		t.Fatal("the backend switch offers the missing in-page engine")
	}
	if !evalJS[bool](p, `document.getElementById("error").hidden`) {
		t.Fatalf("an error is shown: %q", evalJS[string](p, `document.getElementById("error").textContent`))
	}
	p.change("speed", "100")
	p.click("#play")
	p.wait("server-paced frames", `window.highwater.t >= 3000`)
	p.click("#play")
	p.wait("the HW/LEO chart", `document.querySelector("#chart .uplot canvas") !== null`)
	p.screenshot("go-install-binary")
}
