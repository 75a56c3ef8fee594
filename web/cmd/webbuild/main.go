// Command webbuild builds what the page needs besides its own sources. Run from the repository
// root:
//
//	webbuild -compress web/dist/engine.wasm   # .br and .gz beside the engine (make wasm)
//	webbuild -vendor                          # web/node_modules → web/dist/vendor (make vendor, after npm ci)
//	webbuild -dist dist                       # the static build (make dist, after make wasm)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/highwater-sim/highwater/web"
	"github.com/highwater-sim/highwater/web/page"
)

func main() {
	compress := flag.String("compress", "", "write `file`.br and file.gz beside file (skipped when they already match)")
	vendor := flag.Bool("vendor", false, "copy the pinned chart library from web/node_modules into web/dist/vendor")
	dist := flag.String("dist", "", "write the static build (web/dist, presets, config.json) into `dir`")
	quality := flag.Int("brotli", page.BrotliQuality, "brotli quality (0–11)")
	flag.Parse()
	if err := run(*compress, *vendor, *dist, *quality); err != nil {
		fmt.Fprintln(os.Stderr, "webbuild:", err)
		os.Exit(1)
	}
}

func run(compress string, vendor bool, dist string, quality int) error {
	if compress == "" && !vendor && dist == "" {
		return fmt.Errorf("nothing to do: pass -compress FILE, -vendor or -dist DIR")
	}
	if vendor {
		if err := web.CopyVendor("web/node_modules", "web/dist/vendor"); err != nil {
			return err
		}
		fmt.Println("webbuild: vendor files copied into web/dist/vendor")
	}
	if compress != "" {
		start := time.Now()
		wrote, err := page.Precompress(compress, quality)
		if err != nil {
			return err
		}
		if wrote {
			fmt.Printf("webbuild: %s.br and %s.gz written in %.1f s\n", compress, compress, time.Since(start).Seconds())
		} else {
			fmt.Printf("webbuild: %s.br and %s.gz already match\n", compress, compress)
		}
	}
	if dist != "" {
		if err := page.WriteDist(dist, os.DirFS(filepath.Join("web", "dist")), quality); err != nil {
			return err
		}
		fmt.Printf("webbuild: static build in %s/ (serve it with any static file server)\n", dist)
	}
	return nil
}
