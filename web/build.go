package web

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/highwater-sim/highwater/scenarios"
)

// Preset is one entry of scenarios/index.json: a scenario file the page offers, with its title
// and description (the caption).
type Preset = scenarios.Preset

// CopyPresets copies every srcDir/*.json scenario into dstDir and writes dstDir/index.json,
// sorted by file name. A file that is not a JSON object with a name is an error: presets are
// part of the product and must load. (The binary and `make dist` take the presets from package
// scenarios instead; this is for a page directory built by hand, as the browser tests do.)
func CopyPresets(srcDir, dstDir string) ([]Preset, error) {
	files, err := filepath.Glob(filepath.Join(srcDir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return nil, err
	}
	presets := []Preset{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p, err := scenarios.Describe(filepath.Base(f), data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", srcDir, err)
		}
		if err := os.WriteFile(filepath.Join(dstDir, p.File), data, 0o644); err != nil {
			return nil, err
		}
		presets = append(presets, p)
	}
	index, err := scenarios.IndexJSON(presets)
	if err != nil {
		return nil, err
	}
	return presets, os.WriteFile(filepath.Join(dstDir, "index.json"), index, 0o644)
}

// VendorFiles maps node_modules paths to their names under dist/vendor, where they are committed
// (`make vendor` refreshes them after a version change in package.json).
var VendorFiles = map[string]string{
	"uplot/dist/uPlot.iife.min.js": "uPlot.iife.min.js",
	"uplot/dist/uPlot.min.css":     "uPlot.min.css",
}

// CopyVendor copies the pinned npm files (installed by `npm ci` in web/) into dstDir.
func CopyVendor(nodeModules, dstDir string) error {
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return err
	}
	for _, src := range slices.Sorted(maps.Keys(VendorFiles)) {
		data, err := os.ReadFile(filepath.Join(nodeModules, src))
		if err != nil {
			return fmt.Errorf("%v (run `npm ci` in web/)", err)
		}
		if err := os.WriteFile(filepath.Join(dstDir, VendorFiles[src]), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
