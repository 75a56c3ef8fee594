//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main outside the browser: this package is the engine's WebAssembly host. Build it with
// GOOS=js GOARCH=wasm (make wasm); natively only its bridge is tested.
func main() {
	fmt.Fprintln(os.Stderr, "wasm: build with GOOS=js GOARCH=wasm (make wasm); the native CLI is ./cmd/highwater")
	os.Exit(2)
}
