package engine

import (
	"os"
	"slices"
	"testing"
)

// runPreset runs a preset from ../scenarios, failing the test if it does not pass, and returns
// the engine and its trace.
func runPreset(t *testing.T, file string) (*Engine, []Event) {
	t.Helper()
	data, err := os.ReadFile("../scenarios/" + file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	e, res, err := Run(sc, func(batch []Event) { evs = append(evs, batch...) })
	if err != nil || !res.OK() {
		t.Fatalf("%s: %v %v", file, err, res.Failures)
	}
	return e, evs
}

// TestViolationCause: a violation names the event that made it, not the moment it was noticed.
// In KIP-101's first scenario before 0.11 the acknowledged record is dropped when broker 1
// truncates to its own high watermark (about 19 s); the loss is noticed only when broker 1
// becomes leader (about 37 s). An unclean election loses the record by picking a leader that
// never had it. A power loss drops records a consumer read, and lets two logs diverge.
func TestViolationCause(t *testing.T) {
	for _, c := range []struct {
		preset, name string
		typ          string
		broker       Opt[int32]
		before       bool // the cause comes strictly before the detection
	}{
		{"kip101-hw-truncation-0.10.2.json", "acked-write-lost", EvTruncate, Some[int32](1), true},
		{"unclean-election.json", "acked-write-lost", EvLeaderChange, Opt[int32]{}, false},
		{"last-replica-standing-2.1.json", "consumed-record-changed", EvTruncate, Some[int32](0), true},
		{"kip101-divergence-0.10.2.json", "committed-divergence", EvTruncate, Some[int32](1), true},
	} {
		t.Run(c.preset, func(t *testing.T) {
			e, evs := runPreset(t, c.preset)
			i := slices.IndexFunc(e.Violations(), func(v Violation) bool { return v.Name == c.name })
			if i < 0 {
				t.Fatalf("no %s violation", c.name)
			}
			v := e.Violations()[i]
			if v.Cause == nil || v.Cause.Type != c.typ || v.Cause.Broker != c.broker || v.Cause.T > v.T || (c.before && v.Cause.T == v.T) {
				t.Fatalf("%s at %d has cause %+v; want a %s on broker %v before it", c.name, v.T, v.Cause, c.typ, c.broker)
			}
			// The cause is an event of the trace, and a truncation named for a lost record cut it.
			k := slices.IndexFunc(evs, func(ev Event) bool {
				return ev.T == v.Cause.T && ev.Type == v.Cause.Type && ev.Text == v.Cause.Text
			})
			if k < 0 {
				t.Fatalf("the cause %+v is not in the trace", v.Cause)
			}
			if c.typ == EvTruncate && c.name != "committed-divergence" &&
				!slices.ContainsFunc(evs[k].Records, func(r commitlogRecord) bool { return r.ID == v.Records[0].ID }) {
				t.Fatalf("the truncation %q did not cut record %d", v.Cause.Text, v.Records[0].ID)
			}
			t.Logf("detected at %d, caused at %d: %s", v.T, v.Cause.T, v.Cause.Text)
		})
	}
}
