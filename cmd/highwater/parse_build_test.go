package main

import (
	"io/fs"
	"path"
	"testing"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/scenarios"
)

// TestParseAndBuildPresets: for every preset, the head parsed beside the steps is the parsed
// scenario's (so the engine built from it is the one `highwater run` always built), and the
// engine is built.
func TestParseAndBuildPresets(t *testing.T) {
	files, err := fs.Glob(scenarios.Files(), "*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	for _, name := range files {
		if path.Base(name) == "index.json" {
			continue
		}
		data, err := fs.ReadFile(scenarios.Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		head, err := engine.ParseScenarioHead(data)
		if err != nil {
			t.Fatalf("%s: head: %v", name, err)
		}
		sc, err := engine.ParseScenario(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameHead(head, sc) {
			t.Errorf("%s: the head is not the parsed scenario's", name)
		}
		got, b, err := parseAndBuild(data, false)
		if err != nil || b.err != nil || b.e == nil || len(got.Steps) != len(sc.Steps) {
			t.Errorf("%s: parseAndBuild: %v, %v", name, err, b.err)
		}
	}
}

// TestParseAndBuildErrors: a file ParseScenario rejects gets ParseScenario's error, whatever the
// head made of it.
func TestParseAndBuildErrors(t *testing.T) {
	cluster := `"name":"x","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}]`
	for _, file := range []string{
		`{` + cluster + `,"steps":[{"at":1,"do":"produce","topic":"t","partition":0},]}`, // invalid JSON in the steps
		`{` + cluster + `,"steps":[{"at":1,"do":"produce","topic":"u","partition":0}]}`,  // an unknown topic
		`{` + cluster + `,"steps":[{"at":1,"do":"fly"}]}`,
		`{"name":"x","brokers":0,"topics":[]}`,
		`{` + cluster + `,"steps":[]`,
		`[]`,
	} {
		_, want := engine.ParseScenario([]byte(file))
		if want == nil {
			t.Fatalf("%s: ParseScenario accepts it", file)
		}
		if _, _, err := parseAndBuild([]byte(file), false); err == nil || err.Error() != want.Error() {
			t.Errorf("%s: %v, want %v", file, err, want)
		}
	}
}
