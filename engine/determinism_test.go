package engine

// Determinism checks (docs/testing.md): a scenario run twice gives byte-identical JSONL traces;
// a sweep seed replayed from its scenario file gives the sweep's own trace; and the SHA-256 of
// each trace matches testdata/trace-hashes.golden both natively and under GOOS=js GOARCH=wasm,
// so the page's WebAssembly engine and `highwater run` tell the same story.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/trace-hashes.golden (run natively, then review the diff)")

const traceHashesGolden = "testdata/trace-hashes.golden"

// traceSweepSeeds are the generated faulty scenarios in the golden file: sweep seeds with kills,
// bounces, power loss, isolation and controlled shutdowns, network jitter drawn from the engine's
// PRNG, and both one and several partitions.
var traceSweepSeeds = []uint64{1, 2, 3, 4}

// traceModeSeeds are, for each of the sweep's era and harsh modes (sweepModes), the seeds in the
// golden file: the eras' fault mixes and rules (KIP-101 triggers, power loss, failovers) too.
var traceModeSeeds = []uint64{1, 2, 3}

// determinismCase is one scenario the determinism tests run.
type determinismCase struct {
	name string
	sc   *Scenario
}

// presetCases returns every preset in ../scenarios, each named prefix + its file name.
func presetCases(t *testing.T, prefix string) []determinismCase {
	t.Helper()
	files, err := filepath.Glob("../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets found in ../scenarios: %v", err)
	}
	var cases []determinismCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ParseScenario(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases = append(cases, determinismCase{name: prefix + filepath.Base(f), sc: sc})
	}
	return cases
}

// sweepCases returns the scenarios of seeds 1 to seeds of each mode, each named "mode/seed=N".
func sweepCases(t *testing.T, modes []*sweepMode, seeds uint64) []determinismCase {
	t.Helper()
	var cases []determinismCase
	for _, m := range modes {
		for seed := uint64(1); seed <= seeds; seed++ {
			s := newSweepRunMode(t, seed, m)
			s.run()
			cases = append(cases, determinismCase{name: fmt.Sprintf("%s/seed=%d", m.name, seed), sc: s.scenario()})
		}
	}
	return cases
}

// determinismCases returns every preset in ../scenarios and the sweep seeds' scenarios, by name.
func determinismCases(t *testing.T) []determinismCase {
	t.Helper()
	cases := presetCases(t, "scenarios/")
	for _, seed := range traceSweepSeeds {
		s := newSweepRun(t, seed)
		s.run()
		cases = append(cases, determinismCase{name: fmt.Sprintf("sweep/seed=%d", seed), sc: s.scenario()})
	}
	for _, m := range sweepModes {
		for _, seed := range traceModeSeeds {
			s := newSweepRunMode(t, seed, m)
			s.run()
			cases = append(cases, determinismCase{name: fmt.Sprintf("sweep-%s/seed=%d", m.name, seed), sc: s.scenario()})
		}
	}
	return cases
}

// traceJSONL runs a scenario and returns its trace exactly as `highwater run --trace` writes it:
// every event encoded with encoding/json, one per line.
func traceJSONL(t *testing.T, sc *Scenario) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	var encErr error
	_, _, err := Run(sc, func(evs []Event) {
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil && encErr == nil {
				encErr = err
			}
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	if encErr != nil {
		t.Fatalf("%s: encoding the trace: %v", sc.Name, encErr)
	}
	return buf.Bytes()
}

// firstDiff describes the first line where two traces differ.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  first:  %s\n  second: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one trace has %d lines, the other %d", len(la), len(lb))
}

// TestTraceDeterminism runs every case twice and requires byte-identical traces. Map iteration
// order, which Go randomizes per run, would show up here if it reached state or output.
func TestTraceDeterminism(t *testing.T) {
	for _, c := range determinismCases(t) {
		t.Run(c.name, func(t *testing.T) {
			a, b := traceJSONL(t, c.sc), traceJSONL(t, c.sc)
			if len(a) == 0 {
				t.Fatal("empty trace")
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("two runs of %s gave different traces; %s", c.name, firstDiff(a, b))
			}
		})
	}
}

// TestSweepReplay checks that a sweep seed's scenario file replays the sweep's own run event for
// event: what a failing seed writes for `highwater run` is the run that failed.
func TestSweepReplay(t *testing.T) {
	for _, seed := range traceSweepSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			var live bytes.Buffer
			enc := json.NewEncoder(&live)
			s := newSweepRun(t, seed)
			s.sink = func(evs []Event) {
				for i := range evs {
					if err := enc.Encode(&evs[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.run()
			data, err := json.Marshal(s.scenario())
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ParseScenario(data)
			if err != nil {
				t.Fatalf("the sweep's scenario does not parse: %v", err)
			}
			replay := traceJSONL(t, sc)
			if !bytes.Equal(live.Bytes(), replay) {
				t.Fatalf("the replayed scenario's trace differs from the sweep's; %s", firstDiff(live.Bytes(), replay))
			}
		})
	}
}

// goldenLine is one line of the golden file: the trace's hash, its event count and the case.
func goldenLine(name string, trace []byte) string {
	sum := sha256.Sum256(trace)
	return fmt.Sprintf("%s %6d %s", hex.EncodeToString(sum[:]), bytes.Count(trace, []byte("\n")), name)
}

// TestTraceHashes compares each case's trace hash with testdata/trace-hashes.golden. A case the
// file does not list yet (a new preset) is only logged; a listed case that is gone fails. The same
// test runs natively and under GOOS=js GOARCH=wasm (make wasmtest), so both must produce the
// very same traces. After an intended change of the engine, rewrite the file natively with
// `go test ./engine -run TestTraceHashes -update` and review the diff.
func TestTraceHashes(t *testing.T) {
	var got []string
	for _, c := range determinismCases(t) {
		got = append(got, goldenLine(c.name, traceJSONL(t, c.sc)))
	}
	slices.SortFunc(got, func(a, b string) int { return strings.Compare(goldenName(a), goldenName(b)) })
	if *updateGolden {
		header := "# SHA-256, event count and name of each scenario's JSONL trace (engine/determinism_test.go).\n" +
			"# Checked natively and under GOOS=js GOARCH=wasm. Rewrite natively with\n" +
			"#   go test ./engine -run TestTraceHashes -update\n" +
			"# and review the diff: a changed line means that scenario's run changed.\n"
		if err := os.MkdirAll(filepath.Dir(traceHashesGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(traceHashesGolden, []byte(header+strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d traces)", traceHashesGolden, len(got))
		return
	}
	want := readGolden(t)
	fix := "if the engine or a preset changed on purpose, rewrite the file natively with " +
		"`go test ./engine -run TestTraceHashes -update` and review the diff; if only GOOS=js fails, the " +
		"engine's run depends on the platform"
	byName := map[string]string{}
	for _, w := range want {
		byName[goldenName(w)] = w
	}
	for _, g := range got {
		w, ok := byName[goldenName(g)]
		switch {
		case !ok:
			// A new preset: not an error, so adding one does not break the build; -update adds it.
			t.Logf("%s: no golden hash yet (add it with -update)\n  got:  %s", goldenName(g), g)
		case w != g:
			t.Errorf("%s: the trace differs from the golden one\n  want: %s\n  got:  %s\n%s", goldenName(g), w, g, fix)
		}
		delete(byName, goldenName(g))
	}
	for _, name := range sortedKeys(byName) {
		t.Errorf("%s: in the golden file but no longer a case (%s)", name, fix)
	}
}

// goldenName returns the case name of a golden line.
func goldenName(line string) string {
	f := strings.Fields(line)
	if len(f) < 3 {
		return line
	}
	return f[2]
}

func readGolden(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(traceHashesGolden)
	if err != nil {
		t.Fatalf("%v (create it natively with `go test ./engine -run TestTraceHashes -update`)", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
