//go:build !js

package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// fixture loads the tests' own scenario (testdata/three-brokers.json).
const fixture = "?scenario=testdata/three-brokers.json"

func TestEngineStartsInWorker(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	status := evalJS[string](p, `document.getElementById("status").textContent`)
	if !strings.Contains(status, "engine ready (in-page engine (WebAssembly worker)") {
		t.Fatalf("status = %q", status)
	}
	if got := evalJS[string](p, `document.body.dataset.hasDocument`); got != "false" {
		t.Fatalf("the engine should run in a worker (no document); hasDocument = %q", got)
	}
	// Play at 10× until the preset's writes are acknowledged and replicated.
	p.change("speed", "100")
	p.click("#play")
	p.wait("t ≥ 1000", `window.highwater.t >= 1000`)
	p.click("#play")
	p.wait("five records on every replica", `[...document.querySelectorAll('.partition[data-tp="orders-0"] .replica')].every(r => r.querySelectorAll(".rec:not(.cut)").length === 5)`)
	if n := evalJS[int](p, `document.querySelectorAll("#log li").length`); n == 0 {
		t.Fatal("no narration")
	}
	if _, err := os.Stat("../dist/vendor/uPlot.iife.min.js"); err == nil { // committed
		p.wait("the HW/LEO chart", `document.querySelector("#chart .uplot canvas") !== null`)
	}
	p.screenshot("engine-started")
}

func TestKillLeaderElectsNewLeader(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	p.advance(1000)
	if l := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader`); l != "0" {
		t.Fatalf("leader before = %s, want 0", l)
	}
	p.click(`button[aria-label="Kill broker 0"]`)
	p.wait("broker 0 down", `document.querySelector('.broker[data-broker="0"]').dataset.state === "dead"`)
	// The controller learns of the death when the ZooKeeper session expires (18 000 ms).
	p.advance(17000)
	if l := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader`); l != "0" {
		t.Fatalf("leader changed before the session timeout: %s", l)
	}
	p.advance(2000)
	p.wait("a new leader", `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader === "1"`)
	isr := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-0"]').dataset.isr`)
	if isr != "1,2" {
		t.Fatalf("ISR on screen = %q, want 1,2", isr)
	}
	info := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-0"] .pinfo').textContent`)
	if !strings.Contains(info, "leader broker 1") || !strings.Contains(info, "ISR [1 2]") {
		t.Fatalf("partition header = %q", info)
	}
	if !evalJS[bool](p, `document.querySelector('.partition[data-tp="orders-0"] .replica[data-broker="0"]').classList.contains("outsync")`) {
		t.Fatal("broker 0's replica is not highlighted as out of sync")
	}
	// The new controller first takes broker 0's replica offline (leader 0 → none), then elects
	// (none → 1): ReplicaStateMachine.startup before PartitionStateMachine.startup (Kafka 2.3+).
	if !evalJS[bool](p, `[...document.querySelectorAll("#log li")].some(li => li.textContent.includes("leader none → 1"))`) {
		t.Fatal("the narration does not tell of the leader change")
	}
	p.screenshot("kill-leader")
}

func TestScrubBackAndActForks(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	p.advance(3000)
	p.click(`button[aria-label="Kill broker 0"]`)
	p.wait("broker 0 down", `document.querySelector('.broker[data-broker="0"]').dataset.state === "dead"`)
	p.advance(20000)
	p.wait("leader 1", `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader === "1"`)

	// Drag the timeline back to 2 s, before the kill.
	p.change("scrub", "2000")
	p.wait("t = 2000", `window.highwater.t === 2000`)
	p.wait("leader 0 again", `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader === "0"`)
	if s := evalJS[string](p, `document.querySelector('.broker[data-broker="0"]').dataset.state`); s != "running" {
		t.Fatalf("broker 0 after seeking back: %s", s)
	}
	if end := evalJS[int](p, `window.highwater.timeline.end`); end != 23000 {
		t.Fatalf("timeline end after seek = %d, want 23000 (seek keeps the future)", end)
	}

	// Acting here forks: the old kill of broker 0 is dropped, broker 2 dies instead.
	p.click(`button[aria-label="Kill broker 2"]`)
	p.wait("the fork", `document.getElementById("timeline-info").dataset.forked === "2000"`)
	actions := evalJS[[]map[string]any](p, `window.highwater.timeline.actions.map(a => ({at: a.at, do: a.action.do, broker: a.action.broker}))`)
	for _, a := range actions {
		if a["do"] == "kill" && a["broker"] == float64(0) {
			t.Fatalf("the old future's kill of broker 0 survived the fork: %v", actions)
		}
	}
	if last := actions[len(actions)-1]; last["do"] != "kill" || last["broker"] != float64(2) || last["at"] != float64(2000) {
		t.Fatalf("last action = %v, want kill broker 2 at 2000", last)
	}
	p.advance(20000)
	p.wait("broker 2 out of the ISR", `document.querySelector('.partition[data-tp="orders-0"]').dataset.isr === "0,1"`)
	if l := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader`); l != "0" {
		t.Fatalf("leader in the new future = %s, want 0", l)
	}
	if !evalJS[bool](p, `[...document.querySelectorAll("#log li")].some(li => li.textContent.includes("Timeline forked at 2.000 s"))`) {
		t.Fatal("the narration does not tell of the fork")
	}
	p.screenshot("fork")

	// The abandoned future is kept: going back to it brings the kill of broker 0 back, at 2 s.
	p.click("#branch-back")
	p.wait("the other branch at 2 s", `window.highwater.t === 2000 && window.highwater.timeline.actions.some(a => a.action.do === "kill" && a.action.broker === 0 && a.at === 3000)`)
	if evalJS[bool](p, `window.highwater.timeline.actions.some(a => a.action.do === "kill" && a.action.broker === 2)`) {
		t.Fatal("the other branch still has the new future's kill of broker 2")
	}
	p.advance(2000)
	p.wait("broker 0 killed again", `document.querySelector('.broker[data-broker="0"]').dataset.state === "dead"`)
	if evalJS[bool](p, `document.getElementById("branch-back").hidden`) {
		t.Fatal("no way back to the branch just left")
	}
}

func TestMalformedScenarioShowsError(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	dir := t.TempDir()
	bad := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(bad, []byte(`{"name": "broken", "brokers": 3, "topics": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.SetUploadFiles(chromedp.ID("scenario-file"), []string{bad}))
	p.wait("an error", `!document.getElementById("error").hidden`)
	msg := evalJS[string](p, `document.getElementById("error").textContent`)
	if !strings.Contains(msg, "Could not load broken.json") || !strings.Contains(msg, "not valid JSON") {
		t.Fatalf("error shown = %q", msg)
	}
	p.screenshot("malformed-scenario")

	// Valid JSON that is not a valid scenario: the engine's parser names the field.
	wrong := filepath.Join(dir, "wrong.json")
	if err := os.WriteFile(wrong, []byte(`{"name": "wrong", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "colour": "red"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.SetUploadFiles(chromedp.ID("scenario-file"), []string{wrong}))
	p.wait("the engine's error", `document.getElementById("error").textContent.includes("wrong.json")`)
	msg = evalJS[string](p, `document.getElementById("error").textContent`)
	if !strings.Contains(msg, "colour: unknown field") {
		t.Fatalf("error shown = %q", msg)
	}
	// The old cluster is still there and usable.
	if name := evalJS[string](p, `document.getElementById("scenario-name").textContent`); name != "Three brokers for the browser tests" {
		t.Fatalf("scenario after a failed load = %q", name)
	}
}

func TestNativeBackendWithoutServerShowsError(t *testing.T) {
	p := newPage(t, "?backend=native", 1280, 900)
	p.wait("an error", `!document.getElementById("error").hidden`)
	msg := evalJS[string](p, `document.getElementById("error").textContent`)
	if !strings.Contains(msg, "cannot reach the native engine") {
		t.Fatalf("error shown = %q", msg)
	}
}

func TestOverviewGridFocus(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	p.click("#new-cluster")
	p.do(
		chromedp.SetValue(chromedp.CSS(`#new-form [name="brokers"]`), "6"),
		chromedp.SetValue(chromedp.CSS(`#new-form [name="partitions"]`), "100"),
		chromedp.Click(chromedp.CSS(`#new-form button[type="submit"]`)),
	)
	p.wait("the overview", `!document.getElementById("overview").hidden && document.querySelectorAll("#overview-grid .cell").length === 100`)
	if n := evalJS[int](p, `document.querySelectorAll(".partition").length`); n != 0 {
		t.Fatalf("%d partitions in detail before any focus", n)
	}
	p.click(`#overview-grid .cell[data-tp="orders-17"]`)
	p.wait("orders-17 in detail", `document.querySelector('.partition[data-tp="orders-17"]') !== null`)
	// The grid is one tab stop (the cell last used); arrow keys move within it and Enter shows a
	// partition.
	if n := evalJS[int](p, `[...document.querySelectorAll("#overview-grid .cell")].filter(b => b.tabIndex === 0).length`); n != 1 {
		t.Fatalf("%d tab stops in the overview grid, want 1", n)
	}
	evalJS[bool](p, `(document.querySelector('#overview-grid .cell[tabindex="0"]').focus(), true)`)
	p.do(chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("\r"))
	p.wait("orders-19 in detail", `document.querySelector('.partition[data-tp="orders-19"]') !== null`)
	p.click(`button[aria-label="Kill broker 2"]`)
	p.advance(19000)
	p.wait("under-replicated cells", `document.querySelectorAll("#overview-grid .cell.st-u").length > 0`)
	// The rest of the overview: counters, broker tiles, traffic, and what was only counted.
	p.wait("ISR shrinks counted", `/ISR shrinks [1-9]/.test(document.getElementById("overview-counters").textContent)`)
	p.wait("fetch traffic", `/^[1-9][0-9.]* fetches\/s/.test(document.getElementById("traffic-note").textContent)`)
	if n := evalJS[int](p, `document.querySelectorAll("#overview-brokers .btile").length`); n != 6 {
		t.Fatalf("%d broker tiles, want 6", n)
	}
	if !evalJS[bool](p, `document.querySelector('#overview-brokers .btile[data-broker="2"]').classList.contains("bt-dead")`) {
		t.Fatal("broker 2's tile does not show it down")
	}
	if !evalJS[bool](p, `/Counted, not sent in full: .*fetch/.test(document.getElementById("overview-elsewhere").textContent)`) {
		t.Fatal("the fetches left out of the overview are not counted on screen")
	}
	// Colour by leader: orders-2 (replicas 2, 3, 4) moved from the dead broker 2 to broker 3.
	p.change("grid-colour", "leader")
	p.wait("cells coloured by leader", `document.querySelectorAll("#overview-grid .cell.lead").length === 100`)
	if label := evalJS[string](p, `document.querySelector('#overview-grid .cell[data-tp="orders-2"]').getAttribute("aria-label")`); !strings.Contains(label, "leader broker 3") {
		t.Fatalf("orders-2 cell: %q, want its new leader, broker 3", label)
	}
	p.screenshot("overview-by-leader")
	p.change("grid-colour", "state")
	p.wait("cells coloured by state", `document.querySelectorAll("#overview-grid .cell.lead").length === 0`)
	// Drill into broker 3: it leads neither focused partition, so its purgatory is only counted
	// until it is focused; then its parked fetches are listed.
	if evalJS[bool](p, `/fetch #\d+ from broker/.test(document.querySelector('.broker[data-broker="3"]').textContent)`) {
		t.Fatal("broker 3's parked fetches are listed before it is focused")
	}
	// The broker tiles are one tab stop; the keyboard reaches broker 3 with the arrow keys.
	if n := evalJS[int](p, `[...document.querySelectorAll("#overview-brokers .btile")].filter(b => b.tabIndex === 0).length`); n != 1 {
		t.Fatalf("%d tab stops among the broker tiles, want 1", n)
	}
	evalJS[bool](p, `(document.querySelector('#overview-brokers .btile[tabindex="0"]').focus(), true)`)
	p.do(chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("\r"))
	p.wait("broker 3 chosen by keyboard", `document.querySelector('#overview-brokers .btile[data-broker="3"]').getAttribute("aria-pressed") === "true"`)
	p.advance(600)
	p.wait("broker 3 in detail", `document.querySelector('#overview-brokers .btile[data-broker="3"]').getAttribute("aria-pressed") === "true" && /fetch #\d+ from broker/.test(document.querySelector('.broker[data-broker="3"]').textContent)`)
	// Replies after the first carry view patches, and the patched view is what is drawn.
	if n := evalJS[int](p, `window.highwater.patches || 0`); n < 3 {
		t.Fatalf("%d view patches applied, want several", n)
	}
	// A page out of step with the engine's view (as if a reply went missing) asks for a whole
	// view instead of patching the wrong one.
	evalJS[bool](p, `(window.highwater.viewSeq = -5, true)`)
	p.advance(100)
	p.wait("a whole view again", `window.highwater.viewSeq > 0 && !window.highwater.resyncing`)
	if !evalJS[bool](p, `window.highwater.view.t === window.highwater.t && document.getElementById("error").hidden`) {
		t.Fatal("after the resync the view is not the engine's current one")
	}
	p.screenshot("overview")
	// A one-partition preset next: the old focus (orders-17, orders-19, broker 3) must not go
	// with the load, or the engine would refuse it.
	p.change("preset", "leader-crash-truncation.json")
	p.wait("the preset loaded", `document.getElementById("scenario-name").textContent.includes("crash") && document.getElementById("overview").hidden`)
	if msg := evalJS[string](p, `document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`); msg != "" {
		t.Fatalf("loading a preset after focusing in an overview: %s", msg)
	}
}

func TestPhoneWidth(t *testing.T) {
	p := newPage(t, "?scenario=testdata/leader-crash.json", 390, 844)
	p.loaded()
	p.advance(22010)
	p.wait("the truncation narrated", `[...document.querySelectorAll("#log li")].some(li => li.textContent.includes("truncated orders-0"))`)
	// Touch: tap a broker control.
	p.do(chromedp.Tap(chromedp.CSS(`button[aria-label="Isolate broker 2"]`), chromedp.NodeVisible))
	p.wait("broker 2 isolated", `document.querySelector('.broker[data-broker="2"]').classList.contains("isolated")`)
	overflow := evalJS[bool](p, `document.documentElement.scrollWidth > window.innerWidth + 1`)
	if overflow {
		t.Error("the page scrolls sideways at phone width")
	}
	p.screenshot("phone")
	p.viewShot("phone-viewport")
}

func TestViolationFlaggedWithJump(t *testing.T) {
	p := newPage(t, "?scenario=testdata/unclean-loss.json", 1280, 900)
	p.loaded()
	p.change("speed", "1000")
	p.click("#play")
	p.wait("the violation notice", `!document.getElementById("violation").hidden`)
	text := evalJS[string](p, `document.getElementById("violation-text").textContent`)
	if !strings.Contains(text, "acked-write-lost") {
		t.Fatalf("violation notice = %q", text)
	}
	if playing := evalJS[bool](p, `window.highwater.playing`); playing {
		t.Fatal("play should pause at the first violation")
	}
	vt := evalJS[int](p, `window.highwater.api.violations.last.t`)
	p.advance(3000)
	p.click("#violation-jump")
	p.wait("the jump", `window.highwater.t === `+strconv.Itoa(vt))
	if !evalJS[bool](p, `[...document.querySelectorAll("#log li.bad")].length > 0`) {
		t.Fatal("the narration does not flag the violation")
	}
	p.screenshot("violation")
}

func TestNativeBackend(t *testing.T) {
	p := newPageAt(t, nativeURL, "?backend=native&scenario=testdata/three-brokers.json", 1280, 900)
	p.loaded()
	status := evalJS[string](p, `document.getElementById("status").textContent`)
	if !strings.Contains(status, "native engine (websocket") {
		t.Fatalf("status = %q", status)
	}
	p.advance(1000)
	p.click(`button[aria-label="Kill broker 0"]`)
	p.advance(19000)
	p.wait("a new leader", `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader === "1"`)
	p.screenshot("native")
	// Play: on the native backend the server paces time and pushes frames; pausing stops them.
	requests := evalJS[int](p, `window.highwater.transport.nextId`)
	p.change("speed", "100")
	p.click("#play")
	p.wait("server-paced frames", `window.highwater.t > 25000`)
	p.click("#play")
	if sent := evalJS[int](p, `window.highwater.transport.nextId`) - requests; sent > 3 {
		t.Fatalf("the page sent %d requests while the server played (want play and pause only)", sent)
	}
	time.Sleep(300 * time.Millisecond) // frames already on the way still land
	stopped := evalJS[int](p, `window.highwater.t`)
	time.Sleep(400 * time.Millisecond)
	if now := evalJS[int](p, `window.highwater.t`); now != stopped {
		t.Fatalf("time went on after the pause: %d → %d", stopped, now)
	}
	// Flat out: the server runs as fast as it can (play with speed 0).
	p.change("speed", "0")
	p.click("#play")
	p.wait("flat out past two minutes", `window.highwater.t > 120000`)
	p.click("#play")
}

// TestFlatOutInPage: the flat-out speed in the page engine advances a second per request, as fast
// as the worker answers, and stops on Pause.
func TestFlatOutInPage(t *testing.T) {
	p := newPage(t, "?scenario=testdata/three-brokers.json", 1280, 900)
	p.loaded()
	p.change("speed", "0")
	p.click("#play")
	p.wait("flat out past two minutes", `window.highwater.t > 120000`)
	p.click("#play")
	p.wait("the pause", `!window.highwater.busy`)
	stopped := evalJS[int](p, `window.highwater.t`)
	time.Sleep(300 * time.Millisecond)
	if now := evalJS[int](p, `window.highwater.t`); now != stopped {
		t.Fatalf("time went on after the pause: %d → %d", stopped, now)
	}
}

// TestSameOutcomeBothBackends: the same clicks in the page engine and on the native server give
// the same view, byte for byte (the engine is deterministic and both hosts run engine/session).
func TestSameOutcomeBothBackends(t *testing.T) {
	views := map[string]string{}
	for _, backend := range []struct{ name, base, query string }{
		{"in-page", srvURL, "?scenario=testdata/three-brokers.json"},
		{"native", nativeURL, "?backend=native&scenario=testdata/three-brokers.json"},
	} {
		p := newPageAt(t, backend.base, backend.query, 1280, 900)
		p.loaded()
		p.advance(1000)
		p.click(`button[aria-label="Kill broker 0"]`)
		p.advance(19000)
		p.click(`button[aria-label="Restart broker 0"]`)
		p.advance(4000) // before the first imbalance check, 5 s after the failover, moves leadership back
		views[backend.name] = evalJS[string](p, `JSON.stringify(window.highwater.view)`)
		p.close()
	}
	if views["in-page"] != views["native"] {
		t.Fatalf("the views differ:\nin-page: %.400s\nnative:  %.400s", views["in-page"], views["native"])
	}
	if !strings.Contains(views["native"], `"leader":1`) {
		t.Fatalf("no new leader in the view: %.300s", views["native"])
	}
}

func TestTruncationShownBeforeItGoes(t *testing.T) {
	p := newPage(t, "?scenario=testdata/leader-crash.json", 1280, 900)
	p.loaded()
	p.advance(22000)
	row := `document.querySelector('.partition[data-tp="orders-0"] .replica[data-broker="0"]')`
	if n := evalJS[int](p, row+`.querySelectorAll(".rec:not(.cut)").length`); n != 6 {
		t.Fatalf("broker 0 holds %d records before the truncation, want 6", n)
	}
	// Step event by event until broker 0 truncates; the cut records stay briefly, marked.
	for i := 0; i < 40 && !evalJS[bool](p, row+`.querySelector(".rec.cut") !== null`); i++ {
		n := evalJS[int](p, `window.highwater.replies`)
		p.click("#step")
		p.wait("the step", fmt.Sprintf(`window.highwater.replies > %d`, n))
	}
	if n := evalJS[int](p, row+`.querySelectorAll(".rec.cut").length`); n != 2 {
		t.Fatalf("%d records shown as cut, want 2", n)
	}
	p.screenshot("truncation")
	p.wait("the cut records to go", row+`.querySelector(".rec.cut") === null || (document.getElementById("step").click(), false)`)
}

func TestMessagesAnimateInSlowMotion(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	p.advance(99)
	p.change("speed", "0.01")
	p.click("#play")
	// At 1/100× the 1 ms Produce takes 100 ms of wall time to cross: catch it mid-way.
	p.wait("a message in flight", `window.highwater.view.messages.length > 0 && window.highwater.displayT % 1 > 0.3`)
	p.screenshot("slow-motion")
	p.click("#play")
	if !evalJS[bool](p, `document.getElementById("inflight").textContent.includes("in flight")`) {
		t.Fatal("no text for the messages in flight")
	}
}

func TestKeyboardFocusSurvivesFrames(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	kill := `document.querySelector('button[aria-label="Kill broker 1"]')`
	evalJS[bool](p, `(`+kill+`.focus(), true)`)
	evalJS[bool](p, `(window.highwater.api.run({op: "advance", by: 1500}), true)`)
	p.wait("t = 1500", `window.highwater.t === 1500`)
	if got := evalJS[string](p, `document.activeElement.getAttribute("aria-label")`); got != "Kill broker 1" {
		t.Fatalf("focus after frames = %q, want the Kill broker 1 button", got)
	}
	p.do(chromedp.KeyEvent("\r"))
	p.wait("broker 1 down", `document.querySelector('.broker[data-broker="1"]').dataset.state === "dead"`)
	// Space on the page (not in a control) plays and pauses.
	evalJS[bool](p, `(document.activeElement.blur(), true)`)
	p.do(chromedp.KeyEvent(" "))
	p.wait("playing", `window.highwater.playing === true`)
	p.do(chromedp.KeyEvent(" "))
	p.wait("paused", `window.highwater.playing === false`)
}

// TestPresetsRun loads every preset through the preset menu and runs it to its end: each loads,
// shows its description, and runs without a page error, a script exception or a failed
// expectation (the same files pass `highwater run`, so a failure here is the page's or the
// session's).
func TestPresetsRun(t *testing.T) {
	// Every preset (28 now), each run to its end with the chart drawn: about 30 s on two busy
	// cores, so more than the default 30 s budget for the tab.
	p := newPageFor(t, srvURL, fixture, 1280, 900, 3*time.Minute)
	p.loaded()
	files := evalJS[[]string](p, `window.highwater.presets.map(x => x.file)`)
	if len(files) == 0 {
		t.Fatal("no presets offered")
	}
	for _, f := range files {
		p.change("preset", f)
		p.wait("preset "+f, `document.getElementById("scenario-name").textContent === window.highwater.scenario.name && window.highwater.scenario === window.highwater.presetObjects["`+f+`"]`)
		desc := evalJS[string](p, `document.getElementById("scenario-desc").textContent`)
		if desc == "" {
			t.Errorf("%s: no description shown", f)
		}
		end := evalJS[int](p, `Math.max(window.highwater.scenario.duration || 0, ...(window.highwater.scenario.steps || []).map(s => s.at)) + 1000`)
		now := evalJS[int](p, `window.highwater.t`)
		p.advance(end - now)
		if msg := evalJS[string](p, `document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`); msg != "" {
			t.Errorf("%s: page error %q", f, msg)
		}
		failed := evalJS[[]string](p, `[...document.querySelectorAll('#log li[data-type="expect"].bad')].map(li => li.textContent)`)
		t.Logf("%s: ran to %d ms; %d failed expectations %v", f, end, len(failed), failed)
		if len(failed) > 0 {
			t.Errorf("%s: the page reports failed expectations (the CLI checks the same file): %v", f, failed)
		}
		// Scrub back to the middle and forward to the end: the expectations are checked again,
		// each at its own time.
		p.change("scrub", strconv.Itoa(end/2))
		p.wait("the seek back", fmt.Sprintf(`window.highwater.t === %d`, end/2))
		p.change("scrub", strconv.Itoa(end))
		p.wait("the seek forward", fmt.Sprintf(`window.highwater.t === %d`, end))
		if failed := evalJS[[]string](p, `[...document.querySelectorAll('#log li[data-type="expect"].bad')].map(li => li.textContent)`); len(failed) > 0 {
			t.Errorf("%s: after scrubbing back and forth: failed expectations %v", f, failed)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.log {
		if strings.HasPrefix(l, "exception") {
			t.Errorf("script exception: %s", l)
		}
	}
}

func TestMissingEngineShowsError(t *testing.T) {
	p := newPageAt(t, bareURL, fixture, 1280, 900)
	p.wait("an error", `!document.getElementById("error").hidden`)
	msg := evalJS[string](p, `document.getElementById("error").textContent`)
	if !strings.Contains(msg, "engine.wasm: HTTP 404 (run `make wasm`)") {
		t.Fatalf("error shown = %q", msg)
	}
	if s := evalJS[string](p, `document.getElementById("status").textContent`); s != "engine unavailable" {
		t.Fatalf("status = %q", s)
	}
}

// TestKIP101PresetFlagsViolation plays KIP-101's first scenario under the 0.10.2 era (truncate to
// the high watermark) until the page flags the lost acknowledged write, and the same scenario
// under 3.7 to its end without a flag.
func TestKIP101PresetFlagsViolation(t *testing.T) {
	const old, fixed = "kip101-hw-truncation-0.10.2.json", "kip101-hw-truncation-3.7.json"
	for _, f := range []string{old, fixed} {
		if _, err := os.Stat(filepath.Join("../../scenarios", f)); err != nil {
			t.Skipf("preset %s not there yet", f)
		}
	}
	p := newPage(t, "?preset="+old, 1280, 900)
	p.loaded()
	p.change("speed", "1000")
	p.click("#play")
	p.wait("the violation notice", `!document.getElementById("violation").hidden`)
	if text := evalJS[string](p, `document.getElementById("violation-text").textContent`); !strings.Contains(text, "acked-write-lost") {
		t.Fatalf("violation notice = %q", text)
	}
	p.screenshot("kip101-0.10.2")

	p.change("preset", fixed)
	p.wait("the 3.7 preset", `document.getElementById("preset").value === "`+fixed+`" && window.highwater.t === 0`)
	p.advance(41000)
	if !evalJS[bool](p, `document.getElementById("violation").hidden && window.highwater.view.violations.length === 0`) {
		t.Fatal("the 3.7 era should keep the write")
	}
}

func TestNewClusterWithTwoTopics(t *testing.T) {
	p := newPage(t, fixture, 1280, 900)
	p.loaded()
	p.click("#new-cluster")
	p.do(
		chromedp.SetValue(chromedp.CSS(`#new-form [name="topic"]`), "orders, payments"),
		chromedp.SetValue(chromedp.CSS(`#new-form [name="partitions"]`), "2"),
		chromedp.SetValue(chromedp.CSS(`#new-form [name="era"]`), "0.11.0"),
		chromedp.Click(chromedp.CSS(`#new-form button[type="submit"]`)),
	)
	p.wait("four partitions", `document.querySelectorAll(".partition").length === 4 && document.querySelector('.partition[data-tp="payments-1"]') !== null`)
	if era := evalJS[string](p, `document.getElementById("era").textContent`); era != "0.11.0" {
		t.Fatalf("era = %q", era)
	}
}

// TestEmbed: a documentation page embeds a scenario with ?embed=1: no backend, preset, file or
// settings controls; the cluster, time controls and narration stay; autoplay and speed come from
// the URL; a link opens the full page on the same scenario.
func TestEmbed(t *testing.T) {
	p := newPage(t, "?embed=1&autoplay=1&speed=10&scenario=testdata/three-brokers.json", 800, 700)
	p.loaded()
	p.wait("autoplay", `window.highwater.playing && window.highwater.t > 2000`)
	hidden := func(sel string) bool {
		return evalJS[bool](p, `(() => { const e = document.querySelector(`+strconv.Quote(sel)+`); return !e || e.offsetParent === null; })()`)
	}
	for _, sel := range []string{".top-controls", "#settings", "#chart", `[aria-labelledby="client-h"]`} {
		if !hidden(sel) {
			t.Errorf("%s is shown in an embed", sel)
		}
	}
	for _, sel := range []string{"#play", "#scrub", ".partition", "#log", "#full-page"} {
		if hidden(sel) {
			t.Errorf("%s is hidden in an embed", sel)
		}
	}
	if v := evalJS[string](p, `document.getElementById("speed").value`); v != "10" {
		t.Errorf("speed %q, want 10 from the URL", v)
	}
	href := evalJS[string](p, `document.getElementById("full-page").href`)
	if strings.Contains(href, "embed") || !strings.Contains(href, "scenario=testdata") {
		t.Errorf("full-page link %q: want the same scenario without embed", href)
	}
	p.screenshot("embed")
	// A preset by name, played at once.
	q := newPage(t, "?embed=1&autoplay=1&speed=100&preset=kip101-divergence-0.10.2.json", 800, 700)
	q.loaded()
	q.wait("the preset playing", `document.getElementById("scenario-name").textContent.includes("KIP-101") && window.highwater.t > 1000`)
}
