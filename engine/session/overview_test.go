package session

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/view"
)

// TestSessionOverviewMatchesWalk: a session's overview views, kept from the events it drains,
// equal a full walk's, through advances, actions, a seek back (a new engine) and a replay; and
// the kept overview walks the partitions only when it must.
func TestSessionOverviewMatchesWalk(t *testing.T) {
	const sc = `{"name":"o","brokers":5,"topics":[{"name":"t","partitions":40,"replicationFactor":3}],
	"steps":[{"at":100,"do":"produce","topic":"t","partition":3,"count":5},
	         {"at":300,"do":"kill","broker":2},
	         {"at":900,"do":"produce","topic":"t","partition":7,"count":2,"acks":1},
	         {"at":2500,"do":"restart","broker":2}]}`
	s := New(Limits{})
	opts := `"view":{"detailLimit":1,"leaders":true,"focus":[{"topic":"t","partition":7}]}`
	ok(t, do(t, s, `{"id":1,"op":"load",`+opts+`,"scenario":`+sc+`}`))
	id := 2
	check := func(req string) {
		t.Helper()
		r := ok(t, do(t, s, fmt.Sprintf(`{"id":%d,%s,%s}`, id, req, opts)))
		id++
		want := view.Build(s.eng, viewOptions(Request{View: &ViewRequest{DetailLimit: 1, Leaders: true,
			Focus: []engine.TP{{Topic: "t", Partition: 7}}}}))
		// Compare the two as the page gets them: both through JSON and back.
		var back view.View
		raw, _ := json.Marshal(want)
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(r.View)
		w, _ := json.Marshal(back)
		if string(got) != string(w) {
			t.Fatalf("after %s: the session's view differs from a full walk\n got %s\nwant %s", req, got, w)
		}
	}
	for range 40 {
		check(`"op":"advance","by":97`)
	}
	check(`"op":"apply","action":{"do":"produce","topic":"t","partition":1,"count":3}`)
	check(`"op":"seek","to":250`)
	for range 10 {
		check(`"op":"advance","by":211`)
	}
	check(`"op":"apply","action":{"do":"kill","broker":0}`)
	check(`"op":"advance","by":1000`)
	if w := s.overview.Walks; w > 10 {
		t.Fatalf("%d full walks in 55 views", w)
	}
}
