package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

const scenario = `{"name":"s","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],
	"steps":[{"at":100,"do":"produce","topic":"t","partition":0,"count":2},
	         {"at":500,"do":"expect","topic":"t","partition":0,"acked":2}]}`

func do(t *testing.T, s *Session, req string) Reply {
	t.Helper()
	var r Reply
	if err := json.Unmarshal(s.HandleJSON([]byte(req)), &r); err != nil {
		t.Fatalf("reply to %s is not JSON: %v", req, err)
	}
	return r
}

func ok(t *testing.T, r Reply) Reply {
	t.Helper()
	if r.Type != "reply" {
		t.Fatalf("error reply: %s", r.Error)
	}
	return r
}

func TestLoadAdvanceExpect(t *testing.T) {
	s := New(Limits{})
	r := ok(t, do(t, s, `{"id":1,"op":"load","scenario":`+scenario+`}`))
	if r.ID != 1 || !r.Reset || r.View == nil || len(r.View.Brokers) != 3 {
		t.Fatalf("load reply: id %d reset %v view %v", r.ID, r.Reset, r.View != nil)
	}
	r = ok(t, do(t, s, `{"id":2,"op":"advance","to":1000}`))
	if r.T != 1000 || len(r.Expects) != 1 || !r.Expects[0].OK {
		t.Fatalf("advance: t %d expects %+v", r.T, r.Expects)
	}
	if r.View.Partitions[0].Acked != 2 {
		t.Fatalf("acked %d, want 2", r.View.Partitions[0].Acked)
	}
}

// TestSeekBackAndFork: seeking back replays the same future; acting there forks it.
func TestSeekBackAndFork(t *testing.T) {
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","scenario":`+scenario+`}`))
	first := ok(t, do(t, s, `{"id":2,"op":"advance","to":2000,"noView":true}`))
	ok(t, do(t, s, `{"id":3,"op":"seek","to":50}`))
	again := ok(t, do(t, s, `{"id":4,"op":"advance","to":2000,"noView":true}`))
	// Same future: the events after 50 ms match the first run's.
	var a, b []string
	for _, ev := range first.Events {
		if ev.T > 50 {
			a = append(a, ev.Text)
		}
	}
	for _, ev := range again.Events {
		b = append(b, ev.Text)
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("replay after seek differs:\n%v\nvs\n%v", a, b)
	}
	// Fork: seek back before the produce and kill the leader instead.
	ok(t, do(t, s, `{"id":5,"op":"seek","to":50}`))
	r := ok(t, do(t, s, `{"id":6,"op":"apply","action":{"do":"kill","broker":0}}`))
	if len(r.Timeline.Actions) != 1 || r.Timeline.Actions[0].Action.Do != "kill" {
		t.Fatalf("timeline after the fork: %+v", r.Timeline.Actions)
	}
	r = ok(t, do(t, s, `{"id":7,"op":"advance","to":25000}`))
	if r.View.Partitions[0].Leader == 0 || r.View.Partitions[0].Acked != 0 {
		t.Fatalf("after the fork: leader %d acked %d", r.View.Partitions[0].Leader, r.View.Partitions[0].Acked)
	}
	exp := ok(t, do(t, s, `{"id":8,"op":"export"}`)).Export
	if exp == nil || len(exp.Steps) != 1 || exp.Steps[0].Action.Do != "kill" {
		t.Fatalf("export: %+v", exp)
	}
	// The export is a valid scenario file that replays.
	data, _ := json.Marshal(exp)
	if _, err := engine.ParseScenario(data); err != nil {
		t.Fatalf("the export does not parse: %v\n%s", err, data)
	}
}

func TestErrors(t *testing.T) {
	s := New(Limits{MaxBrokers: 5})
	for _, c := range []struct{ req, want string }{
		{`not json`, "bad request"},
		{`{"id":3,"op":"fly"}`, `unknown op "fly"`},
		{`{"id":4,"op":"advance","to":10}`, "load a scenario first"},
		{`{"id":5,"op":"load","scenario":{"name":"x","brokers":9,"topics":[{"name":"t","partitions":1,"replicationFactor":1}]}}`, "over this session's limit of 5"},
		{`{"id":6,"op":"load","scenario":{"name":"x","brokers":2}}`, "topics: required"},
		{`{"id":7,"op":"view","bogus":1}`, "bogus: unknown field"},
	} {
		r := do(t, s, c.req)
		if r.Type != "error" || !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: got %s %q, want an error containing %q", c.req, r.Type, r.Error, c.want)
		}
	}
	ok(t, do(t, s, `{"id":8,"op":"load","scenario":`+scenario+`}`))
	for _, c := range []struct{ req, want string }{
		{`{"id":9,"op":"apply","action":{"do":"kill","broker":7}}`, "out of range"},
		{`{"id":10,"op":"apply","action":{"do":"link","from":1,"to":1}}`, "two different brokers"},
		{`{"id":11,"op":"advance","to":-5}`, "before the current time"},
		{`{"id":12,"op":"apply","action":{"do":"expect"}}`, "expect"},
	} {
		r := do(t, s, c.req)
		if r.Type != "error" || !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: got %s %q, want an error containing %q", c.req, r.Type, r.Error, c.want)
		}
	}
	// The session goes on after errors.
	ok(t, do(t, s, `{"id":13,"op":"advance","by":100}`))
	if r := do(t, s, `{"id":14,"op":"nope"}`); r.ID != 14 {
		t.Errorf("error reply id %d, want 14", r.ID)
	}
}

// TestPresetsInOneAdvance: every preset's expect steps hold when the page runs it in one advance
// (each expect is checked at its own instant, in file order with the actions).
func TestPresetsInOneAdvance(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.json")
	if len(files) == 0 {
		t.Fatal("no presets")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := engine.ParseScenario(data)
		if err != nil {
			t.Fatal(err)
		}
		s := New(Limits{})
		ok(t, do(t, s, `{"id":1,"op":"load","noView":true,"scenario":`+string(data)+`}`))
		end := sc.Duration
		for _, st := range sc.Steps {
			end = max(end, st.At)
		}
		r := ok(t, do(t, s, fmt.Sprintf(`{"id":2,"op":"advance","to":%d,"noView":true,"maxEvents":1}`, end)))
		want := 0
		for _, st := range sc.Steps {
			if st.Action.Expect != nil {
				want++
			}
		}
		if len(r.Expects) != want {
			t.Errorf("%s: %d expects reported, want %d", f, len(r.Expects), want)
		}
		for _, o := range r.Expects {
			if !o.OK {
				t.Errorf("%s: expect step %d failed: %v", f, o.Step, o.Failures)
			}
		}
	}
}

// TestActAtFrontierKeepsScript: an action at the furthest point reached adds to the timeline; the
// scenario's later steps stay.
func TestActAtFrontierKeepsScript(t *testing.T) {
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","scenario":`+scenario+`}`))
	ok(t, do(t, s, `{"id":2,"op":"advance","to":50}`))
	r := ok(t, do(t, s, `{"id":3,"op":"apply","action":{"do":"produce","topic":"t","partition":0}}`))
	if len(r.Timeline.Actions) != 2 {
		t.Fatalf("timeline %+v, want the user's produce and the scripted one", r.Timeline.Actions)
	}
	r = ok(t, do(t, s, `{"id":4,"op":"advance","to":1000}`))
	if r.View.Partitions[0].Acked != 3 {
		t.Fatalf("acked %d, want 3", r.View.Partitions[0].Acked)
	}
}

// TestSessionNarratesLikeTheTrace: the session formats a message's text only for the events it
// sends (engine.Narrate), and that text is the trace's, event for event.
func TestSessionNarratesLikeTheTrace(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/kill-the-leader.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := engine.ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	var trace []engine.Event
	if _, _, err := engine.Run(sc, func(evs []engine.Event) { trace = append(trace, evs...) }); err != nil {
		t.Fatal(err)
	}
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","scenario":`+string(data)+`}`))
	r := ok(t, do(t, s, fmt.Sprintf(`{"id":2,"op":"advance","to":%d,"noView":true,"maxEvents":1000000}`, trace[len(trace)-1].T)))
	var got []engine.Event
	for _, ev := range r.Events {
		if ev.Type != engine.EvCaption {
			got = append(got, ev)
		}
	}
	var want []engine.Event
	for _, ev := range trace {
		if ev.Type != engine.EvCaption {
			want = append(want, ev)
		}
	}
	if len(got) == 0 || len(got) > len(want) {
		t.Fatalf("session sent %d events, the trace has %d", len(got), len(want))
	}
	// The session's events are the trace's (the tail, if the load's events were held back).
	want = want[len(want)-len(got):]
	messages := 0
	for i := range got {
		if got[i].Text == "" || got[i].Text != want[i].Text {
			t.Fatalf("event %d (%s at %d): session text %q, trace text %q", i, got[i].Type, got[i].T, got[i].Text, want[i].Text)
		}
		if got[i].Message != nil {
			messages++
		}
	}
	if messages == 0 {
		t.Fatal("no message events compared")
	}
}
