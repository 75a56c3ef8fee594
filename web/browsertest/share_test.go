//go:build !js

package browsertest

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/highwater-sim/highwater/engine"
)

// TestShareLink: a run with a seek, a fork (a kill the preset did not have) and a later time is
// copied as a link; opening the link replays it to the same engine view, byte for byte. A
// truncated link shows an error and an empty cluster that works.
func TestShareLink(t *testing.T) {
	_, base := staticBuild(t)
	p := newPageFor(t, base, "?preset=kill-the-leader.json&speed=100", 1280, 900, 60*time.Second)
	p.loaded()
	p.wait("the preset", `document.getElementById("preset").value === "kill-the-leader.json"`)
	p.advance(2500)
	// A preset not acted on is shared by its name.
	p.click("#share")
	p.wait("the preset's link", `!!window.highwater.shareLink`)
	if l := evalJS[string](p, `window.highwater.shareLink`); !strings.HasSuffix(l, "/#preset=kill-the-leader.json&t=2500") {
		t.Errorf("an untouched preset's link %q", l)
	} else {
		t.Logf("untouched preset link: %d characters", len(l))
	}
	run(p, `window.highwater.shareLink = ""`)
	p.click(`button[aria-label="Kill broker 2"]`) // a fork: the preset's steps after 2.5 s are dropped
	p.wait("the kill on the timeline", `window.highwater.timeline.actions.some(a => a.action.do === "kill" && a.at === 2500)`)
	p.advance(3000)
	run(p, `document.getElementById("scrub").value = "4000"; document.getElementById("scrub").dispatchEvent(new Event("change"))`)
	p.wait("seek back to 4000", `window.highwater.t === 4000`)
	p.click("#share")
	p.wait("the link", `!!window.highwater.shareLink`)
	link := evalJS[string](p, `window.highwater.shareLink`)
	want := evalJS[string](p, `JSON.stringify(window.highwater.view)`)
	t.Logf("share link: %d characters", len(link))
	if len(link) > 4000 {
		t.Errorf("share link %d characters, want a chat-sized one", len(link))
	}
	hash := link[strings.Index(link, "#"):]
	if !strings.HasPrefix(hash, "#run=") || !strings.HasSuffix(hash, "&t=4000") {
		t.Fatalf("share link fragment %q", hash[:min(len(hash), 80)])
	}
	q := newPageFor(t, base, hash, 1280, 900, 60*time.Second)
	q.loaded()
	q.wait("the shared run at 4000", `window.highwater.t === 4000 && window.highwater.timeline.actions.some(a => a.action.do === "kill" && a.at === 2500)`)
	if got := evalJS[string](q, `JSON.stringify(window.highwater.view)`); got != want {
		t.Errorf("the shared run's view differs:\n got %.300s\nwant %.300s", got, want)
	}
	// A preset not acted on is shared by name.
	q.click("#share")
	q.wait("the second link", `!!window.highwater.shareLink`)
	if l := evalJS[string](q, `window.highwater.shareLink`); !strings.Contains(l, "#run=") {
		t.Errorf("a shared run's link %q is not the run", l)
	}

	// Damaged: cut short, and garbage.
	for _, bad := range []string{hash[:len(hash)/2], "#run=%%%&t=5", "#preset=nope.json&t=1"} {
		r := newPageAt(t, base, bad, 1000, 700)
		r.loaded()
		r.wait("the error", `!document.getElementById("error").hidden && document.getElementById("error").textContent.includes("shared link")`)
		if name := evalJS[string](r, `document.getElementById("scenario-name").textContent`); name != "3 brokers, 1 partition, RF 3" {
			t.Errorf("%.40s: the page shows %q, want the empty cluster", bad, name)
		}
		r.advance(300) // the page works
		if strings.HasPrefix(bad, "#preset") {
			// A small run of one's own: an empty cluster, a kill.
			r.click(`button[aria-label="Kill broker 1"]`)
			r.wait("the kill", `window.highwater.timeline.actions.length === 1`)
			r.advance(200)
			r.click("#share")
			r.wait("its link", `!!window.highwater.shareLink`)
			t.Logf("a New cluster run with one kill: %d characters", len(evalJS[string](r, `window.highwater.shareLink`)))
		}
		r.close()
	}
}

// TestUntrustedNames: a scenario whose name, description and caption are HTML, opened from a
// share link and imported from a file, shows them as text and runs no script.
func TestUntrustedNames(t *testing.T) {
	const xss = `<img src=x onerror="window.pwned=1">`
	sc := `{"name": "` + strings.ReplaceAll(xss, `"`, `\"`) + `", "description": "` + strings.ReplaceAll(xss, `"`, `\"`) + ` **bold**",
	  "brokers": 3, "topics": [{"name": "orders", "partitions": 1, "replicationFactor": 3}],
	  "steps": [{"at": 5, "do": "caption", "text": "` + strings.ReplaceAll(xss, `"`, `\"`) + `"}]}`
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, 9)
	fw.Write([]byte(sc))
	fw.Close()
	link := "#run=" + base64.RawURLEncoding.EncodeToString(z.Bytes()) + "&t=20"
	check := func(p *page, how string) {
		p.wait(how+": the scenario", `document.getElementById("scenario-name").textContent.startsWith("<img")`)
		time.Sleep(300 * time.Millisecond) // an image error would have fired by now
		if evalJS[bool](p, `window.pwned !== undefined || document.querySelector("img[src='x']") !== null`) {
			t.Errorf("%s: the scenario's HTML ran or was parsed", how)
		}
		if got := evalJS[string](p, `document.getElementById("scenario-name").textContent`); got != xss {
			t.Errorf("%s: name shown as %q", how, got)
		}
		if !evalJS[bool](p, `document.getElementById("scenario-desc").textContent.includes("<img src=x")`) {
			t.Errorf("%s: description not shown as text", how)
		}
	}
	_, base := staticBuild(t)
	p := newPageAt(t, base, link, 1000, 700)
	p.loaded()
	p.wait("t = 20", `window.highwater.t === 20`)
	check(p, "share link")
	if !evalJS[bool](p, `[...document.querySelectorAll("#log-list li")].some(li => li.textContent.includes("<img src=x"))`) {
		t.Error("share link: the caption is not in the narration as text")
	}
	file := filepath.Join(t.TempDir(), "xss.json")
	if err := os.WriteFile(file, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	q := newPageAt(t, base, "?preset=kill-the-leader.json", 1000, 700)
	q.loaded()
	q.wait("the preset", `document.getElementById("preset").value === "kill-the-leader.json"`)
	q.do(chromedp.SetUploadFiles(chromedp.ID("scenario-file"), []string{file}))
	check(q, "import")
	q.advance(10)
	check(q, "import, after the caption")
}

// TestExportTraceAndDrop: a scenario dropped on the page loads; Export trace saves the events so
// far as JSON lines, the same as the engine's own trace up to that time (what `highwater run
// --trace` writes), and leaves the page where it was.
func TestExportTraceAndDrop(t *testing.T) {
	p := newPage(t, "?preset=kill-the-leader.json", 1000, 700)
	p.loaded()
	p.wait("the preset", `document.getElementById("preset").value === "kill-the-leader.json"`)
	data, err := os.ReadFile("testdata/three-brokers.json")
	if err != nil {
		t.Fatal(err)
	}
	run(p, `const dt = new DataTransfer(); dt.items.add(new File([`+strconv.Quote(string(data))+`], "three.json", {type: "application/json"}));
		document.body.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
		document.body.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}))`)
	p.wait("the dropped scenario", `document.getElementById("scenario-name").textContent === "Three brokers for the browser tests"`)
	p.advance(1500)
	view := evalJS[string](p, `JSON.stringify(window.highwater.view)`)
	run(p, `window.blobs = []; const orig = URL.createObjectURL; URL.createObjectURL = (b) => { window.blobs.push(b); return orig(b); }`)
	p.click("#export-trace")
	p.wait("the trace", `window.blobs.length === 1`)
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`window.blobs[0].text()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	p.wait("the page back at 1500", `window.highwater.t === 1500 && !window.highwater.busy`)
	if v := evalJS[string](p, `JSON.stringify(window.highwater.view)`); v != view {
		t.Error("the view changed after Export trace")
	}
	sc, err := engine.ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 1500 // the page's run so far
	var want strings.Builder
	enc := json.NewEncoder(&want)
	if _, _, err := engine.Run(sc, func(evs []engine.Event) {
		for i := range evs {
			if evs[i].T <= 1500 {
				enc.Encode(&evs[i])
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		t.Errorf("the page's trace (%d lines) differs from the engine's (%d lines):\n%s\n---\n%s", len(gl), len(wl), got, want.String())
	}
}
