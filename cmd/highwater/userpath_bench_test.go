package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeLoadScenario writes the scale issue's user path as a scenario file: brokers × partitions
// (RF 3, the contract's default assignment) and rate single-record acks=all produce steps per
// simulated second, spread over the partitions at random (a fixed seed), for seconds.
func writeLoadScenario(path string, brokers, partitions, rate, seconds int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"name":"load %d×%d","seed":1,"brokers":%d,`, brokers, partitions, brokers)
	fmt.Fprintf(w, `"topics":[{"name":"load","partitions":%d,"replicationFactor":3}],"duration":%d,"steps":[`,
		partitions, seconds*1000)
	rng := rand.New(rand.NewPCG(7, 7))
	n := rate * seconds
	for i := range n {
		// Steps spread evenly over each simulated second.
		at := int64(i)*1000/int64(rate) + 1
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, `{"at":%d,"do":"produce","topic":"load","partition":%d}`, at, rng.IntN(partitions))
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildHighwater builds the CLI once per benchmark run.
func buildHighwater(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "highwater")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkUserPath runs `highwater run` as a user does, in a child process: parse, cluster
// setup and the run, with and without --trace. It reports simulated seconds per wall second
// (the real-time factor) and the child's peak RSS. The 100,000-partition run without --trace is
// also run twice with HIGHWATER_HUGEPAGES=on (server/hugepages), the others with it off: the
// first such run after small-page runs can pay for the huge pages' first faults (in a virtual
// machine whose host backs memory lazily, a host fault per 4 KB), and the one after it shows
// repeated runs. The million-partition size runs only with HIGHWATER_BENCH_MILLION=1 (it needs
// about a minute and a few GB).
func BenchmarkUserPath(b *testing.B) {
	type size struct{ brokers, partitions int }
	sizes := []size{{100, 100_000}}
	if os.Getenv("HIGHWATER_BENCH_MILLION") == "1" {
		sizes = append(sizes, size{1000, 1_000_000})
	}
	dir := b.TempDir()
	bin := buildHighwater(b, dir)
	const rate, seconds = 10_000, 10
	type variant struct {
		trace     bool
		hugepages string // "off", "on" or "on/again"
	}
	for _, sz := range sizes {
		file := filepath.Join(dir, fmt.Sprintf("load-%d.json", sz.partitions))
		if err := writeLoadScenario(file, sz.brokers, sz.partitions, rate, seconds); err != nil {
			b.Fatal(err)
		}
		variants := []variant{{false, "off"}, {true, "off"}}
		if sz.partitions == 100_000 {
			variants = append(variants, variant{false, "on"}, variant{false, "on/again"})
		}
		for _, v := range variants {
			name := fmt.Sprintf("brokers=%d/partitions=%d/trace=%v", sz.brokers, sz.partitions, v.trace)
			if v.hugepages != "off" {
				name += "/hugepages=" + v.hugepages
			}
			b.Run(name, func(b *testing.B) {
				args := []string{"run", file}
				if v.trace {
					args = append(args, "--trace", filepath.Join(dir, "trace.jsonl"))
				}
				var wall time.Duration
				var rss int64
				for range b.N {
					cmd := exec.Command(bin, args...)
					cmd.Env = append(os.Environ(), "HIGHWATER_HUGEPAGES="+strings.TrimSuffix(v.hugepages, "/again"))
					start := time.Now()
					out, err := cmd.CombinedOutput()
					wall += time.Since(start)
					if err != nil {
						b.Fatalf("highwater %v: %v\n%s", args, err, out)
					}
					if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
						rss = max(rss, ru.Maxrss*1024) // Linux reports KiB
					}
				}
				b.ReportMetric(float64(seconds*b.N)/wall.Seconds(), "sim-s/wall-s")
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
			})
		}
	}
}

// TestLoadScenarioParses keeps the benchmark's generator in step with the scenario format.
func TestLoadScenarioParses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "load.json")
	if err := writeLoadScenario(file, 5, 20, 100, 2); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runScenario([]string{file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
}
