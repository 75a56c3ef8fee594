// Package scenarios carries the preset scenarios (the *.json files beside this one) into the
// binary, with the index the page reads (scenarios/index.json in the page: file, name,
// description).
//
// The presets stay plain JSON files at the repository root, where `highwater run scenarios/x.json`
// and the engine's tests read them; this package exists because an embed pattern cannot reach
// outside its own package's directory, so the package that embeds them has to live here.
package scenarios

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

//go:embed *.json
var files embed.FS

// Preset is one entry of the index: a scenario file the page offers, with its title and its
// description (the page's caption).
type Preset struct {
	File        string `json:"file"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Files returns the preset scenario files (name.json at the top).
func Files() fs.FS { return files }

// Describe reads a preset's index entry from its contents. A file that is not a JSON object with
// a name is an error: presets are part of the product and must load.
func Describe(file string, data []byte) (Preset, error) {
	var head struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Name == "" {
		return Preset{}, fmt.Errorf("%s: not a scenario with a name (%v)", file, err)
	}
	return Preset{File: file, Name: head.Name, Description: strings.TrimSpace(head.Description)}, nil
}

// IndexJSON is the index as the page reads it: a JSON array of presets sorted by file name.
func IndexJSON(presets []Preset) ([]byte, error) {
	out, err := json.MarshalIndent(presets, "", "  ")
	return append(out, '\n'), err
}

var index = sync.OnceValues(func() ([]Preset, error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	presets := make([]Preset, 0, len(names))
	for _, name := range names {
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, err
		}
		p, err := Describe(name, data)
		if err != nil {
			return nil, err
		}
		presets = append(presets, p)
	}
	return presets, nil
})

// Index returns every embedded preset, sorted by file name.
func Index() ([]Preset, error) { return index() }
