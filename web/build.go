package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Preset is one entry of dist/scenarios/index.json: a scenario file the page offers, with its
// title and description (the caption).
type Preset struct {
	File        string `json:"file"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// CopyPresets copies every srcDir/*.json scenario into dstDir and writes dstDir/index.json,
// sorted by file name. A file that is not a JSON object with a name is an error: presets are
// part of the product and must load.
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
		var head struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(data, &head); err != nil || head.Name == "" {
			return nil, fmt.Errorf("%s: not a scenario with a name (%v)", f, err)
		}
		base := filepath.Base(f)
		if err := os.WriteFile(filepath.Join(dstDir, base), data, 0o644); err != nil {
			return nil, err
		}
		presets = append(presets, Preset{File: base, Name: head.Name, Description: strings.TrimSpace(head.Description)})
	}
	index, err := json.MarshalIndent(presets, "", "  ")
	if err != nil {
		return nil, err
	}
	return presets, os.WriteFile(filepath.Join(dstDir, "index.json"), append(index, '\n'), 0o644)
}

// VendorFiles maps node_modules paths to their names under dist/vendor.
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
