// Command benchratio compares two `go test -bench` outputs of the same benchmarks, such as the
// engine natively and under WebAssembly: for each benchmark in both with the given unit, it
// prints the two values and their ratio.
//
//	benchratio -unit sim-s/wall-s native.txt wasm.txt
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/perf/benchfmt"
)

func main() {
	unit := flag.String("unit", "sim-s/wall-s", "the metric to compare")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: benchratio [-unit U] A.txt B.txt  (prints A/B per benchmark found in both)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	a, order, err := read(flag.Arg(0), *unit)
	if err == nil {
		var b map[string]float64
		if b, _, err = read(flag.Arg(1), *unit); err == nil {
			err = report(os.Stdout, a, b, order, *unit, label(flag.Arg(0)), label(flag.Arg(1)))
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// label names a file's values by its base name without extension (native.txt: native).
func label(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// gomaxprocs is the -N suffix go test adds to a benchmark name (absent under WebAssembly).
var gomaxprocs = regexp.MustCompile(`-\d+$`)

// read returns each benchmark's value of unit (the last one when a benchmark ran several times),
// by name without the GOMAXPROCS suffix, and the names in file order.
func read(path, unit string) (map[string]float64, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	vals := map[string]float64{}
	var order []string
	r := benchfmt.NewReader(f, path)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		v, ok := res.Value(unit)
		if !ok {
			continue
		}
		name := gomaxprocs.ReplaceAllString(string(res.Name.Full()), "")
		if _, seen := vals[name]; !seen {
			order = append(order, name)
		}
		vals[name] = v
	}
	return vals, order, r.Err()
}

func report(w io.Writer, a, b map[string]float64, order []string, unit, an, bn string) error {
	n := 0
	for _, name := range order {
		bv, ok := b[name]
		if !ok || bv == 0 {
			continue
		}
		n++
		fmt.Fprintf(w, "ratio %s: %.1f × (%s %.2f, %s %.2f %s)\n", name, a[name]/bv, an, a[name], bn, bv, unit)
	}
	if n == 0 {
		return fmt.Errorf("no benchmark with %s in both files", unit)
	}
	return nil
}
