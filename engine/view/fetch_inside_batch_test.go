package view

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// runGrader plays a grader file to its end; its expectations must hold.
func runGrader(t *testing.T, file string) *engine.Engine {
	t.Helper()
	data, err := os.ReadFile("../testdata/grader/" + file)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := engine.ParseScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := engine.Run(sc, nil)
	if err != nil || !res.OK() {
		t.Fatalf("run: %v %v", err, res.Failures)
	}
	return e
}

// TestViewDeadFetcherAndGap: the page sees a fetcher thread that died (before Kafka 2.3, an error
// processing fetched data ends it: grader b01) as dead, its partitions stopped, and the offsets a
// truncation inside a batch left without records (grader b02) as gap cells.
func TestViewDeadFetcherAndGap(t *testing.T) {
	v := Build(runGrader(t, "b01-fetch-inside-batch-kills-fetcher-0.11.0.json"), Options{})
	fs := v.Brokers[1].Fetchers
	if len(fs) != 1 || !fs[0].Dead || len(fs[0].Partitions) != 2 || fs[0].Partitions[0].State != "stopped" {
		t.Fatalf("broker 1's fetchers: %+v, want one dead thread with its 2 partitions stopped", fs)
	}
	v = Build(runGrader(t, "b02-truncation-inside-batch-leaves-gap-0.11.0.json"), Options{})
	var r0 *ReplicaView
	for i := range v.Partitions[0].Replicas {
		if v.Partitions[0].Replicas[i].Broker == 0 {
			r0 = &v.Partitions[0].Replicas[i]
		}
	}
	if r0 == nil || len(r0.Records) != 22 || !r0.Records[11].Gap || !r0.Records[15].Gap || r0.Records[16].Gap {
		t.Fatalf("broker 0's records: %+v, want offsets 11..15 gaps", r0)
	}
	b, _ := json.Marshal(r0.Records[11])
	if !strings.Contains(string(b), `"gap":true`) {
		t.Errorf("a gap record's JSON: %s", b)
	}
}
