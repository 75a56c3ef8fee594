package view

import (
	"slices"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// TestOverviewTallies: the overview's counters follow what happens. Traffic runs exactly between
// each follower and its leader; a produce shows as HW lag until the followers catch up, then as
// records fetched; a kill shrinks ISRs and moves leaders, a restart expands them again.
func TestOverviewTallies(t *testing.T) {
	// t-0 on 0,1,2 and t-1 on 1,2,3: follower → leader pairs 1→0, 2→0, 2→1, 3→1.
	e := newKafkaEngine(t, 4, [][]int32{{0, 1, 2}, {1, 2, 3}}, nil)
	runFor(t, e, 1200)
	tr := traffic(e.Tallies().Flows)
	var pairs []string
	for i := range tr.From {
		pairs = append(pairs, string(rune('0'+tr.From[i]))+">"+string(rune('0'+tr.To[i])))
		if tr.Fetches[i] < 2 {
			t.Errorf("pair %s: %d fetches in 1.2 s, want a fetch per 500 ms at least", pairs[i], tr.Fetches[i])
		}
	}
	if want := []string{"1>0", "2>0", "2>1", "3>1"}; !slices.Equal(pairs, want) {
		t.Fatalf("traffic pairs %v, want %v", pairs, want)
	}

	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":5}`)
	runFor(t, e, 1) // the produce arrives and is appended; no follower has fetched it yet
	v := Build(e, Options{})
	if v.Summary.HWLag != 5 || v.Summary.MaxHWLag != 5 || v.Summary.Lagging != 1 {
		t.Fatalf("just after the append: HW lag %d, max %d, lagging %d; want 5, 5, 1", v.Summary.HWLag, v.Summary.MaxHWLag, v.Summary.Lagging)
	}
	runFor(t, e, 100)
	v = Build(e, Options{})
	if v.Summary.HWLag != 0 {
		t.Fatalf("after the followers fetched: HW lag %d, want 0", v.Summary.HWLag)
	}
	tr = traffic(e.Tallies().Flows)
	for i := range tr.From {
		want := int64(0)
		if tr.To[i] == 0 {
			want = 5 // both followers of t-0 fetched the five records
		}
		if tr.Records[i] != want {
			t.Errorf("%d→%d: %d records fetched, want %d", tr.From[i], tr.To[i], tr.Records[i], want)
		}
	}

	apply(t, e, `{"do":"kill","broker":2}`)
	runFor(t, e, 40_000) // past replica.lag.time.max.ms: both leaders drop broker 2
	v = Build(e, Options{})
	if v.Summary.ISRShrinks != 2 || v.Summary.ISRExpands != 0 {
		t.Fatalf("after the kill: %d shrinks, %d expands; want 2, 0", v.Summary.ISRShrinks, v.Summary.ISRExpands)
	}
	apply(t, e, `{"do":"kill","broker":0}`) // the controller too: failover after the ZooKeeper session times out
	runFor(t, e, 25_000)
	v = Build(e, Options{})
	// Two leader changes for t-0: the new controller first takes broker 0's replica offline
	// (leader 0 → none), then elects broker 1 (ReplicaStateMachine.startup before
	// PartitionStateMachine.startup, 2.3+).
	if v.Summary.LeaderChanges != 2 || v.Brokers[1].Leaders != 2 {
		t.Fatalf("after killing leader 0: %d leader changes, broker 1 leads %d; want 2, 2", v.Summary.LeaderChanges, v.Brokers[1].Leaders)
	}
	if v := Build(e, Options{DetailLimit: 1, Leaders: true}); v.Leaders != "0101" {
		t.Fatalf("leaders in the overview: %q, want \"0101\" (broker 1 leads both)", v.Leaders)
	}
	if v := Build(e, Options{DetailLimit: 1}); v.Leaders != "" {
		t.Fatalf("leaders not asked for, but sent: %q", v.Leaders)
	}
	apply(t, e, `{"do":"restart","broker":2}`)
	runFor(t, e, 10_000)
	v = Build(e, Options{})
	if v.Summary.ISRExpands < 2 {
		t.Fatalf("after restarting broker 2: %d expands, want 2 (it rejoins both ISRs)", v.Summary.ISRExpands)
	}
}

// TestOverviewDetail: an overview keeps in full what concerns a focused partition or broker, cut
// to the focused partitions, and leaves the rest to counts.
func TestOverviewDetail(t *testing.T) {
	// t-0..t-2 led by broker 0; t-3 led by broker 2.
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {2, 0, 1}}, nil)
	runFor(t, e, 5)
	var fetch *engine.Message
	for _, ev := range e.Drain() {
		if ev.Type == engine.MsgFetch && ev.Message.From == 1 && ev.Message.To == 0 {
			fetch = ev.Message
		}
	}
	if fetch == nil || len(fetch.Fetch.Partitions) != 3 {
		t.Fatalf("no fetch from broker 1 with 3 partitions: %+v", fetch)
	}
	d := NewDetail(e, nil, []TP{{Topic: "t", Partition: 1}})
	ev, ok := d.Event(engine.Event{Type: engine.MsgFetch, Message: fetch, Text: engine.DescribeMessage(fetch)})
	if !ok || len(ev.Message.Fetch.Partitions) != 1 || ev.Message.Fetch.Partitions[0].Partition != 1 || ev.Message.Omitted != 2 {
		t.Fatalf("focused fetch: shown %v, %+v", ok, ev.Message)
	}
	if !strings.Contains(ev.Text, "t-1@0") || strings.Contains(ev.Text, "t-0@") || !strings.HasSuffix(ev.Text, "(and 2 more partitions)") {
		t.Fatalf("focused fetch text: %q", ev.Text)
	}
	if len(fetch.Fetch.Partitions) != 3 {
		t.Fatal("cutting the event changed the engine's message")
	}
	other := NewDetail(e, nil, []TP{{Topic: "t", Partition: 3}})
	if _, ok := other.Event(engine.Event{Type: engine.MsgFetch, Message: fetch}); ok {
		t.Fatal("a fetch without a focused partition or broker is shown")
	}
	if _, ok := other.Event(engine.Event{Type: engine.EvISRChange, Topic: "t", Partition: engine.Some[int32](0)}); ok {
		t.Fatal("an ISR change of an unfocused partition is shown")
	}
	if _, ok := other.Event(engine.Event{Type: engine.EvBrokerDown, Broker: engine.Some[int32](2)}); !ok {
		t.Fatal("a broker going down is not shown")
	}
	byBroker := NewDetail(e, []int32{1}, nil)
	ev, ok = byBroker.Event(engine.Event{Type: engine.MsgFetch, Message: fetch})
	if !ok || len(ev.Message.Fetch.Partitions) != 3 {
		t.Fatalf("a fetch from a focused broker: shown %v, %d partitions (want all 3: none is focused)", ok, len(ev.Message.Fetch.Partitions))
	}
	if _, ok := byBroker.Event(engine.Event{Type: engine.EvFetcher, Broker: engine.Some[int32](2)}); ok {
		t.Fatal("a fetcher change on an unfocused broker is shown")
	}
}

// TestOverviewWithoutFocusListsNoFetcherPartitions: an overview with nothing focused counts each
// fetcher's partitions and lists none (it listed all of them, 212 MB for a million partitions).
func TestOverviewWithoutFocusListsNoFetcherPartitions(t *testing.T) {
	var assign [][]int32
	for p := range 100 {
		assign = append(assign, []int32{int32(p % 3), int32((p + 1) % 3), int32((p + 2) % 3)})
	}
	e := newKafkaEngine(t, 3, assign, nil)
	runFor(t, e, 50)
	v := Build(e, Options{DetailLimit: 10})
	if v.States == "" {
		t.Fatal("not an overview")
	}
	counted := 0
	for _, b := range v.Brokers {
		for _, f := range b.Fetchers {
			counted += f.Count
			if len(f.Partitions) != 0 || f.InFlight != 0 {
				t.Fatalf("broker %d's fetcher from %d lists %d partitions (in flight %d) with nothing focused", b.ID, f.Leader, len(f.Partitions), f.InFlight)
			}
		}
	}
	if counted != 200 {
		t.Fatalf("fetchers count %d partitions; want 200 (two followers each)", counted)
	}
	focused := Build(e, Options{DetailLimit: 10, Focus: []TP{{Topic: "t", Partition: 4}}})
	listed := 0
	for _, b := range focused.Brokers {
		for _, f := range b.Fetchers {
			listed += len(f.Partitions)
		}
	}
	if listed != 2 {
		t.Fatalf("with t-4 focused the fetchers list %d partitions; want its 2 followers", listed)
	}
}
