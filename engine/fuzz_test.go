package engine

// FuzzParseScenario: the parser never panics, and whatever it accepts the engine can build and
// run for a while without panicking (docs/testing.md). The seed corpus (the presets plus
// malformed variants) runs in every `go test`; fuzz further with
//   go test ./engine -run '^$' -fuzz FuzzParseScenario -fuzztime 60s

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// fuzzRunMs is how far an accepted scenario runs.
	fuzzRunMs = 5_000
	// fuzzMaxReplicas bounds the cluster the fuzzer builds; bigger ones are only parsed.
	fuzzMaxReplicas = 300
	// fuzzMaxItems bounds the agenda items one run may process; the run stops there.
	fuzzMaxItems = 100_000
	// fuzzSameMsItems is how many agenda items one simulated millisecond may take before the run
	// counts as a livelock.
	fuzzSameMsItems = 20_000
)

// fuzzMalformed are hand-made scenarios just inside and outside the contract.
var fuzzMalformed = []string{
	``,
	`null`,
	`[]`,
	`{}`,
	`{"name": "x"}`,
	`{"name": "x", "brokers": 1, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 1}]}`,
	`{"name": "", "brokers": 1, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 1}]}`,
	`{"name": "x", "brokers": 0, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 1}]}`,
	`{"name": "x", "brokers": 1001, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 1}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 4}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "assignment": [[0, 0, 1]]}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "assignment": [[0, 3]]}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "assignment": [[]]}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}, {"name": "t", "partitions": 1, "replicationFactor": 3}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "extra": 1}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "config": {"no.such.setting": 1}}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "config": {"min.insync.replicas": "two"}}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "config": {"inter.broker.protocol.version": "9.9"}}`,
	`{"name": "x", "brokers": 3, "seed": -1, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}]}`,
	`{"name": "x", "brokers": 3, "duration": -5, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 5, "do": "kill", "broker": 0}, {"at": 4, "do": "restart", "broker": 0}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": -1, "do": "kill", "broker": 0}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "explode"}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "kill", "broker": 3}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "kill", "topic": "t"}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "produce", "topic": "u", "partition": 0}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "produce", "topic": "t", "partition": 1}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "produce", "topic": "t", "partition": 0, "acks": 2}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "produce", "topic": "t", "partition": 0, "count": 0}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "link", "from": 0, "to": 0}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "expect", "violations": ["no-such-invariant"]}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "expect", "topic": "t", "partition": 0, "replicas": {"x": {"leo": 1}}}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "expect", "topic": "t", "partition": 0, "replicas": {"0": {"lso": 1}}}]}`,
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "expect", "leader": 0}]}`,
	// Actions a run cannot apply (a broker in the wrong state): parsed, then refused by Apply.
	`{"name": "x", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}], "steps": [{"at": 1, "do": "restart", "broker": 0}, {"at": 2, "do": "kill", "broker": 1}, {"at": 3, "do": "kill", "broker": 1}]}`,
	// Every action once, with no fetch wait and network jitter.
	`{"name": "all", "brokers": 3, "seed": 7, "topics": [{"name": "t", "partitions": 2, "replicationFactor": 3}],
	  "config": {"sim.network.jitter.ms": 2, "replica.fetch.wait.max.ms": 0, "min.insync.replicas": 2},
	  "steps": [{"at": 0, "do": "produce", "topic": "t", "partition": 0, "count": 3, "acks": "all"},
	    {"at": 1, "do": "produce", "topic": "t", "partition": 1, "acks": 1},
	    {"at": 2, "do": "consume", "topic": "t", "partition": 0, "count": 2},
	    {"at": 3, "do": "link", "from": 0, "to": 1, "latencyMs": 50, "down": true},
	    {"at": 4, "do": "isolate", "broker": 2}, {"at": 5, "do": "heal", "broker": 2}, {"at": 6, "do": "heal"},
	    {"at": 7, "do": "shutdown", "broker": 1}, {"at": 900, "do": "restart", "broker": 1},
	    {"at": 1000, "do": "kill", "broker": 0, "loseUnflushed": true}, {"at": 1001, "do": "restart", "broker": 0},
	    {"at": 1002, "do": "elect", "topic": "t", "partition": 0}, {"at": 1003, "do": "elect", "topic": "t", "partition": 1, "broker": 2, "unclean": true},
	    {"at": 1004, "do": "failDisk", "broker": 2}, {"at": 1005, "do": "config", "set": {"replica.lag.time.max.ms": 100}}, {"at": 1005, "do": "caption", "text": "every action once"},
	    {"at": 1006, "do": "expect", "topic": "t", "partition": 0, "leader": 0, "leaderEpoch": 1, "isr": [0], "acked": 3,
	      "replicas": {"0": {"leo": 3, "hw": 3, "epochs": [0, 0, 0]}}, "violations": []}]}`,
	// Zero latency (with the default fetch wait; see docs/testing.md for the livelocks with none).
	`{"name": "instant", "brokers": 3, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 3}],
	  "config": {"sim.network.latency.ms": 0}, "steps": [{"at": 0, "do": "produce", "topic": "t", "partition": 0},
	    {"at": 10, "do": "consume", "topic": "t", "partition": 0}]}`,
	`{"name": "old era", "brokers": 2, "topics": [{"name": "t", "partitions": 1, "replicationFactor": 2}],
	  "config": {"inter.broker.protocol.version": "0.10.2", "unclean.leader.election.enable": true},
	  "steps": [{"at": 0, "do": "produce", "topic": "t", "partition": 0}, {"at": 10, "do": "kill", "broker": 1},
	    {"at": 20, "do": "produce", "topic": "t", "partition": 0}, {"at": 30, "do": "kill", "broker": 0},
	    {"at": 40, "do": "restart", "broker": 1}, {"at": 30000, "do": "restart", "broker": 0}], "duration": 4000}`,
}

func FuzzParseScenario(f *testing.F) {
	files, err := filepath.Glob("../scenarios/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no presets found in ../scenarios: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])                                         // cut short
		f.Add([]byte(strings.Replace(string(data), `"at"`, `"when"`, 1))) // unknown step field
		f.Add([]byte(strings.Replace(string(data), `"brokers"`, `"brokers": 2, "x"`, 1)))
	}
	for _, s := range fuzzMalformed {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a rejection without a message")
			}
			return
		}
		again, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("an accepted scenario does not marshal: %v", err)
		}
		if _, err := ParseScenario(again); err != nil {
			t.Fatalf("an accepted scenario, written back, no longer parses: %v\n%s", err, again)
		}
		if fuzzReplicas(sc) > fuzzMaxReplicas {
			return
		}
		e, err := New(sc)
		if err != nil {
			t.Fatalf("ParseScenario accepted a scenario New rejects: %v", err)
		}
		fuzzRun(t, e, sc)
	})
}

// fuzzReplicas counts the replicas a scenario's cluster holds.
func fuzzReplicas(sc *Scenario) int {
	n := 0
	for _, tp := range sc.Topics {
		if tp.Assignment != nil {
			for _, reps := range tp.Assignment {
				n += len(reps)
			}
			continue
		}
		n += tp.Partitions * tp.ReplicationFactor
	}
	return n
}

// fuzzRun applies the steps due before fuzzRunMs, as Run does (an action a broker's state refuses
// is an error, not a panic), then runs to fuzzRunMs.
func fuzzRun(t *testing.T, e *Engine, sc *Scenario) {
	for _, st := range sc.Steps {
		if st.At > fuzzRunMs {
			break
		}
		if !fuzzRunUntil(t, e, st.At) {
			return
		}
		if st.Action.Expect != nil {
			e.CheckExpect(st.Action.Expect)
			continue
		}
		_ = e.Apply(st.Action)
		e.Drain()
	}
	fuzzRunUntil(t, e, fuzzRunMs)
	partitionsDigest(e) // the read API on whatever state the fuzz reached
	e.Drain()
}

// fuzzRunUntil is RunUntil one agenda item at a time, so that a livelock in zero simulated time
// fails instead of hanging. It reports false when the run used up its budget of agenda items.
func fuzzRunUntil(t *testing.T, e *Engine, until int64) bool {
	last, same := e.Now(), 0
	for e.agenda.len() > 0 && e.agenda.peekAt() <= until {
		e.processNext()
		if e.Now() != last {
			last, same = e.Now(), 0
		}
		if same++; same > fuzzSameMsItems {
			t.Fatalf("%d agenda items processed at %d ms without time moving: a livelock", same, e.Now())
		}
		if e.Stats().Processed > fuzzMaxItems {
			return false
		}
		if e.Stats().Processed%1024 == 0 {
			e.Drain()
		}
	}
	if err := e.RunUntil(until); err != nil {
		t.Fatal(err)
	}
	e.Drain()
	return true
}

// TestZeroLatencyTimeMoves: the two ways zero network latency used to hold time still (fuzzing
// found them) now let it move. A follower answered at once with nothing new fetches again at
// most once per millisecond; a LeaderAndIsr refused by a broker that died before the controller
// noticed is re-sent after 100 ms, as Kafka's RequestSendThread backs off.
func TestZeroLatencyTimeMoves(t *testing.T) {
	for _, c := range []struct {
		name     string
		until    int64
		scenario string
	}{
		{"no fetch wait", 5_000, `{"name": "spin", "brokers": 3, "topics": [{"name": "t", "partitions": 2, "replicationFactor": 3}],
		  "config": {"sim.network.latency.ms": 0}, "steps": [{"at": 100, "do": "config", "set": {"replica.fetch.wait.max.ms": 0}},
		    {"at": 200, "do": "produce", "topic": "t", "partition": 0, "count": 3}]}`},
		// Broker 1 dies 10 ms after broker 2: when the controller acts on 2's expired session
		// (18 s), it tells 1, which is dead but not yet noticed.
		{"LeaderAndIsr to a dead broker", 30_000, `{"name": "refused", "brokers": 3, "topics": [{"name": "t", "partitions": 2, "replicationFactor": 3}],
		  "config": {"sim.network.latency.ms": 0}, "steps": [{"at": 100, "do": "kill", "broker": 2},
		    {"at": 110, "do": "kill", "broker": 1}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := ParseScenario([]byte(c.scenario))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sc.Steps {
				fuzzRunUntil(t, e, st.At)
				if err := e.Apply(st.Action); err != nil {
					t.Fatal(err)
				}
			}
			if !fuzzRunUntil(t, e, c.until) {
				t.Fatalf("the agenda item budget ran out by %d ms", e.Now())
			}
			if e.Now() != c.until {
				t.Fatalf("stopped at %d ms", e.Now())
			}
		})
	}
}
