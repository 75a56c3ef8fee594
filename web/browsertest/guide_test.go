//go:build !js

package browsertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestGuide: the guide (guide.html) loads, and every scenario embedded in it loads its preset and
// plays to its end (driven through the embed's message API, seek to the end) with every
// expectation of the preset holding and no page error.
func TestGuide(t *testing.T) {
	p := newPageFor(t, srvURL, "", 1280, 900, 4*time.Minute)
	p.do(chromedp.Navigate(srvURL + "/guide.html"))
	n := evalJS[int](p, `document.querySelectorAll(".demo iframe").length`)
	if n < 6 {
		t.Fatalf("the guide embeds %d scenarios, want one per topic (6 or more)", n)
	}
	for i := range n {
		frame := fmt.Sprintf(`document.querySelectorAll(".demo iframe")[%d]`, i)
		// Bring it into view so that a lazy iframe loads.
		evalJS[bool](p, `(() => { `+frame+`.scrollIntoView({block: "center"}); return true; })()`)
		p.waitFor(90*time.Second, fmt.Sprintf("embed %d loaded", i),
			frame+`.contentWindow && `+frame+`.contentWindow.highwater && `+frame+`.contentWindow.highwater.scenario !== null && `+frame+`.contentWindow.highwater.scenario !== undefined`)
		name := evalJS[string](p, frame+`.contentWindow.highwater.scenario.name`)
		end := evalJS[int](p, `(() => { const s = `+frame+`.contentWindow.highwater.scenario; return Math.max(s.duration || 0, ...(s.steps || []).map(x => x.at)) + 1000; })()`)
		evalJS[bool](p, `(() => { `+frame+`.contentWindow.postMessage({op: "seek", t: `+fmt.Sprint(end)+`}, "*"); return true; })()`)
		p.waitFor(90*time.Second, fmt.Sprintf("%s played to %d ms", name, end), frame+`.contentWindow.highwater.t === `+fmt.Sprint(end))
		failed := evalJS[[]string](p, `[...`+frame+`.contentDocument.querySelectorAll('#log li[data-type="expect"].bad')].map(li => li.textContent)`)
		errText := evalJS[string](p, `(() => { const e = `+frame+`.contentDocument.getElementById("error"); return e && !e.hidden ? e.textContent : ""; })()`)
		t.Logf("embed %d, %s: played to %d ms; %d failed expectations", i, name, end, len(failed))
		if len(failed) > 0 || errText != "" {
			t.Errorf("%s: failed expectations %q, page error %q", name, failed, errText)
		}
	}
	p.viewShot("guide")
}
