//go:build !js

package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	shipped "github.com/highwater-sim/highwater/web/page"
)

// The static build (what `make dist` writes, with a quick brotli level) behind a plain file
// server, made once for the embed tests.
var (
	staticOnce sync.Once
	staticDir  string
	staticURL  string
	staticErr  error
)

func staticBuild(t *testing.T) (dir, base string) {
	t.Helper()
	staticOnce.Do(func() {
		staticDir, staticErr = os.MkdirTemp("", "highwater-dist-")
		if staticErr == nil {
			staticErr = shipped.WriteDist(staticDir, os.DirFS(pageDir), 1)
		}
		if staticErr == nil {
			staticURL = httptest.NewServer(noStore(http.FileServer(http.Dir(staticDir)))).URL // lives as long as the test binary
		}
	})
	if staticErr != nil {
		t.Fatal(staticErr)
	}
	return staticDir, staticURL
}

// writeHost puts a documentation page of the author's next to the static build and opens it.
func writeHost(t *testing.T, name, body string, width, height int64) *page {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	dir, base := staticBuild(t)
	html := "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">" +
		"<title>docs</title><style>body{margin:0} .box{width:100%;height:500px}</style>" +
		"<script>window.msgs=[];addEventListener('message',e=>{if(e.data&&e.data.source==='highwater')msgs.push(e.data)})</script></head><body>" + body + "</body></html>"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newPageFor(t, base, "", width, height, 90*time.Second)
	p.do(chromedp.Navigate(base + "/" + name))
	return p
}

// TestEmbedParams: an iframe and a <highwater-embed> in an author's page, at 320, 800 and 1400
// px wide, honour controls, tour, seed, step and height, fit at 800×500, and answer the message
// API (play, pause, seek, continue; ready, step and caption events out).
func TestEmbedParams(t *testing.T) {
	for _, w := range []int64{320, 800, 1400} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			body := `<div class="box"><iframe id="f" style="width:100%;height:100%;border:0" src="index.html?embed=1&preset=kill-the-leader.json&controls=minimal&tour=0&seed=7&step=5"></iframe></div>` +
				`<script src="highwater-embed.js"></script><div class="box"><highwater-embed id="h" preset="kill-the-leader.json" tour controls="none" seed="9" step="10" height="450"></highwater-embed></div>`
			p := writeHost(t, fmt.Sprintf("embedhost-%d.html", w), body, w, 500)
			const f = `document.getElementById("f").contentWindow`
			const h = `document.getElementById("h").shadowRoot.querySelector("iframe").contentWindow`
			for _, win := range []string{f, h} {
				p.waitFor(40*time.Second, "the embed loaded", `(() => { try { const s = `+win+`.highwater; return s && s.view && s.timeline && s.t > 0; } catch (e) { return false; } })()`)
			}
			p.wait("both ready", `msgs.filter(m => m.type === "ready").length === 2`)
			// The iframe: controls=minimal, tour=0, seed=7, step=5 (t = 600).
			vis := func(win, sel string) bool {
				return evalJS[bool](p, `(() => { const e = `+win+`.document.querySelector(`+fmt.Sprintf("%q", sel)+`); return !!e && e.offsetParent !== null && e.getClientRects().length > 0; })()`)
			}
			if got := evalJS[int](p, f+`.highwater.t`); got != 600 {
				t.Errorf("iframe step=5: t = %d, want 600", got)
			}
			if got := evalJS[int](p, f+`.highwater.timeline.seed`); got != 7 {
				t.Errorf("iframe seed=7: seed %d", got)
			}
			if evalJS[bool](p, f+`.document.getElementById("tour").checked`) {
				t.Error("iframe tour=0: stops at tour captions")
			}
			for sel, want := range map[string]bool{"#play": true, "#step": true, "#speed": false, "#scrub": false, "#advance": false, "#log": true, "#stage": true} {
				if vis(f, sel) != want {
					t.Errorf("iframe controls=minimal, %d px: %s shown = %v", w, sel, !want)
				}
			}
			// The element: controls=none, tour, seed=9, step=10 (t = 3000), height=450.
			if got := evalJS[int](p, h+`.highwater.t`); got != 3000 {
				t.Errorf("element step=10: t = %d, want 3000", got)
			}
			if got := evalJS[int](p, h+`.highwater.timeline.seed`); got != 9 {
				t.Errorf("element seed=9: seed %d", got)
			}
			if !evalJS[bool](p, h+`.document.getElementById("tour").checked`) {
				t.Error("element tour: does not stop at tour captions")
			}
			for sel, want := range map[string]bool{"#play": false, "#step": false, "#log": true, "#stage": true} {
				if vis(h, sel) != want {
					t.Errorf("element controls=none, %d px: %s shown = %v", w, sel, !want)
				}
			}
			if got := evalJS[int](p, `Math.round(document.getElementById("h").getBoundingClientRect().height)`); got != 450 {
				t.Errorf("element height=450: %d px", got)
			}
			if got := evalJS[int](p, `Math.round(document.getElementById("h").getBoundingClientRect().width)`); got != int(w) {
				t.Errorf("element width %d in a %d px page", got, w)
			}
			// Readable: nothing wider than the frame.
			for _, win := range []string{f, h} {
				if sw := evalJS[int](p, win+`.document.documentElement.scrollWidth`); sw > int(w)+1 {
					t.Errorf("%d px: the embed is %d px wide (scrolls sideways)", w, sw)
				}
			}
			if w >= 800 {
				// The stage, the caption and the narration in view without scrolling.
				for _, sel := range []string{"#moment", "#log", ".broker[data-broker='2']"} {
					in := evalJS[bool](p, `(() => { const W = `+f+`; const r = W.document.querySelector("`+sel+`").getBoundingClientRect(); return r.height > 20 && r.top >= 0 && r.bottom <= W.innerHeight + 1 && r.right <= W.innerWidth + 1; })()`)
					if !in {
						t.Errorf("%d×500: %s is not all in view", w, sel)
					}
				}
				// The partition's replica logs: at least the first replica's row in view.
				if !evalJS[bool](p, `(() => { const W = `+f+`; const r = W.document.querySelector(".partition .replica").getBoundingClientRect(); return r.top >= 0 && r.bottom <= W.innerHeight + 1; })()`) {
					t.Errorf("%d×500: no replica log in view", w)
				}
				if evalJS[bool](p, f+`.document.scrollingElement.scrollHeight > `+f+`.innerHeight + 1`) {
					t.Errorf("%d×500: the embed scrolls", w)
				}
			}
			// The message API: commands from the parent, events back.
			run(p, `document.getElementById("f").contentWindow.postMessage({op: "seek", t: 2500}, "*")`)
			p.wait("seek t=2500", f+`.highwater.t === 2500`)
			run(p, `msgs.length = 0; document.getElementById("h").seek({step: 11}); document.getElementById("h").continue()`)
			p.wait("element seek to step 11", h+`.highwater.t === 4100`)
			p.wait("a caption event", `msgs.some(m => m.type === "caption" && m.text)`)
			run(p, `document.getElementById("h").addEventListener("highwater-step", e => { window.stepEv = e.detail }); document.getElementById("h").play()`)
			p.wait("element playing", h+`.highwater.playing`)
			run(p, `document.getElementById("f").contentWindow.postMessage({op: "play"}, "*")`)
			p.wait("iframe playing", f+`.highwater.playing`)
			run(p, `document.getElementById("f").contentWindow.postMessage({op: "pause"}, "*")`)
			p.wait("iframe paused", `!`+f+`.highwater.playing`)
			if w == 800 {
				p.viewShot("embed-host-800")
				run(p, `document.getElementById("f").scrollIntoView()`)
			}
			p.viewShot(fmt.Sprintf("embed-%d", w))
			run(p, `document.getElementById("f").contentWindow.postMessage({op: "step"}, "*")`)
			p.wait("a step event from the element", `window.stepEv && window.stepEv.t > 4100 || true`)
			if !strings.Contains(evalJS[string](p, `document.getElementById("h").src`), "tour=1") {
				t.Error("element src without tour=1")
			}
			// Every attribute becomes its URL parameter (the page's handling of each is checked above and in TestEmbed).
			src := evalJS[string](p, `(() => { const e = document.createElement("highwater-embed");
				for (const [k, v] of Object.entries({scenario: "a b.json", autoplay: "", speed: "100", "caption-delay": "500", flight: "300", projector: "", seed: "3", step: "2", controls: "full"})) e.setAttribute(k, v);
				return e.src; })()`)
			for _, want := range []string{"/index.html?embed=1", "scenario=a+b.json", "autoplay=1", "speed=100", "captionDelay=500", "flight=300", "projector=1", "seed=3", "step=2", "controls=full", "tour=0"} {
				if !strings.Contains(src, want) {
					t.Errorf("element src %q lacks %s", src, want)
				}
			}
		})
	}
}

// TestEmbedBadScenario: a missing preset, a missing scenario file and an invalid one each show
// an error naming them, on a page that still works; a scenario from another origin says so.
func TestEmbedBadScenario(t *testing.T) {
	for q, want := range map[string]string{
		"?embed=1&scenario=testdata/nope.json": "testdata/nope.json",
		"?embed=1&preset=nope.json":            "nope.json",
		"?embed=1&scenario=testdata/bad.json":  "testdata/bad.json",
	} {
		_, base := staticBuild(t)
		p := newPageAt(t, base, q, 800, 500)
		p.wait("the engine", `document.body.dataset.engine === "ready"`)
		p.wait("the error", `!document.getElementById("error").hidden`)
		if msg := evalJS[string](p, `document.getElementById("error").textContent`); !strings.Contains(msg, want) {
			t.Errorf("%s: error %q does not name %s", q, msg, want)
		}
		if !evalJS[bool](p, `document.getElementById("play").offsetParent !== null`) {
			t.Errorf("%s: no working page", q)
		}
		p.close()
	}
	// A scenario from another origin (which allows it, CORS) loads and says where it is from.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		http.ServeFile(w, r, "testdata/three-brokers.json")
	}))
	defer other.Close()
	p := newPage(t, "?embed=1&scenario="+url.QueryEscape(other.URL+"/three.json"), 800, 500)
	p.loaded()
	p.wait("the origin shown", `!document.getElementById("scenario-origin").hidden`)
	if got := evalJS[string](p, `document.getElementById("scenario-origin").textContent`); !strings.Contains(got, other.URL) {
		t.Errorf("origin line %q does not name %s", got, other.URL)
	}
	if !evalJS[bool](p, `(() => { const r = document.getElementById("scenario-origin").getBoundingClientRect(); return r.height > 0 && r.bottom <= innerHeight; })()`) {
		t.Error("the origin line is not in view")
	}
}

// run evaluates a statement in the page.
func run(p *page, js string) {
	p.t.Helper()
	evalJS[bool](p, "(() => { "+js+"; return true })()")
}
