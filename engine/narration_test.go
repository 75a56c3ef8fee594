package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Narration goldens: a few presets' narration as readable text (one `t text` line per event),
// so a change of the engine or of a tour shows in review what it changed, where the trace hashes
// only say that something did. Fetch requests and their answers are left out (hundreds of lines
// that the hashes cover). Rewrite with `go test ./engine -run TestNarration -update` and read the
// diff.

// narrationPresets are the presets with a narration golden: the newcomers' first preset, the
// leader-crash tour, and KIP-101's lost write before and after the fix.
var narrationPresets = []string{"kill-the-leader", "leader-crash-truncation", "kip101-hw-truncation-0.10.2", "kip101-hw-truncation-3.7"}

// narration renders a preset's run as the golden file holds it.
func narration(t *testing.T, preset string) string {
	t.Helper()
	_, evs := runPreset(t, preset+".json")
	var b strings.Builder
	fmt.Fprintf(&b, "# scenarios/%s.json: every event but Fetch requests and answers (engine/narration_test.go)\n", preset)
	for _, ev := range evs {
		if ev.Type == MsgFetch || ev.Type == MsgFetchResponse {
			continue
		}
		fmt.Fprintf(&b, "%d %s\n", ev.T, ev.Text)
	}
	return b.String()
}

func TestNarration(t *testing.T) {
	for _, preset := range narrationPresets {
		t.Run(preset, func(t *testing.T) {
			path := filepath.Join("testdata", "narration", preset+".txt")
			got := narration(t, preset)
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with `go test ./engine -run TestNarration -update`)", err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s differs at line %d:\n  want: %s\n  got:  %s\n(if the change is intended, rewrite with -update and review the diff)", path, i+1, wl[i], gl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d (rewrite with -update if intended)", path, len(gl), len(wl))
			}
		})
	}
}
