//go:build !js

package browsertest

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFirstFrame measures the time from navigation to the first frame drawn with the
// engine's view (the page marks it in body[data-first-frame-ms], ms since navigation start):
// worker start, engine.wasm fetch and compile, scenario load, first render.
func BenchmarkFirstFrame(b *testing.B) {
	var total float64
	for b.Loop() {
		p := newPageB(b, "?scenario=testdata/three-brokers.json", 1280, 900)
		p.wait("the first frame", `document.body.dataset.firstFrameMs !== undefined`)
		total += evalJS[float64](p, `Number(document.body.dataset.firstFrameMs)`)
		p.close()
	}
	b.ReportMetric(total/float64(b.N), "ms/first-frame")
}

// BenchmarkFrameRate1000Partitions plays a 1,000-partition cluster with every partition drawn in
// detail (?detail=all: a card per partition, the ones on screen refreshed each frame) at
// real-time speed for two seconds and reports the animation frames per second the page achieved
// and how far simulated time got. BenchmarkFrameRate1000PartitionsFullViews asks the engine for
// all 1,000 partitions' detail in every reply (?detail=1000), for comparison.
func BenchmarkFrameRate1000Partitions(b *testing.B) {
	benchFrameRate(b, "?scenario=testdata/thousand.json&detail=all", 1000)
}

func BenchmarkFrameRate1000PartitionsFullViews(b *testing.B) {
	benchFrameRate(b, "?scenario=testdata/thousand.json&detail=1000", 1000)
}

// BenchmarkFrameRate3Brokers is the same measure on a one-partition cluster: the baseline of the
// browser and machine.
func BenchmarkFrameRate3Brokers(b *testing.B) {
	benchFrameRate(b, fixture, 1)
}

func benchFrameRate(b *testing.B, query string, partitions int) {
	var fps, simPerSec float64
	for b.Loop() {
		p := newPageB(b, query, 1280, 900)
		loadStart := time.Now()
		p.waitFor(time.Minute, "the partitions", fmt.Sprintf(`document.querySelectorAll(".partition").length === %d`, partitions))
		b.Logf("%d partitions drawn %v after the page opened", partitions, time.Since(loadStart).Round(time.Millisecond))
		b.Logf("load: last request %.0f ms, render %.0f ms", evalJS[float64](p, `window.highwater.perf.request`), evalJS[float64](p, `window.highwater.perf.render`))
		p.change("speed", "1") // real time (pages open at story speed)
		p.click("#play")
		start := evalJS[float64](p, `window.highwater.frames`)
		t0 := evalJS[float64](p, `performance.now()`)
		sim0 := evalJS[float64](p, `window.highwater.t`)
		time.Sleep(2 * time.Second)
		frames := evalJS[float64](p, `window.highwater.frames`) - start
		t1 := evalJS[float64](p, `performance.now()`)
		sim1 := evalJS[float64](p, `window.highwater.t`)
		b.Logf("parts: %s", evalJS[string](p, `JSON.stringify({...window.highwater.api.cluster.perf, narration: window.highwater.perf.narration})`))
		b.Logf("playing: last request %.0f ms (JSON.parse %.0f ms of %.0f bytes), render %.0f ms", evalJS[float64](p, `window.highwater.perf.request`),
			evalJS[float64](p, `window.highwater.transport.parseMs`), evalJS[float64](p, `window.highwater.transport.replyBytes`), evalJS[float64](p, `window.highwater.perf.render`))
		p.viewShot(fmt.Sprintf("bench-%d", partitions))
		fps += frames / ((t1 - t0) / 1000)
		simPerSec += (sim1 - sim0) / ((t1 - t0) / 1000)
		p.close()
	}
	b.ReportMetric(fps/float64(b.N), "frames/s")
	b.ReportMetric(simPerSec/float64(b.N), "sim-ms/s")
}

// BenchmarkStoryLeaderCrash plays the leader-crash preset from start to end at story speed (the
// normal pace, tour captions continued at once as a presenter would) and reports the wall time:
// the goal is at most 90 s, so a demo fits in a talk.
func BenchmarkStoryLeaderCrash(b *testing.B) {
	var total float64
	for b.Loop() {
		p := newPageFor(b, srvURL, "?preset=leader-crash-truncation.json", 1400, 900, 5*time.Minute)
		p.wait("the preset", `document.querySelector(".partition[data-leader]") !== null`)
		t0 := time.Now()
		p.click("#play")
		end := evalJS[float64](p, `Math.max(...window.highwater.scenario.steps.map(s => s.at))`)
		for evalJS[float64](p, `window.highwater.t`) < end || evalJS[bool](p, `document.querySelector("#moment.current") !== null`) {
			if evalJS[bool](p, `!document.getElementById("continue").hidden`) {
				p.clickIfStill("#continue")
			}
			if time.Since(t0) > 4*time.Minute {
				b.Fatalf("story play reached only t = %v ms in 4 minutes", evalJS[float64](p, `window.highwater.t`))
			}
			time.Sleep(100 * time.Millisecond)
		}
		total += time.Since(t0).Seconds()
		p.close()
	}
	b.ReportMetric(total/float64(b.N), "wall-s/story")
}
