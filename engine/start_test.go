package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The cluster's first LeaderAndIsr round takes a bulk path (start.go); these tests hold it to the
// general path's result: the same events, in the same order, with the same text, and the same
// state, right after the start and at the end of the run.

// bulkStartCases are every preset (unclean-election's broker 2 hosts nothing), sweep seeds of
// each era (their configs vary num.replica.fetchers, min.insync.replicas, unclean election and
// more) and hand-made clusters in each era: several topics, explicit assignments (replicas
// listed out of broker order, RF 1 to 3), several fetcher threads per leader, unclean election
// with faults, and a cluster large enough that every broker has many partitions on several
// fetchers.
func bulkStartCases(t *testing.T) []determinismCase {
	t.Helper()
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	// 3.7, 3.7-harsh, 2.1, 0.11.0, 0.10.2
	modes := []*sweepMode{&sweepDefault, sweepModes[0], sweepModes[1], sweepModes[2], sweepModes[5]}
	cases := append(presetCases(t, ""), sweepCases(t, modes, seeds)...)
	faults := `{"at":50,"do":"produce","topic":"a","partition":1,"count":3},
		{"at":300,"do":"kill","broker":1},{"at":400,"do":"produce","topic":"a","partition":0,"count":2},
		{"at":2000,"do":"restart","broker":1},{"at":2500,"do":"shutdown","broker":2},
		{"at":3000,"do":"produce","topic":"b","partition":2,"count":2},{"at":4000,"do":"restart","broker":2}`
	for _, era := range []string{"3.7", "2.1", "0.11.0", "0.10.2"} {
		for _, cfg := range []string{
			`"num.replica.fetchers":3`,
			`"num.replica.fetchers":2,"unclean.leader.election.enable":true,"min.insync.replicas":2`,
		} {
			cases = append(cases, handCase(t, fmt.Sprintf("hand/%s/%s", era, cfg), `"brokers":5,
				"config":{"inter.broker.protocol.version":"`+era+`",`+cfg+`},
				"topics":[{"name":"a","partitions":7,"replicationFactor":3},
					{"name":"b","assignment":[[3,1],[1,3,0],[4],[0,3,1]]},{"name":"c","partitions":5,"replicationFactor":2}],
				"duration":6000,"steps":[`+faults+`]`))
		}
	}
	cases = append(cases, handCase(t, "hand/large", `"brokers":12,"config":{"num.replica.fetchers":4},
		"topics":[{"name":"big","partitions":600,"replicationFactor":3},{"name":"x","partitions":40,"replicationFactor":2}],
		"duration":3000,"steps":[{"at":100,"do":"produce","topic":"big","partition":17,"count":5},
			{"at":500,"do":"kill","broker":3},{"at":1500,"do":"restart","broker":3}]`))
	return cases
}

func handCase(t *testing.T, name, body string) determinismCase {
	t.Helper()
	sc, err := ParseScenario([]byte(`{"name":"` + strings.ReplaceAll(name, `"`, "") + `","seed":7,` + body + `}`))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return determinismCase{name: name, sc: sc}
}

// TestBulkStartMatchesGeneral builds each case's cluster both ways and compares the events of the
// start and the whole engine (every broker, replica, fetcher, the controller, the agenda, the
// observers), then runs the scenario on both and compares the traces and the engines again.
func TestBulkStartMatchesGeneral(t *testing.T) {
	for _, c := range bulkStartCases(t) {
		t.Run(c.name, func(t *testing.T) {
			bulk, err := buildEngine(c.sc, true, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			general, err := buildEngine(c.sc, true, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			general.generalStart = false // the run is the same code either way: only the start differs
			general.setRules()
			if bulk.bulkStarts != len(bulk.brokers) || general.bulkStarts != 0 {
				t.Fatalf("brokers started through the bulk path: %d of %d, and %d with the general path forced", bulk.bulkStarts, len(bulk.brokers), general.bulkStarts)
			}
			bulk.bulkStarts = 0
			bt, gt := drainedJSONL(t, bulk), drainedJSONL(t, general)
			if len(bt) == 0 {
				t.Fatal("the start recorded no events")
			}
			if !bytes.Equal(bt, gt) {
				t.Fatalf("the start's events differ (first: bulk, second: general); %s", firstDiff(bt, gt))
			}
			if d := deepDiff(bulk, general); d != "" {
				t.Fatalf("the engines differ after the start: %s", d)
			}
			bt, gt = runJSONL(t, bulk, c.sc), runJSONL(t, general, c.sc)
			if !bytes.Equal(bt, gt) {
				t.Fatalf("the runs' traces differ (first: bulk start, second: general); %s", firstDiff(bt, gt))
			}
			if d := deepDiff(bulk, general); d != "" {
				t.Fatalf("the engines differ at the end of the run: %s", d)
			}
		})
	}
}

// drainedJSONL takes e's events, their text made, as JSON lines.
func drainedJSONL(t *testing.T, e *Engine) []byte {
	t.Helper()
	var buf bytes.Buffer
	jsonlSink(t, &buf)(e.Drain())
	return buf.Bytes()
}

// jsonlSink is a sink writing each event to buf as a JSON line.
func jsonlSink(t *testing.T, buf *bytes.Buffer) func([]Event) {
	enc := json.NewEncoder(buf)
	return func(evs []Event) {
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// runJSONL plays sc's steps on e and returns the trace as JSON lines, the events left undrained
// at the end included.
func runJSONL(t *testing.T, e *Engine, sc *Scenario) []byte {
	t.Helper()
	return append(stepsJSONL(t, e, sc), drainedJSONL(t, e)...)
}

// stepsJSONL plays sc's steps on e and returns the trace its sink got, as JSON lines.
func stepsJSONL(t *testing.T, e *Engine, sc *Scenario) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := e.RunSteps(sc, jsonlSink(t, &buf)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBulkStartTakesBulkPath: the bulk path applies to every broker of these fresh clusters (else
// the comparison above would compare the general path with itself).
func TestBulkStartTakesBulkPath(t *testing.T) {
	for _, c := range bulkStartCases(t) {
		e, err := buildEngine(c.sc, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e.bulkStarts != len(e.brokers) {
			t.Errorf("%s: %d of %d brokers took the bulk path", c.name, e.bulkStarts, len(e.brokers))
		}
	}
}

// deepDiff names the first place where a and b differ ("" for none): reflect.DeepEqual's
// comparison, except that funcs are equal when they are the same code (the checker keeps a
// closure over its engine; an event its render function), and pointers are followed once per
// pair.
func deepDiff(a, b any) string {
	seen := map[[2]uintptr]bool{}
	var walk func(x, y reflect.Value, path string) string
	walk = func(x, y reflect.Value, path string) string {
		if x.IsValid() != y.IsValid() {
			return path + ": one is invalid"
		}
		if !x.IsValid() {
			return ""
		}
		if x.Type() != y.Type() {
			return path + ": types " + x.Type().String() + " and " + y.Type().String()
		}
		switch x.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice:
			if x.IsNil() != y.IsNil() {
				return fmt.Sprintf("%s: nil %v, nil %v", path, x.IsNil(), y.IsNil())
			}
			if x.IsNil() {
				return ""
			}
		}
		switch x.Kind() {
		case reflect.Pointer:
			k := [2]uintptr{x.Pointer(), y.Pointer()}
			if seen[k] {
				return ""
			}
			seen[k] = true
			return walk(x.Elem(), y.Elem(), path)
		case reflect.Interface:
			if x.IsNil() != y.IsNil() {
				return path + ": one nil interface"
			}
			if x.IsNil() {
				return ""
			}
			return walk(x.Elem(), y.Elem(), path)
		case reflect.Struct:
			for i := range x.NumField() {
				if d := walk(x.Field(i), y.Field(i), path+"."+x.Type().Field(i).Name); d != "" {
					return d
				}
			}
			return ""
		case reflect.Slice, reflect.Array:
			if x.Len() != y.Len() {
				return fmt.Sprintf("%s: len %d and %d", path, x.Len(), y.Len())
			}
			for i := range x.Len() {
				if d := walk(x.Index(i), y.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
			return ""
		case reflect.Map:
			if x.Len() != y.Len() {
				return fmt.Sprintf("%s: len %d and %d", path, x.Len(), y.Len())
			}
			it := x.MapRange()
			for it.Next() {
				if d := walk(it.Value(), y.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key())); d != "" {
					return d
				}
			}
			return ""
		case reflect.Func: // the same code (a closure's captures are not compared)
			if x.Pointer() != y.Pointer() {
				return path + ": different funcs"
			}
			return ""
		default: // unexported fields allow no Interface: compare the printed values
			if xs, ys := fmt.Sprint(x), fmt.Sprint(y); xs != ys {
				return fmt.Sprintf("%s: %s and %s", path, xs, ys)
			}
			return ""
		}
	}
	return walk(reflect.ValueOf(a), reflect.ValueOf(b), "")
}
