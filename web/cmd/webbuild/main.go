// Command webbuild fills web/dist with what the page needs besides its own sources: the preset
// scenarios (scenarios/*.json plus an index) and the pinned chart library from web/node_modules.
// `make wasm` runs it from the repository root after `npm ci` in web/.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/highwater-sim/highwater/web"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	presets, err := web.CopyPresets(filepath.Join(*root, "scenarios"), filepath.Join(*root, "web/dist/scenarios"))
	if err == nil {
		err = web.CopyVendor(filepath.Join(*root, "web/node_modules"), filepath.Join(*root, "web/dist/vendor"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "webbuild:", err)
		os.Exit(1)
	}
	fmt.Printf("webbuild: %d presets, vendor files copied into web/dist\n", len(presets))
}
