package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestParseStepFastAgrees: the fast path of ParseStep gives exactly what the general path gives,
// or gives up, on every step of every preset and on steps built to trip it.
func TestParseStepFastAgrees(t *testing.T) {
	steps := []string{
		`{"at":1,"do":"produce","topic":"t","partition":0}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"count":5,"acks":"all"}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":1}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":0}`,
		` { "at" : 2 , "do" : "kill" , "broker" : 1 , "loseUnflushed" : true } `,
		`{"at":3,"do":"link","from":0,"to":1,"down":true}`,
		`{"at":3,"do":"link","from":0,"to":1,"latencyMs":5}`,
		`{"at":3,"do":"caption","text":"a \"quoted\" line: with a colon, a comma and {braces}"}`,
		`{"at":3,"do":"elect","topic":"t","partition":0,"broker":1,"unclean":false}`,
		// Each of these must fall back, and the general path decides.
		`{"at":1,"do":"produce","Topic":"t","partition":0}`,
		`{"at":1,"do":"produce","topic":"t","partition":null}`,
		`{"at":1,"do":"produce","topic":"t","topic":"u","partition":0}`,
		`{"at":1,"do":"kill","broker":1,"partition":0}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"x":{"y":1}}`,
		`{"at":1,"do":"produce","topic":"t","partition":[0]}`,
		`{"at":1,"do":"produce","to\u0070ic":"t","partition":0}`,
		`{"at":-1,"do":"heal","broker":0}`,
		`{"at":1.5,"do":"heal","broker":0}`,
		`{"do":"heal","broker":0}`,
		`{"at":1,"do":"heal","broker":"0"}`,
		`{"at":1,"do":"nothing"}`,
		`{"at":1,"do":"config","set":{"min.insync.replicas":2}}`,
		`{"at":1,"do":"expect","topic":"t","partition":0,"leader":1}`,
		`{"at":1,"do":"heal","broker":0} trailing`,
		`{"at":1,"do":"heal","broker":0`,
		`[1,2]`,
		`"step"`,
	}
	files, _ := filepath.Glob("../scenarios/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var top struct{ Steps []json.RawMessage }
		if err := json.Unmarshal(data, &top); err != nil {
			t.Fatal(err)
		}
		for _, s := range top.Steps {
			steps = append(steps, string(s))
		}
	}
	fast := 0
	for _, s := range steps {
		want, wantErr := parseStepGeneral(json.RawMessage(s))
		if got, ok := parseStepFast([]byte(s)); ok {
			fast++
			if wantErr != nil {
				t.Errorf("%s: fast path accepted what the general path rejects: %v", s, wantErr)
			} else if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: fast path %+v, general path %+v", s, got, want)
			}
		}
		got, gotErr := ParseStep(json.RawMessage(s))
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) || !reflect.DeepEqual(got, want) && gotErr == nil {
			t.Errorf("%s: ParseStep (%+v, %v), general path (%+v, %v)", s, got, gotErr, want, wantErr)
		}
	}
	if fast < len(steps)/2 {
		t.Errorf("the fast path took %d of %d steps; it should take most", fast, len(steps))
	}
}
