package session

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// TestExportPassesRun: what "Download run" saves (the export op) is a scenario file that
// `highwater run` accepts and that passes there: a preset played to its end, and the same with a
// user's action after its last expectation (a fork keeps the file's steps before it).
func TestExportPassesRun(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/kill-the-leader.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Steps []struct {
			At int64 `json:"at"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	last := sc.Steps[len(sc.Steps)-1].At
	for _, extra := range []string{"", `{"id":4,"op":"apply","action":{"do":"kill","broker":2}}`} {
		s := New(Limits{})
		ok(t, do(t, s, `{"id":1,"op":"load","noView":true,"scenario":`+string(data)+`}`))
		ok(t, do(t, s, `{"id":2,"op":"advance","noView":true,"to":`+itoa(last+1)+`}`))
		if extra != "" {
			ok(t, do(t, s, extra))
			ok(t, do(t, s, `{"id":5,"op":"advance","noView":true,"by":30000}`))
		}
		exp := ok(t, do(t, s, `{"id":6,"op":"export","noView":true}`)).Export
		out, err := json.Marshal(exp)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := engine.ParseScenario(out)
		if err != nil {
			t.Fatalf("the export does not parse: %v", err)
		}
		_, res, err := engine.Run(parsed, nil)
		if err != nil {
			t.Fatalf("highwater run: %v", err)
		}
		if !res.OK() {
			t.Fatalf("the exported run fails its own expectations (extra action %q): %+v", extra, res.Failures)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
