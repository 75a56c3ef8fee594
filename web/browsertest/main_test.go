//go:build !js

// Package browsertest drives the page in Debian's headless Chromium with chromedp: the engine
// runs in the page's Web Worker exactly as a user gets it. TestMain builds engine.wasm itself
// (GOOS=js GOARCH=wasm), copies the matching wasm_exec.js and the preset scenarios into a temp
// dir, and serves that dir over web/dist with httptest. Screenshots go to $HIGHWATER_ARTIFACTS
// (default: a temp dir printed by the test) so a person can look at them.
package browsertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/highwater-sim/highwater/server"
	"github.com/highwater-sim/highwater/web"
)

var (
	srvURL    string
	nativeURL string
	// budgetURL is a native server that cuts every advance short (TestNativePartialAdvance).
	budgetURL string
	bareURL   string
	browser   context.Context
	artifacts string
	skipWhy   string
	pageDir   string // the page as buildPage made it (dist_test.go builds the static build from it)
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	chrome := os.Getenv("HIGHWATER_CHROMIUM")
	if chrome == "" {
		chrome = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chrome); err != nil {
		skipWhy = "no Chromium at " + chrome + " (make chromium installs Debian's)"
		return m.Run()
	}
	build, err := os.MkdirTemp("", "highwater-web-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(build)
	if err := buildPage(build); err != nil {
		fmt.Fprintln(os.Stderr, "building the page:", err)
		return 1
	}
	pageDir = build
	artifacts = os.Getenv("HIGHWATER_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "highwater-artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := httptest.NewServer(noStore(http.FileServer(http.Dir(build))))
	defer srv.Close()
	// The native backend: the websocket server serving the same page.
	native := httptest.NewServer(server.New(server.Config{Static: os.DirFS(build),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer native.Close()
	nativeURL = native.URL
	// A native server whose request budget is tiny: every advance comes back partial after one slice.
	slow := httptest.NewServer(server.New(server.Config{Static: os.DirFS(build), RequestBudget: time.Nanosecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer slow.Close()
	budgetURL = slow.URL
	// The page without its engine, as before `make wasm`.
	bare := httptest.NewServer(noStore(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/engine.wasm" {
			http.NotFound(w, r)
			return
		}
		http.FileServer(http.Dir(build)).ServeHTTP(w, r)
	})))
	defer bare.Close()
	bareURL = bare.URL
	srvURL = srv.URL

	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "starting chromium:", err)
		cancelBrowser()
		cancelAlloc()
		return 1
	}
	browser = bctx
	code := m.Run()
	if staticDir != "" {
		_ = os.RemoveAll(staticDir) // the embed tests' static build
	}
	cancelBrowser()
	cancelAlloc()
	_ = os.RemoveAll(profile)
	fmt.Println("browsertest: screenshots in", artifacts)
	return code
}

// buildPage puts the page into dir: its sources from web/dist, a fresh engine.wasm and the
// matching wasm_exec.js, the presets, the chart library (committed in dist/vendor) and the
// tests' own scenarios under testdata/.
func buildPage(dir string) error {
	if err := os.CopyFS(dir, os.DirFS("../dist")); err != nil {
		return err
	}
	if err := os.CopyFS(filepath.Join(dir, "testdata"), os.DirFS("testdata")); err != nil {
		return err
	}
	for _, name := range []string{"engine.wasm", "engine.wasm.br", "engine.wasm.gz"} {
		_ = os.Remove(filepath.Join(dir, name)) // a copy from dist may be stale
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "engine.wasm"), "../../wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./wasm: %v\n%s", err, out)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return err
	}
	js, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(dir, "wasm_exec.js"))
	if err := os.WriteFile(filepath.Join(dir, "wasm_exec.js"), js, 0o644); err != nil {
		return err
	}
	if _, err := web.CopyPresets("../../scenarios", filepath.Join(dir, "scenarios")); err != nil {
		return err
	}
	if _, err := os.Stat("../node_modules"); err == nil {
		return web.CopyVendor("../node_modules", filepath.Join(dir, "vendor"))
	}
	return nil
}

// noStore keeps the browser from caching between tests.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// page is one browser tab for one test, with the page's console kept for failure reports.
type page struct {
	t      testing.TB
	ctx    context.Context
	cancel func()
	mu     sync.Mutex
	log    []string
}

func newPage(t *testing.T, query string, width, height int64) *page {
	return newPageAt(t, srvURL, query, width, height)
}

func newPageB(b *testing.B, query string, width, height int64) *page {
	return newPageFor(b, srvURL, query, width, height, 2*time.Minute) // a benchmark measures; it need not be quick
}

func newPageAt(t testing.TB, base, query string, width, height int64) *page {
	t.Helper()
	return newPageFor(t, base, query, width, height, 30*time.Second)
}

// newPageFor is newPageAt with a chosen time budget for the whole page test.
func newPageFor(t testing.TB, base, query string, width, height int64, budget time.Duration) *page {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	tab, cancelTab := chromedp.NewContext(browser)
	ctx, cancel := context.WithTimeout(tab, budget)
	p := &page{t: t, ctx: ctx, cancel: func() { cancel(); cancelTab() }}
	t.Cleanup(func() {
		p.close()
		if t.Failed() {
			p.mu.Lock()
			t.Logf("page console:\n%s", strings.Join(p.log, "\n"))
			p.mu.Unlock()
		}
	})
	go func() {
		for msg, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.log = append(p.log, msg.String())
			p.mu.Unlock()
		}
	}()
	p.do(chromedp.EmulateViewport(width, height), chromedp.Navigate(base+"/index.html"+query))
	return p
}

// close closes the tab (also done at cleanup).
func (p *page) close() { p.cancel() }

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// wait polls a JS expression until it is truthy (for up to 10 s).
func (p *page) wait(what, expr string) {
	p.t.Helper()
	p.waitFor(10*time.Second, what, expr)
}

// waitFor is wait with a chosen timeout.
func (p *page) waitFor(d time.Duration, what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		errText, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`))
		p.t.Fatalf("waiting for %s (%s): %v; page error: %q", what, expr, err, errText)
	}
}

func evalJS[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func (p *page) click(sel string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// clickIfStill clicks sel when it is still on screen and reports whether it did. A playing tour
// can hide its Continue button between the test's look and its click (the clock moves on, the
// caption is laid out again); chromedp then finds no box ("invalid dimensions"), which is not a
// failure of the page: the loop that calls this looks again.
func (p *page) clickIfStill(sel string) bool {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		p.t.Logf("click %s: %v (looking again)", sel, err)
		return false
	}
	return true
}

// advance uses the page's own "Advance … ms" control and waits for the clock to move.
func (p *page) advance(ms int) {
	p.t.Helper()
	before := evalJS[int](p, `window.highwater.t`)
	p.do(chromedp.SetValue(chromedp.ID("advance-ms"), fmt.Sprint(ms)))
	p.click("#advance")
	p.wait(fmt.Sprintf("t = %d", before+ms), fmt.Sprintf(`window.highwater.t === %d`, before+ms))
}

// change sets a form control's value the way a user does (chromedp's SetValue fires input and
// change events).
func (p *page) change(id, value string) {
	p.t.Helper()
	p.do(chromedp.SetValue(chromedp.ID(id), value))
}

func (p *page) screenshot(name string) { p.shot(name, chromedp.FullScreenshot(100)) }

// viewShot saves what is in the viewport only (for very long pages).
func (p *page) viewShot(name string) { p.shot(name, chromedp.CaptureScreenshot()) }

func (p *page) shot(name string, action chromedp.Action[[]byte]) {
	p.t.Helper()
	buf, err := chromedp.Run(p.ctx, action)
	if err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(artifacts, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot %s", path)
}

// loaded waits until the engine runs in the worker and a cluster is drawn.
func (p *page) loaded() {
	p.t.Helper()
	p.wait("the engine", `document.body.dataset.engine === "ready"`)
	p.wait("a partition on screen", `document.querySelector(".partition[data-leader]") !== null`)
}
