package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCaption: `highwater run` accepts a caption step and writes it to the trace; a caption
// without text is exit 2 naming the field.
func TestRunCaption(t *testing.T) {
	dir := t.TempDir()
	file, trace := filepath.Join(dir, "tour.json"), filepath.Join(dir, "trace.jsonl")
	write := func(text string) {
		sc := `{"name":"tour","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}],
			"steps":[{"at":10,"do":"caption"` + text + `}]}`
		if err := os.WriteFile(file, []byte(sc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`,"text":"One broker, one replica."`)
	var out, errOut bytes.Buffer
	if code := runScenario([]string{file, "--trace", trace}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `{"t":10,"type":"caption","text":"One broker, one replica."}`+"\n") {
		t.Errorf("trace lacks the caption:\n%s", got)
	}
	write("")
	errOut.Reset()
	if code := runScenario([]string{file}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `steps[0].text: required for "caption"`) {
		t.Errorf("caption without text: exit %d, %q", code, errOut.String())
	}
}
