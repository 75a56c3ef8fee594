package browsertest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestFetchInsideBatchShown: grader b02 (Kafka 0.11.0's rules) opened from a file. At 40 s broker
// 1's fetcher thread has died on the leader's batch that started below its log end (Log.append's
// "Out of order offsets"): its card marks the thread "dead". At 55 s broker 0's truncation inside
// a batch (LogSegment.truncateTo cuts the whole batch, the log end stays at the offset asked for)
// has left offsets 11..15 without records: its row draws five empty cells there, each titled.
func TestFetchInsideBatchShown(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("..", "..", "engine", "testdata", "grader", "b02-truncation-inside-batch-leaves-gap-0.11.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t, "?preset=kill-the-leader.json", 1400, 900)
	p.loaded()
	p.wait("the preset", `document.getElementById("preset").value === "kill-the-leader.json"`)
	p.do(chromedp.SetUploadFiles(chromedp.ID("scenario-file"), []string{file}))
	p.wait("the file", `document.getElementById("scenario-name").textContent.startsWith("b02 ")`)
	p.advance(40000)
	p.wait("broker 1's dead fetcher", `[...document.querySelectorAll(".badge.down")].some(b => b.textContent === "dead" && b.closest("li") && b.closest("li").textContent.includes("fetcher 0 → leader 0"))`)
	p.screenshot("batch-1400x900-dead-fetcher")
	p.advance(15000)
	p.wait("broker 0's gap", `document.querySelectorAll(".rec.gap").length > 0`)
	gaps := evalJS[[]string](p, `[...document.querySelectorAll(".rec.gap")].map(c => c.title)`)
	if len(gaps) != 5 {
		t.Errorf("%d empty cells, want 5 (offsets 11..15 of broker 0): %q", len(gaps), gaps)
	}
	for i, title := range gaps {
		if want := fmt.Sprintf("offset %d: no record", 11+i); !strings.HasPrefix(title, want) {
			t.Errorf("empty cell %d titled %q, want it to start %q", i, title, want)
		}
	}
	p.screenshot("batch-1400x900-gap")
}
