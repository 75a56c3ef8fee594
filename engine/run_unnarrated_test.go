package engine

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRunUnnarrated: RunUnnarrated's events, narrated afterwards (as the CLI's trace writer
// does on its own goroutine, after the engine has run on), are Run's events.
func TestRunUnnarrated(t *testing.T) {
	for _, c := range determinismCases(t)[:6] {
		t.Run(c.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			if _, _, err := Run(c.sc, func(evs []Event) {
				for i := range evs {
					if err := enc.Encode(&evs[i]); err != nil {
						t.Fatal(err)
					}
				}
			}); err != nil {
				t.Fatal(err)
			}
			var batches [][]Event
			if _, _, err := RunUnnarrated(c.sc, func(evs []Event) { batches = append(batches, evs) }); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			enc = json.NewEncoder(&got)
			for _, evs := range batches {
				for i := range Narrate(evs) {
					if err := enc.Encode(&evs[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("narrated after the run, the trace differs; %s", firstDiff(want.Bytes(), got.Bytes()))
			}
		})
	}
}
