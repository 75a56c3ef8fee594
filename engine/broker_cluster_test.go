package engine

import (
	"slices"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
)

// TestCountOnlyKinds: the broker's event kinds a run without a trace only counts
// (cluster.CountOnly: brk.Kind.TraceOnly) are none the checker keeps as a violation's cause
// (hearsCause), which must be made with the trace off too.
func TestCountOnlyKinds(t *testing.T) {
	for _, k := range brk.Kinds() {
		if k.TraceOnly() && hearsCause(k.Type()) {
			t.Errorf("%s is only counted without a trace, but the checker keeps its text as a cause", k)
		}
	}
}

// TestUntracedRunCountsEvents: every preset run without a trace counts the events a traced run
// records, one for one, and finds the same violations (the events it skips building are counted
// where they are skipped).
func TestUntracedRunCountsEvents(t *testing.T) {
	for _, c := range presetCases(t, "") {
		var recorded int
		traced, _, err := Run(c.sc, func(evs []Event) { recorded += len(evs) })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		untraced, _, err := Run(c.sc, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, want := untraced.Stats().Events, traced.Stats().Events; got != want || int(want) != recorded {
			t.Errorf("%s: %d events counted without a trace, %d with it, %d recorded", c.name, got, want, recorded)
		}
		if !slices.Equal(untraced.ViolationNames(), traced.ViolationNames()) {
			t.Errorf("%s: violations %v without a trace, %v with it", c.name, untraced.ViolationNames(), traced.ViolationNames())
		}
	}
}
