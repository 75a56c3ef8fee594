package view

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// Test helpers: engines built and driven through the engine's exported API only.

// newKafkaEngine builds a cluster of n brokers with topic "t" assigned as given, and the config
// given as name → JSON value.
func newKafkaEngine(t testing.TB, n int, assignment [][]int32, cfg map[string]string) *engine.Engine {
	t.Helper()
	sc := &engine.Scenario{Name: t.Name(), Seed: 1, Brokers: n,
		Topics: []engine.Topic{{Name: "t", Assignment: assignment}}, Config: map[string]json.RawMessage{}}
	for k, v := range cfg {
		sc.Config[k] = json.RawMessage(v)
	}
	e, err := engine.New(sc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func runFor(t testing.TB, e *engine.Engine, ms int64) {
	t.Helper()
	if err := e.RunUntil(e.Now() + ms); err != nil {
		t.Fatal(err)
	}
}

// apply applies one action, given as its JSON fields, now.
func apply(t testing.TB, e *engine.Engine, action string) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(action), &fields); err != nil {
		t.Fatalf("bad action %s: %v", action, err)
	}
	a, err := engine.ParseAction(fields)
	if err != nil {
		t.Fatalf("action %s: %v", action, err)
	}
	if err := e.Apply(a); err != nil {
		t.Fatalf("action %s: %v", action, err)
	}
}

// runPreset plays a preset scenario to its end; its expectations must hold.
func runPreset(t *testing.T, file string) *engine.Engine {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/" + file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := engine.ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := engine.Run(sc, func([]engine.Event) {})
	if err != nil || !res.OK() {
		t.Fatalf("%s: %v %v", file, err, res.Failures)
	}
	return e
}

func ptr[T any](v T) *T { return &v }
