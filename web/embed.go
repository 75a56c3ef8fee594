// Package web holds the page: plain HTML, CSS and JS in dist/, plus what the build adds there
// (engine.wasm, wasm_exec.js, the preset scenarios and the vendored chart library). The server
// serves FS() with http.FileServer(http.FS(web.FS())); a -web-dir flag may swap in os.DirFS.
package web

import (
	"embed"
	"io/fs"
)

// The page sources in dist/ are committed, so this pattern matches before `make wasm` too.
//
//go:embed dist
var dist embed.FS

// FS returns the page's files, rooted at the page (index.html at the top).
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // cannot happen: "dist" is a valid path embedded above
	}
	return sub
}
