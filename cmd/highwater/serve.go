package main

import (
	"fmt"
	"os"
)

func serve(args []string) int {
	fmt.Fprintln(os.Stderr, "highwater serve: not built yet")
	return 2
}
