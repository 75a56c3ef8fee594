package engine

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
		`{}`,
		`{"at":1,"do":"heal","broker":0,}`,
		`{"at":01,"do":"heal","broker":0}`,
		`{"at":1e2,"do":"heal","broker":0}`,
		`{"at":-0,"do":"heal","broker":0}`,
		`{"at":1,"do":"heal","broker":2147483648}`,
		`{"at":1,"do":"heal","broker":-1}`,
		`{"at":1,"do":"caption","text":"\u0041 \/ \n \"q\""}`,
		`{"at":1,"do":"caption","text":"tab	inside"}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":"-1"}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":-1}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":2}`,
		`{"at":1,"do":"produce","topic":"t","partition":0,"acks":true}`,
		`{"at":1,"do":"kill","broker":1,"loseUnflushed":1}`,
		`{"at":1,"do":"kill","broker":1,"loseUnflushed":tru}`,
		"{\n\t\"at\" : 5 ,\r\n \"do\":\"restart\",\"broker\":2}",
		`{"at":1,"do":"link","from":0,"to":1,"latencyMs":9999999999}`,
		`{"at":1,"do":"heal","broker":0}{}`,
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

// TestSplitArrayAgrees: cutting the steps array by hand gives encoding/json's elements, or gives
// up and leaves the answer (and the error) to it.
func TestSplitArrayAgrees(t *testing.T) {
	for _, raw := range []string{
		`[]`, ` [ ] `, `[{"at":1}]`, `[{"at":1,"x":[1,{"y":"}"}]} , {"at":2,"t":"a\"]"}]`,
		`["x"]`, `[1]`, `[{"at":1},null]`, `[{"at":1},"{"]`, `[[1]]`, `{"at":1}`, `[{"at":1}] x`,
	} {
		var want []json.RawMessage
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, ok := splitArray([]byte(raw))
		if !ok {
			continue
		}
		if wantErr != nil {
			t.Errorf("%s: split, but encoding/json says %v", raw, wantErr)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d elements, encoding/json %d", raw, len(got), len(want))
			continue
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Errorf("%s: element %d %s, encoding/json %s", raw, i, got[i], want[i])
			}
		}
	}
	// A scenario whose steps are not all objects is an error naming the step.
	_, err := ParseScenario([]byte(`{"name":"s","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}],"steps":["x"]}`))
	if err == nil || !strings.Contains(err.Error(), "steps[0]") {
		t.Errorf("steps [\"x\"]: %v", err)
	}
}

// TestSplitObjectAgrees: splitObject cuts every preset's top level, and documents built to trip
// it, as decoding into a map does, or gives up.
func TestSplitObjectAgrees(t *testing.T) {
	docs := []string{
		`{"a":1,"b":"x","c":[1,{"d":"}"}],"e":{"f":[]},"g":true,"h":null,"i":-1.5e3}`,
		` { "a" : "q\"uote\\" , "b" : [ ] , "a" : 2 } `,
		`{"a":{"b":"]}"},"c":"\u00e9"}`,
		`{}`,
		// Each of these must give up.
		`{"\u0061":1}`, `{"é":1}`, `[1]`, `null`, `"s"`, `1`,
	}
	files, err := filepath.Glob("../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	for _, d := range docs {
		if !json.Valid([]byte(d)) {
			t.Fatalf("not valid JSON: %s", d)
		}
		got, ok := splitObject([]byte(d))
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &want); err != nil {
			if ok {
				t.Errorf("%.80s: split, where decoding fails: %v", d, err)
			}
			continue
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Errorf("%.80s: split %v, decoded %v", d, got, want)
		}
		if !ok && want != nil && !strings.Contains(d, `\u0061`) && !strings.Contains(d, "é") {
			t.Errorf("%.80s: gave up on an object with plain keys", d)
		}
	}
}

// FuzzSplitObject: on any valid JSON, splitObject agrees with decoding into a map or gives up.
func FuzzSplitObject(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x","c":[1,{"d":"}"}],"e":{"f":[]},"g":true,"h":null}`))
	f.Add([]byte(`{"a" : "q\"uote\\" , "b":[ ],"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got, ok := splitObject(data)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			if ok {
				t.Fatalf("split, where decoding fails: %v", err)
			}
			return
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("split %v, decoded %v", got, want)
		}
	})
}

// TestParseScenarioFastAgrees: whatever file the one-pass reader accepts, the general path (which
// checks the whole file with json.Valid first) accepts too, with the same scenario. The files are
// the scenarios and every one-byte deletion, and many one-byte changes and insertions of JSON's
// structural characters, of a small file that has every kind of member and step.
func TestParseScenarioFastAgrees(t *testing.T) {
	small := `{"name":"s","seed":3,"brokers":3,"topics":[{"name":"t","partitions":2,"replicationFactor":2}],` +
		`"config":{"min.insync.replicas":2},"duration":50,"steps":[{"at":1,"do":"produce","topic":"t","partition":0},` +
		` {"at":2,"do":"kill","broker":1,"loseUnflushed":true}, {"at":3,"do":"caption","text":"a \"b\", {c}"},` +
		`{"at":4,"do":"expect","topic":"t","partition":0,"leader":0,"isr":[0]},{"at":5,"do":"produce","topic":"t","partition":1,"acks":"all"}]}`
	inputs := []string{small, `{"name":"e","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}],"steps":[]}`,
		`{"name":"e","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}]}`}
	files, _ := filepath.Glob("../scenarios/*.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(data))
	}
	// Steps checked against the members before them, or after all of them when a member follows.
	head := `"name":"h","brokers":2,"topics":[{"name":"t","partitions":1,"replicationFactor":2}]`
	for _, steps := range []string{`[{"at":2,"do":"kill","broker":1},{"at":1,"do":"restart","broker":1}]`,
		`[{"at":1,"do":"produce","topic":"t","partition":1}]`, `[{"at":1,"do":"kill","broker":2}]`,
		`[{"at":1,"do":"produce","topic":"u","partition":0}]`, `[{"at":1,"do":"produce","topic":"t","partition":0}]`} {
		inputs = append(inputs, `{`+head+`,"steps":`+steps+`}`, `{"steps":`+steps+`,`+head+`}`,
			`{"name":"h","steps":`+steps+`,"brokers":2,"topics":[{"name":"t","partitions":1,"replicationFactor":2}]}`,
			`{`+head+`,"steps":`+steps+`,"duration":-1}`)
	}
	for i := range len(small) {
		inputs = append(inputs, small[:i]+small[i+1:])
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const structural = `{}[]:,"\ 0-9etrufalsn.x`
	for range 20_000 {
		i, c := rng.IntN(len(small)), structural[rng.IntN(len(structural))]
		if rng.IntN(2) == 0 {
			inputs = append(inputs, small[:i]+string(c)+small[i+1:])
		} else {
			inputs = append(inputs, small[:i]+string(c)+small[i:])
		}
	}
	fast := 0
	for k, in := range inputs {
		got, ok := parseScenarioFast([]byte(in))
		if !ok {
			if k < 3+len(files) {
				t.Errorf("input %d: the fast path gave up on a plain file", k)
			}
			continue
		}
		fast++
		want, err := parseScenarioGeneral([]byte(in))
		if err != nil {
			t.Errorf("%q: the fast path accepted what the general path rejects: %v", in, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: the fast path's scenario differs from the general path's", in)
		}
	}
	t.Logf("%d of %d inputs read by the fast path", fast, len(inputs))
}

// TestScanIntAgrees: scanInt's own digit sum gives strconv.ParseInt's answer at every bound.
func TestScanIntAgrees(t *testing.T) {
	var nums []string
	for _, b := range []int{32, 64} {
		for _, v := range []int64{0, 1, 9, 10, 99, 1<<(b-1) - 1, -1 << (b - 1)} {
			for _, d := range []int64{-1, 0, 1} {
				nums = append(nums, strconv.FormatInt(v+d, 10))
			}
		}
	}
	nums = append(nums, "-0", "9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"2147483648", "-2147483649", "4294967296", "18446744073709551616", "1234567890123")
	for _, n := range nums {
		for _, bits := range []int{32, 64} {
			want, err := strconv.ParseInt(n, 10, bits)
			got, end, ok := scanInt([]byte(n+","), 0, bits)
			if ok != (err == nil) || ok && (got != want || end != len(n)) {
				t.Errorf("%s (%d bits): scanInt %d, %d, %v; ParseInt %d, %v", n, bits, got, end, ok, want, err)
			}
		}
	}
}
