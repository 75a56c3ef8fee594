//go:build !js

package browsertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestNativeLargeCluster is issue 5's user path at full size: switch to the native backend,
// create 100 brokers × 100,000 partitions, watch the overview, drill into one partition and kill
// its leader. It takes about a minute, so it runs only with HIGHWATER_BIG=1 (make bigcheck).
func TestNativeLargeCluster(t *testing.T) {
	if os.Getenv("HIGHWATER_BIG") == "" {
		t.Skip("set HIGHWATER_BIG=1 to run the 100,000-partition native check (make bigcheck)")
	}
	p := newNativeCluster(t, 100, 100_000, 5*time.Minute)
	long := func(what, expr string) {
		t.Helper()
		p.waitLong(what, expr, 120*time.Second, "big-native-failed")
	}
	long("the overview", `!document.getElementById("overview").hidden && document.querySelectorAll("#overview-grid .cell").length > 0`)
	p.screenshot("big-overview")
	if !evalJS[bool](p, `document.getElementById("detail-all").disabled`) {
		t.Fatal("'Draw every partition' is offered for 100,000 partitions")
	}
	p.click(`#overview-grid .cell[data-tp="orders-17"]`)
	long("orders-17 in detail", `document.querySelector('.partition[data-tp="orders-17"]') !== null`)
	leader := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-17"]').dataset.leader`)
	t0 := time.Now()
	p.click(`button[aria-label="Kill broker ` + leader + `"]`)
	p.do(chromedp.SetValue(chromedp.ID("advance-ms"), "19000"))
	p.click("#advance")
	// Cards off screen are refreshed when they scroll into view, as a user would look at it.
	evalJS[bool](p, `(document.querySelector('.partition[data-tp="orders-17"]').scrollIntoView(), true)`)
	long("a new leader for orders-17", `document.querySelector('.partition[data-tp="orders-17"]').dataset.leader !== "`+leader+`"`)
	t.Logf("kill → new leader on screen: %v (19 simulated seconds of 100,000 partitions)", time.Since(t0))
	long("under-replicated cells", `document.querySelectorAll("#overview-grid .cell.st-u").length > 0`)
	long("the ISR shrinks counted", `/ISR shrinks [1-9]/.test(document.getElementById("overview-counters").textContent)`)
	p.screenshot("big-native-kill")
	// Colour the 100,000 cells by leader: orders-17's cell names its new leader.
	p.do(chromedp.SetValue(chromedp.ID("grid-colour"), "leader"))
	newLeader := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-17"]').dataset.leader`)
	long("the grid coloured by leader", `(document.querySelector('#overview-grid .cell[data-tp="orders-17"]').getAttribute("aria-label") || "").includes("leader broker `+newLeader+`")`)
	p.viewShot("big-native-by-leader")
	p.do(chromedp.SetValue(chromedp.ID("grid-colour"), "state"))
	// Play at real time for 10 s: what the page receives per second, as JSON (the wire carries it
	// compressed), and how far simulated time got.
	before := evalJS[[]float64](p, `[window.highwater.transport.bytes, window.highwater.transport.replies, window.highwater.t, performance.now(), window.highwater.frames]`)
	p.click("#play")
	time.Sleep(10 * time.Second)
	p.click("#play")
	after := evalJS[[]float64](p, `[window.highwater.transport.bytes, window.highwater.transport.replies, window.highwater.t, performance.now(), window.highwater.frames]`)
	wall := (after[3] - before[3]) / 1000
	rate := (after[0] - before[0]) / wall
	t.Logf("playing 100,000 partitions at 1× for %.1f s: %.0f frames/s, %.0f replies/s, %.1f KiB/s received as JSON, %.1f simulated s (%.2f × real time); last request and render (ms): %s",
		wall, (after[4]-before[4])/wall, (after[1]-before[1])/wall, rate/1024, (after[2]-before[2])/1000, (after[2]-before[2])/1000/wall, evalJS[string](p, `JSON.stringify(window.highwater.perf)`))
	if rate > 100*1024 {
		t.Errorf("the overview streams %.0f KiB/s; the goal is at most 100", rate/1024)
	}
	// Play at 10× for 10 s: the scale issue's goal for 100,000 partitions with the overview
	// updating (measured and logged, not asserted: a timed check flakes on a busy machine).
	p.change("speed", "10")
	before = evalJS[[]float64](p, `[window.highwater.bytes || 0, window.highwater.replies, window.highwater.t, performance.now(), window.highwater.frames]`)
	p.click("#play")
	time.Sleep(10 * time.Second)
	p.click("#play")
	after = evalJS[[]float64](p, `[window.highwater.bytes || 0, window.highwater.replies, window.highwater.t, performance.now(), window.highwater.frames]`)
	wall = (after[3] - before[3]) / 1000
	t.Logf("playing 100,000 partitions at 10× for %.1f s: %.2f × real time, %.0f replies/s", wall, (after[2]-before[2])/1000/wall, (after[1]-before[1])/wall)
	p.change("speed", "1")
	// Drill into a broker: the leader of orders-17 now.
	nl := evalJS[string](p, `document.querySelector('.partition[data-tp="orders-17"]').dataset.leader`)
	p.click(`#overview-brokers .btile[data-broker="` + nl + `"]`)
	long("the broker's purgatory listed", `/fetch #\d+ from broker/.test(document.querySelector('.broker[data-broker="`+nl+`"]').textContent)`)
	p.screenshot("big-native-broker")
}

// newNativeCluster opens the page on the native backend and creates brokers × partitions from the
// new-cluster form, as a user does; budget bounds the whole test.
func newNativeCluster(t *testing.T, brokers, partitions int, budget time.Duration) *page {
	t.Helper()
	p := newPageFor(t, nativeURL, "?backend=native&scenario=testdata/three-brokers.json", 1280, 900, budget)
	p.loaded()
	p.click("#new-cluster")
	p.do(
		chromedp.SetValue(chromedp.CSS(`#new-form [name="brokers"]`), fmt.Sprint(brokers)),
		chromedp.SetValue(chromedp.CSS(`#new-form [name="partitions"]`), fmt.Sprint(partitions)),
		chromedp.Click(chromedp.CSS(`#new-form button[type="submit"]`)),
	)
	return p
}

// waitLong polls expr for up to limit (a large cluster's steps take minutes, past p.wait's
// bound); on failure it names the page's state and keeps a screenshot named shot.
func (p *page) waitLong(what, expr string, limit time.Duration, shot string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, limit)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(limit-10*time.Second))); err != nil {
		state, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`"t=" + window.highwater.t + " parts=" + document.querySelectorAll(".partition").length + " counters=" + document.getElementById("overview-counters").textContent + " focus=" + JSON.stringify(window.highwater.focus) + " error=" + document.getElementById("error").textContent + " status=" + document.getElementById("status").textContent`))
		p.screenshot(shot)
		p.t.Fatalf("waiting for %s: %v (%s)", what, err, state)
	}
}
