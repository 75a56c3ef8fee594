package web

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVendoredChart: the committed chart library is the version package.json pins (uPlot's
// minified build names its version in its first line), is in the embedded page, and, when
// `npm ci` has run, is byte for byte the npm package's file.
func TestVendoredChart(t *testing.T) {
	raw, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	version := pkg.Dependencies["uplot"]
	for src, name := range VendorFiles {
		data, err := fs.ReadFile(FS(), "vendor/"+name)
		if err != nil {
			t.Fatalf("vendor/%s is not in the embedded page: %v", name, err)
		}
		if strings.HasSuffix(name, ".js") && !strings.Contains(string(data[:min(len(data), 200)]), "(v"+version+")") {
			t.Errorf("vendor/%s is not uPlot %s (package.json): %.80q", name, version, data)
		}
		if npm, err := os.ReadFile(filepath.Join("node_modules", src)); err == nil && !bytes.Equal(npm, data) {
			t.Errorf("vendor/%s differs from node_modules/%s: run `make vendor`", name, src)
		}
	}
	for _, name := range []string{"index.html", "app.js", "worker.js", "scenarios/index.json", "scenarios/leader-crash-truncation.json"} {
		if _, err := fs.Stat(FS(), name); err != nil {
			t.Errorf("the embedded page lacks %s: %v", name, err)
		}
	}
}
