package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/server/hugepages"
)

// runScenario is `highwater run FILE.json [--trace OUT.jsonl]`. Exit codes are the contract's:
// 0 all held, 1 an expectation failed or an unexpected violation, 2 not a valid scenario.
func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "write every event as one JSON object per line to this file")
	// Accept the file before or after the flags.
	var file string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" || fs.NArg() > 1 || (fs.NArg() == 1 && file != fs.Arg(0)) {
		fmt.Fprintln(stderr, "usage: highwater run FILE.json [--trace OUT.jsonl]")
		return 2
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return 2
	}
	sc, built, err := parseAndBuild(data, *tracePath != "")
	if err != nil {
		fmt.Fprintf(stderr, "%s: not a valid scenario: %v\n", file, err)
		return 2
	}
	var sink func([]engine.Event)
	var tw *traceWriter
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			fmt.Fprintf(stderr, "--trace: %v\n", err)
			return 2
		}
		var reuse func([]engine.Event)
		if built.e != nil {
			reuse = built.e.ReuseEvents
		}
		tw = newTraceWriter(f, reuse)
		sink = tw.sink
	}
	// Unnarrated: the trace writer narrates the events on its own goroutine.
	e, res, err := built.e, engine.Result{}, built.err
	if err == nil {
		res, err = e.RunStepsUnnarrated(sc, sink)
	}
	var traceErr error
	if tw != nil {
		traceErr = tw.close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return 1
	}
	code := runResult(file, sc, e, res, stdout, stderr)
	if traceErr != nil {
		// The run is done, but the file holds only part of its trace (a full disk…).
		fmt.Fprintf(stderr, "--trace %s: %v: the trace is incomplete\n", *tracePath, traceErr)
		return exitTraceFailed
	}
	return code
}

// built is the engine built for a run, or why it could not be.
type built struct {
	e   *engine.Engine
	err error
}

// parseAndBuild parses a scenario file and builds the engine that runs it (recording events if
// record), on two goroutines: the steps, a load file's bulk (100,000 of them), are parsed on one
// while the cluster is built from the rest of the file (ParseScenarioHead, NewRun) on the other.
// The answer is the one of ParseScenario, then NewRun on its scenario: a file ParseScenario
// rejects gets its error, and an engine built from a head that is not the parsed scenario's
// (which a valid file cannot give) is built again.
func parseAndBuild(data []byte, record bool) (*engine.Scenario, built, error) {
	type parsed struct {
		sc  *engine.Scenario
		err error
	}
	// The head comes first, for the huge pages asked for the whole run, steps included (when
	// HIGHWATER_HUGEPAGES=on; a few ms of the 6 MB load file).
	head, err := engine.ParseScenarioHead(data)
	if err == nil {
		hugepages.Advise(hugepages.Estimate(head, len(data)))
	}
	whole := make(chan parsed, 1)
	go func() {
		sc, err := engine.ParseScenario(data)
		whole <- parsed{sc, err}
	}()
	var b built
	if err == nil {
		b.e, b.err = engine.NewRun(head, record)
	}
	p := <-whole
	if p.err != nil {
		return nil, built{}, p.err
	}
	if err != nil || !sameHead(head, p.sc) {
		b.e, b.err = engine.NewRun(p.sc, record)
	}
	return p.sc, b, nil
}

// sameHead reports whether head is sc without its steps.
func sameHead(head, sc *engine.Scenario) bool {
	whole := *sc
	whole.Steps = nil
	return reflect.DeepEqual(*head, whole)
}

// exitTraceFailed is `highwater run`'s exit code when the run finished but its trace could not
// be written whole; the contract's codes 0, 1 and 2 say nothing about the trace file.
const exitTraceFailed = 3

// runResult prints a finished run's summary, violations and failed expectations, and returns the
// contract's exit code: 0 all held, 1 an expectation failed.
func runResult(file string, sc *engine.Scenario, e *engine.Engine, res engine.Result, stdout, stderr io.Writer) int {
	st := e.Stats()
	fmt.Fprintf(stdout, "%s: %q, seed %d, %d brokers, ran to %d ms: %d agenda items, %d events\n",
		file, sc.Name, sc.Seed, sc.Brokers, res.End, st.Processed, st.Events)
	for _, v := range e.Violations() {
		fmt.Fprintf(stdout, "violation at %d ms: %s\n", v.T, v.Text)
	}
	if !res.OK() {
		for _, f := range res.Failures {
			fmt.Fprintf(stderr, "FAIL %s\n", f)
		}
		return 1
	}
	fmt.Fprintln(stdout, "ok: every expectation held")
	return 0
}

// runMemoryLimit is the soft heap limit of `highwater run` (Go's GOMEMLIMIT): a million-partition
// cluster keeps about 2 GB live, and the collector's default pace (GOGC 100) would let the heap
// reach twice that.
const runMemoryLimit = 3 << 30

// tuneGC paces the collector for one large run, unless the user set GOGC or GOMEMLIMIT: garbage
// may grow to four times the live heap (a run allocates messages at a high rate and keeps few),
// but the heap stays under runMemoryLimit, where the collector works harder instead.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(runMemoryLimit)
	}
}
