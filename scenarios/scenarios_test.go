package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestIndex: every scenario file in the directory is embedded and described, in file order.
func TestIndex(t *testing.T) {
	onDisk, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	presets, err := Index()
	if err != nil {
		t.Fatal(err)
	}
	if len(presets) != len(onDisk) || len(presets) == 0 {
		t.Fatalf("%d presets embedded, %d files on disk", len(presets), len(onDisk))
	}
	for i, p := range presets {
		if p.File != onDisk[i] || p.Name == "" || p.Description == "" {
			t.Errorf("preset %d = %+v (file on disk %s)", i, p, onDisk[i])
		}
	}
	raw, err := IndexJSON(presets)
	if err != nil {
		t.Fatal(err)
	}
	var back []Preset
	if err := json.Unmarshal(raw, &back); err != nil || len(back) != len(presets) {
		t.Fatalf("index.json does not read back: %v", err)
	}
	if _, err := Describe("x.json", []byte(`{"brokers": 3}`)); err == nil {
		t.Fatal("a scenario without a name was accepted")
	}
	want, _ := os.ReadFile(onDisk[0])
	if got, _ := Files().Open(onDisk[0]); got == nil || len(want) == 0 {
		t.Fatal("the first preset is not in Files()")
	}
}
