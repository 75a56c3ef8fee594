// Package page composes the page's files and builds them for shipping. It is separate from
// package web (which embeds web/dist) so that the build tool does not embed its own input.
//
//   - New puts the presets (package scenarios, with their index) under scenarios/ over a page
//     directory: what `highwater serve` serves, from the binary or from --web-dir.
//   - Precompress writes engine.wasm.br and engine.wasm.gz beside engine.wasm (`make wasm`).
//   - WriteDist writes the static build (`make dist`): the page, the presets, the vendored chart
//     library, the engine with its compressed copies, wasm_exec.js and config.json.
package page

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/highwater-sim/highwater/scenarios"
)

// New returns base (the page: index.html at the top) with the presets and their index.json
// under scenarios/. The presets come from package scenarios, whatever base holds there (a stale
// copy left in web/dist by an older build, say).
func New(base fs.FS) (fs.FS, error) {
	presets, err := scenarios.Index()
	if err != nil {
		return nil, err
	}
	layer := fstest.MapFS{} // an in-memory FS (the standard library's; it lists directories too)
	for _, p := range presets {
		data, err := fs.ReadFile(scenarios.Files(), p.File)
		if err != nil {
			return nil, err
		}
		layer["scenarios/"+p.File] = &fstest.MapFile{Data: data, Mode: 0o444, ModTime: buildTime}
	}
	index, err := scenarios.IndexJSON(presets)
	if err != nil {
		return nil, err
	}
	layer["scenarios/index.json"] = &fstest.MapFile{Data: index, Mode: 0o444, ModTime: buildTime}
	return union{layer, base}, nil
}

// buildTime is the modification time of the generated files: the embedded ones have none either
// (caching goes by ETag, see server/static.go).
var buildTime time.Time

// union serves each name from the first layer that has it. A directory present in several
// layers lists the entries of all of them (the first layer's entry wins a name).
type union []fs.FS

func (u union) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	var dirs []fs.File
	for _, layer := range u {
		f, err := layer.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			closeAll(dirs)
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			closeAll(dirs)
			return nil, err
		}
		if !st.IsDir() {
			if len(dirs) == 0 {
				return f, nil
			}
			f.Close() // a file under a directory of an earlier layer: the directory wins
			continue
		}
		dirs = append(dirs, f)
	}
	switch len(dirs) {
	case 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case 1:
		return dirs[0], nil
	}
	return &unionDir{File: dirs[0], rest: dirs[1:], name: name}, nil
}

func closeAll(files []fs.File) {
	for _, f := range files {
		f.Close()
	}
}

// unionDir is a directory found in several layers: Stat is the first one's, ReadDir merges.
type unionDir struct {
	fs.File
	rest    []fs.File
	name    string
	entries []fs.DirEntry // nil until the first ReadDir
	read    bool
}

func (d *unionDir) Close() error {
	closeAll(d.rest)
	return d.File.Close()
}

func (d *unionDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		d.read = true
		seen := map[string]bool{}
		for _, f := range append([]fs.File{d.File}, d.rest...) {
			rd, ok := f.(fs.ReadDirFile)
			if !ok {
				return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: errors.New("not a directory")}
			}
			list, err := rd.ReadDir(-1)
			if err != nil {
				return nil, err
			}
			for _, e := range list {
				if !seen[e.Name()] {
					seen[e.Name()] = true
					d.entries = append(d.entries, e)
				}
			}
		}
		slices.SortFunc(d.entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.entries))
	out := d.entries[:k]
	d.entries = d.entries[k:]
	return out, nil
}
