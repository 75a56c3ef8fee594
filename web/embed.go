// Package web holds the page: plain HTML, CSS and JS in dist/ with the vendored chart library in
// dist/vendor/ (all committed), plus what `make wasm` adds there (engine.wasm with its .br and
// .gz, wasm_exec.js; not committed). FS() is the page with the presets (package scenarios) under
// scenarios/; `highwater serve` serves it, and --web-dir swaps in a directory
// (page.New(os.DirFS(dir))). A binary built without `make wasm` (go install) has no engine.wasm:
// the page then runs on the server's engine (docs/shipping.md).
package web

import (
	"embed"
	"io/fs"

	"github.com/highwater-sim/highwater/web/page"
)

// The page sources in dist/ are committed, so this pattern matches before `make wasm` too.
//
//go:embed dist
var dist embed.FS

// FS returns the page's files, rooted at the page (index.html at the top), with the presets and
// their index under scenarios/.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // cannot happen: "dist" is a valid path embedded above
	}
	fsys, err := page.New(sub)
	if err != nil {
		panic(err) // a preset without a name: package scenarios' test fails first
	}
	return fsys
}
