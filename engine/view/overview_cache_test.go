package view

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// overviewOptions force an overview even on a small cluster, with one partition and one broker in
// focus and the leaders' digits.
var overviewOptions = Options{DetailLimit: 1, Leaders: true, Focus: []TP{{Topic: "t", Partition: 1}},
	FocusBrokers: []int32{1}}

// compareOverview drains e's events into o and requires o's view to equal a full walk's.
func compareOverview(t *testing.T, name string, e *engine.Engine, o *Overview, opt Options) {
	t.Helper()
	o.Observe(e, e.DrainUnnarrated())
	got, want := o.Build(e, opt), Build(e, opt)
	if !reflect.DeepEqual(got.Summary, want.Summary) {
		t.Fatalf("%s at %d ms: summary\n got %+v\nwant %+v", name, e.Now(), got.Summary, want.Summary)
	}
	if got.States != want.States || got.Leaders != want.Leaders {
		t.Fatalf("%s at %d ms: states %q leaders %q, want %q %q", name, e.Now(), got.States, got.Leaders, want.States, want.Leaders)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s at %d ms: views differ\n got %s\nwant %s", name, e.Now(), g, w)
	}
}

// TestOverviewCacheMatchesBuild plays every preset and random fault schedules, and after every
// action and every 50 ms compares the overview kept from events with a full walk (and after each
// action checks Detail.Message). It
// also requires the kept overview to walk rarely: otherwise it would pass by always walking.
func TestOverviewCacheMatchesBuild(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	builds, walks := 0, 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := engine.ParseScenario(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		e, err := engine.New(sc)
		if err != nil {
			t.Fatal(err)
		}
		opt := overviewOptions
		opt.Focus = []TP{{Topic: sc.Topics[0].Name, Partition: 0}}
		var o Overview
		for _, st := range sc.Steps {
			for e.Now()+50 < st.At {
				runFor(t, e, 50)
				compareOverview(t, file, e, &o, opt)
				builds++
			}
			if err := e.RunUntil(st.At); err != nil {
				t.Fatal(err)
			}
			if st.Action.Expect == nil {
				_ = e.Apply(st.Action) // a refused action (a timeline's) changes nothing
			}
			compareOverview(t, file, e, &o, opt)
			checkDetailMessages(t, file, e)
			builds++
		}
		runFor(t, e, 3000)
		compareOverview(t, file, e, &o, opt)
		builds++
		walks += o.Walks
	}
	for seed := range uint64(8) {
		b, w := playRandomFaults(t, seed)
		builds, walks = builds+b, walks+w
	}
	t.Logf("%d views compared, %d of them walked every partition", builds, walks)
	if walks*4 > builds {
		t.Fatalf("%d of %d views walked every partition: the kept overview is not kept", walks, builds)
	}
}

// playRandomFaults drives a 5-broker cluster with random produces, kills, restarts, isolations,
// disk failures, elections and config changes for 8 s, comparing after every action and every
// 10 ms. It returns the views compared and the walks.
func playRandomFaults(t *testing.T, seed uint64) (builds, walks int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	e := newKafkaEngine(t, 5, [][]int32{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1}, {0, 2, 4}},
		map[string]string{"min.insync.replicas": "2", "replica.lag.time.max.ms": "2000"})
	name := fmt.Sprintf("random faults, seed %d", seed)
	var o Overview
	for e.Now() < 8_000 {
		for range 1 + rng.IntN(40) {
			runFor(t, e, 10)
			compareOverview(t, name, e, &o, overviewOptions)
			builds++
		}
		b := rng.IntN(5)
		var action string
		switch r := rng.IntN(20); {
		case r < 10:
			action = fmt.Sprintf(`{"do":"produce","topic":"t","partition":%d,"count":%d,"acks":%d}`,
				rng.IntN(6), 1+rng.IntN(5), []int{-1, 1, 0}[rng.IntN(3)])
		case r < 12:
			action = fmt.Sprintf(`{"do":"kill","broker":%d,"loseUnflushed":%v}`, b, rng.IntN(2) == 0)
		case r < 15:
			action = fmt.Sprintf(`{"do":"restart","broker":%d}`, b)
		case r < 16:
			action = fmt.Sprintf(`{"do":"isolate","broker":%d}`, b)
		case r < 17:
			action = `{"do":"heal"}`
		case r < 18:
			action = fmt.Sprintf(`{"do":"elect","topic":"t","partition":%d,"unclean":true}`, rng.IntN(6))
		case r < 19:
			action = fmt.Sprintf(`{"do":"config","set":{"min.insync.replicas":%d}}`, 1+rng.IntN(3))
		default:
			action = fmt.Sprintf(`{"do":"failDisk","broker":%d}`, b)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(action), &fields); err != nil {
			t.Fatal(err)
		}
		a, err := engine.ParseAction(fields)
		if err != nil {
			t.Fatalf("%s: %v", action, err)
		}
		_ = e.Apply(a) // refused (the broker is already down…): nothing changed
		compareOverview(t, name, e, &o, overviewOptions)
		runFor(t, e, 3)
		checkDetailMessages(t, name, e)
		builds++
	}
	return builds, o.Walks
}

// checkDetailMessages requires Detail.Message, which skips a Fetch or OffsetsForLeaderEpoch
// between brokers that host none of the focused partitions without reading it, to agree with
// reading every message in flight and parked, for a focus on each partition in turn.
func checkDetailMessages(t *testing.T, name string, e *engine.Engine) {
	t.Helper()
	msgs := e.InFlight()
	fetches, produces := e.Purgatory()
	for _, pk := range append(fetches, produces...) {
		msgs = append(msgs, pk.Request)
	}
	for pid := range int32(e.PartitionCount()) {
		d := NewDetail(e, nil, []TP{e.Partition(pid).TP()})
		for _, m := range msgs {
			if got, want := d.Message(m), carries(m, d.Partition); got != want {
				t.Fatalf("%s at %d ms: focus on partition %d: Detail.Message(%s %d→%d) = %v, reading it says %v",
					name, e.Now(), pid, m.Type, m.From, m.To, got, want)
			}
		}
	}
}
