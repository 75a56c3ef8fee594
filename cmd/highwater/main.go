// Command highwater runs Highwater: `highwater run` plays a scenario file headless, `highwater
// serve` serves the page (and the native engine over a websocket).
package main

import (
	"fmt"
	"os"
)

const usage = `usage:
  highwater run FILE.json [--trace OUT.jsonl]   play a scenario, check its expectations
  highwater serve [--addr host:port]            serve the page (default 127.0.0.1:8080)
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		tuneGC()
		return runScenario(args[1:], os.Stdout, os.Stderr)
	case "serve":
		return serve(args[1:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "highwater: unknown command %q\n%s", args[0], usage)
	return 2
}
