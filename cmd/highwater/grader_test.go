package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestGraderScenarios runs every file of engine/testdata/grader through `highwater run`'s own
// path (runScenario): each is a scenario written the way a grader writes one, from Kafka's
// source and the contract alone, every expectation derived in its description before it ran.
// Each must exit 0.
func TestGraderScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "engine", "testdata", "grader", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("%d grader scenarios, want at least 25", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := runScenario([]string{file}, &out, &errOut); code != 0 {
				t.Errorf("exit %d:\n%s%s", code, out.String(), errOut.String())
			}
		})
	}
}
