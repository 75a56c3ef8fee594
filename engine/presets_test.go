package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPresets runs every scenario in scenarios/ with its expectations, as `highwater run` does.
func TestPresets(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ParseScenario(data)
			if err != nil {
				t.Fatalf("not a valid scenario: %v", err)
			}
			if sc.Description == "" {
				t.Errorf("a preset needs a description: the page shows it as the caption")
			}
			e, res, err := Run(sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Failures {
				t.Errorf("%s", f)
			}
			if t.Failed() {
				for _, v := range e.Violations() {
					t.Logf("violation at %d: %s", v.T, v.Text)
				}
			}
		})
	}
}
