package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// applyPatch does what the page does with a viewPatch (web/dist/app.js applyPatch), on decoded
// JSON.
func applyPatch(t *testing.T, view map[string]any, p map[string]any) {
	t.Helper()
	if _, ok := p["unset"]; !ok {
		p["unset"] = []any{}
	}
	if _, ok := p["set"]; !ok {
		p["set"] = map[string]any{}
	}
	for _, k := range p["unset"].([]any) {
		delete(view, k.(string))
	}
	for k, v := range p["set"].(map[string]any) {
		if field, member, ok := strings.Cut(k, "."); ok {
			view[field].(map[string]any)[member] = v
		} else {
			view[k] = v
		}
	}
	for _, name := range []string{"brokers", "partitions"} {
		lp, ok := p[name].(map[string]any)
		if !ok {
			continue
		}
		list, _ := view[name].([]any)
		n := int(lp["len"].(float64))
		next := make([]any, n)
		copy(next, list)
		for i, at := range lp["at"].([]any) {
			next[int(at.(float64))] = lp["items"].([]any)[i]
		}
		view[name] = next
	}
	for _, name := range []string{"states", "leaders"} {
		if sp, ok := p[name].(map[string]any); ok {
			b := []byte(view[name].(string))
			for i, at := range sp["at"].([]any) {
				copy(b[int(at.(float64)):], sp["runs"].([]any)[i].(string))
			}
			view[name] = string(b)
		}
	}
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestViewDeltas runs the same requests on two sessions, one asking for whole views and one for
// deltas, and checks after every reply that the patched view equals the whole one: in an overview
// (states, brokers, focus changes, a kill and restart, produce load, a seek back) and in detail.
func TestViewDeltas(t *testing.T) {
	big := `{"name":"big","seed":3,"brokers":6,"topics":[{"name":"t","partitions":300,"replicationFactor":3}],"config":{"min.insync.replicas":2},"steps":[
		{"at":200,"do":"produce","topic":"t","partition":5,"count":3,"acks":"all"}]}`
	small := `{"name":"small","brokers":3,"topics":[{"name":"t","partitions":2,"replicationFactor":3}],"steps":[
		{"at":100,"do":"produce","topic":"t","partition":0,"count":2}]}`
	// The focus moves: a partition, then a broker too, then another partition.
	bigFocus := []string{`"focus":[{"topic":"t","partition":5}],"leaders":true`, `"focus":[{"topic":"t","partition":5}],"focusBrokers":[2],"leaders":true`,
		`"focus":[{"topic":"t","partition":7}]`}
	smallFocus := []string{`"focus":[{"topic":"t","partition":0}]`, `"focus":[{"topic":"t","partition":0}],"focusBrokers":[2]`,
		`"focus":[{"topic":"t","partition":1}]`}
	for _, c := range []struct {
		name, scenario string
		focus          []string
		steps          []string
	}{
		{"overview", big, bigFocus, []string{
			`"op":"advance","by":300`, `"op":"advance","by":300`,
			`"op":"apply","action":{"do":"kill","broker":2}`, `"op":"advance","by":100`, `"op":"advance","by":1000`,
			`"op":"advance","by":20000`, `"op":"apply","action":{"do":"produce","topic":"t","partition":7,"count":5,"acks":"1"}`,
			`"op":"advance","by":50`, `"op":"apply","action":{"do":"restart","broker":2}`, `"op":"advance","by":3000`,
			`"op":"seek","to":400`, `"op":"advance","by":700`, `"op":"view"`, `"op":"step"`, `"op":"advance","by":40000`,
		}},
		{"detail", small, smallFocus, []string{
			`"op":"advance","by":150`, `"op":"apply","action":{"do":"kill","broker":0}`, `"op":"advance","by":1000`,
			`"op":"step"`, `"op":"seek","to":50`, `"op":"advance","by":500`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole, delta := New(Limits{}), New(Limits{})
			var view map[string]any
			patches, patchBytes, wholeBytes, leaderRuns, pendingSets := 0, 0, 0, 0, 0
			for i, step := range append([]string{`"op":"load","scenario":` + c.scenario}, c.steps...) {
				focus := c.focus[i*3/(len(c.steps)+1)]
				req := func(d bool) []byte {
					return fmt.Appendf(nil, `{"id":%d,%s,"view":{"maxMessages":50,%s,"delta":%v}}`, i+1, step, focus, d)
				}
				w, d := whole.HandleJSON(req(false)), delta.HandleJSON(req(true))
				wr, dr := decode(t, w), decode(t, d)
				if wr["type"] != "reply" || dr["type"] != "reply" {
					t.Fatalf("step %d (%s): %s / %s", i, step, w, d)
				}
				if p, ok := dr["viewPatch"].(map[string]any); ok {
					if view == nil || p["base"].(float64) != view["_seq"].(float64) {
						t.Fatalf("step %d: patch on base %v, page has %v", i, p["base"], view["_seq"])
					}
					if _, ok := p["leaders"]; ok {
						leaderRuns++
					} else if set, ok := p["set"].(map[string]any); ok && set["leaders"] != nil && set["leaders"] != "" {
						leaderRuns++ // too many changed for runs: sent whole
					}
					if set, ok := p["set"].(map[string]any); ok && set["pending"] != nil {
						pendingSets++ // the deadlines moved: sent whole
					}
					applyPatch(t, view, p)
					view["_seq"] = p["seq"]
					patches++
					patchBytes += len(d)
				} else {
					view = dr["view"].(map[string]any)
					view["_seq"] = dr["viewSeq"]
				}
				wholeBytes += len(w)
				got := map[string]any{}
				for k, v := range view {
					if k != "_seq" {
						got[k] = v
					}
				}
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(wr["view"])
				if !bytes.Equal(gj, wj) {
					k := 0
					for k < len(gj) && k < len(wj) && gj[k] == wj[k] {
						k++
					}
					t.Fatalf("step %d (%s): patched view differs from the whole view at byte %d\npatched: …%.300s\nwhole:   …%.300s", i, step, k, gj[max(0, k-200):], wj[max(0, k-200):])
				}
				// Everything else in the reply is the same.
				delete(wr, "view")
				delete(wr, "viewSeq")
				delete(dr, "view")
				delete(dr, "viewSeq")
				delete(dr, "viewPatch")
				a, _ := json.Marshal(wr)
				b, _ := json.Marshal(dr)
				if !bytes.Equal(a, b) {
					t.Fatalf("step %d: replies differ outside the view:\n%.400s\n%.400s", i, a, b)
				}
			}
			if patches < len(c.steps)-3 {
				t.Fatalf("only %d patches in %d steps", patches, len(c.steps))
			}
			if pendingSets == 0 {
				t.Fatal("no patch carried new pending deadlines (a kill and restart move them)")
			}
			if c.name == "overview" && leaderRuns == 0 {
				t.Fatal("no patch carried leader changes (the kill moves leaders)")
			}
			t.Logf("%d patches; %d bytes with deltas, %d with whole views", patches, patchBytes, wholeBytes)
		})
	}
}

// TestViewFocusErrors: a view that focuses on what the cluster does not have gets an error reply
// naming it, before anything runs (time does not move), and the session goes on.
func TestViewFocusErrors(t *testing.T) {
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","noView":true,"scenario":`+scenario+`}`))
	for _, c := range []struct{ view, want string }{
		{`{"focus":[{"topic":"nope","partition":0}]}`, `view.focus[0]: no topic "nope" in this cluster`},
		{`{"focus":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}`, `view.focus[1]: topic "t" has partitions 0 to 0, not 1`},
		{`{"focusBrokers":[0,3]}`, `view.focusBrokers[1]: no broker 3 (brokers are 0 to 2)`},
		{`{"focusBrokers":[-1]}`, `view.focusBrokers[0]: no broker -1 (brokers are 0 to 2)`},
		{`{"maxMessages":-4}`, `view.detailLimit and maxMessages: must not be negative (0: the default)`},
	} {
		r := do(t, s, `{"id":2,"op":"advance","by":100,"view":`+c.view+`}`)
		if r.Type != "error" || r.Error != c.want || r.ID != 2 || r.T != 0 {
			t.Errorf("view %s: %s %q at t %d; want error %q at t 0", c.view, r.Type, r.Error, r.T, c.want)
		}
	}
	big := strings.Repeat(`{"topic":"t","partition":0},`, 10_001)
	if r := do(t, s, `{"id":3,"op":"view","view":{"focus":[`+big[:len(big)-1]+`]}}`); r.Error != "view.focus: 10001 partitions; at most 10000" {
		t.Errorf("10,001 focused partitions: %q", r.Error)
	}
	// A load is checked against the cluster it loads, and a refused one keeps the old cluster.
	if r := do(t, s, `{"id":4,"op":"load","view":{"focusBrokers":[5]},"scenario":`+scenario+`}`); r.Error != "view.focusBrokers[0]: no broker 5 (brokers are 0 to 2)" {
		t.Errorf("load with a bad view: %q", r.Error)
	}
	if r := ok(t, do(t, s, `{"id":5,"op":"advance","by":100,"view":{"focusBrokers":[2]}}`)); r.T != 100 {
		t.Fatalf("after the errors: t %d, want 100", r.T)
	}
}
