package session

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCaptionThroughSession: a scenario's caption reaches the page in reply.events when time
// passes it (also after a seek back), an applied caption is logged like any action, and the
// export keeps both.
func TestCaptionThroughSession(t *testing.T) {
	const sc = `{"name":"tour","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],
		"steps":[{"at":100,"do":"caption","text":"Three brokers replicate one partition."},
		         {"at":100,"do":"produce","topic":"t","partition":0,"count":2}]}`
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","noView":true,"scenario":`+sc+`}`))
	captions := func(r Reply) []string {
		var out []string
		for _, ev := range r.Events {
			if ev.Type == "caption" {
				out = append(out, ev.Text)
			}
		}
		return out
	}
	r := ok(t, do(t, s, `{"id":2,"op":"advance","to":200,"noView":true}`))
	if got := captions(r); len(got) != 1 || got[0] != "Three brokers replicate one partition." || r.Events[0].Type != "caption" || r.Events[0].T != 100 {
		t.Fatalf("captions at 100: %q (first event %s at %d)", got, r.Events[0].Type, r.Events[0].T)
	}
	r = ok(t, do(t, s, `{"id":3,"op":"apply","noView":true,"action":{"do":"caption","text":"My own note."}}`))
	if got := captions(r); len(got) != 1 || got[0] != "My own note." {
		t.Fatalf("applied caption: %q", got)
	}
	r = ok(t, do(t, s, `{"id":4,"op":"seek","to":150,"noView":true}`))
	if got := captions(r); len(got) != 1 || got[0] != "Three brokers replicate one partition." {
		t.Fatalf("after a seek back to 150: %q", got)
	}
	r = ok(t, do(t, s, `{"id":5,"op":"export","noView":true}`))
	out, _ := json.Marshal(r.Export)
	for _, want := range []string{`{"at":100,"do":"caption","text":"Three brokers replicate one partition."}`, `{"at":200,"do":"caption","text":"My own note."}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("export lacks %s:\n%s", want, out)
		}
	}
	if r := do(t, s, `{"id":6,"op":"apply","action":{"do":"caption","text":""}}`); r.Type != "error" || r.Error != `action.text: required for "caption" (the line the tour shows)` {
		t.Errorf("empty caption: %s %q", r.Type, r.Error)
	}
}
