package view

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// pendingRun builds a 3-broker, one-partition cluster and applies actions at their times.
type pendingRun struct {
	t   *testing.T
	e   *engine.Engine
	evs []engine.Event
}

func newPendingRun(t *testing.T) *pendingRun {
	sc, err := engine.ParseScenario([]byte(`{"name":"p","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return &pendingRun{t: t, e: e}
}

func (r *pendingRun) at(ms int64, actions ...string) {
	r.t.Helper()
	if err := r.e.RunUntil(ms); err != nil {
		r.t.Fatal(err)
	}
	for _, a := range actions {
		st, err := engine.ParseStep([]byte(fmt.Sprintf(`{"at":%d,%s}`, ms, a)))
		if err != nil {
			r.t.Fatal(err)
		}
		if err := r.e.Apply(st.Action); err != nil {
			r.t.Fatal(err)
		}
	}
	r.evs = append(r.evs, r.e.Drain()...)
}

// find returns the view's pending deadline of a kind for a broker.
func (r *pendingRun) find(kind string, broker int32) (Pending, bool) {
	pend := Build(r.e, Options{}).Pending
	if len(pend) > maxPending || !slices.IsSortedFunc(pend, func(a, b Pending) int { return int(a.At - b.At) }) {
		r.t.Fatalf("pending: %d entries, sorted %v", len(pend), slices.IsSortedFunc(pend, func(a, b Pending) int { return int(a.At - b.At) }))
	}
	for _, p := range pend {
		if p.Kind == kind && p.Broker == engine.Some(broker) {
			return p, true
		}
	}
	return Pending{}, false
}

// firstEvent returns the time of the first event of a type on a broker at or after from.
func (r *pendingRun) firstEvent(typ string, broker int32, from int64) int64 {
	for _, ev := range r.evs {
		if ev.Type == typ && ev.T >= from && ev.Broker == engine.Some(broker) {
			return ev.T
		}
	}
	return -1
}

// TestPendingDeadlinesComeTrue: the deadlines a view announces happen when it says. A killed
// broker's ZooKeeper session expires then; a follower cut off from its leader while records
// arrive leaves the ISR then (replica.lag.time.max.ms, at the leader's next shrink check); a
// caught-up follower's Fetch waits parked on the leader.
func TestPendingDeadlinesComeTrue(t *testing.T) {
	r := newPendingRun(t)
	r.at(300)
	if p, ok := r.find(PendFetchParked, 0); !ok || p.Topic != "t" || !p.Partition.Set {
		t.Errorf("no parked Fetch on leader 0 at 300: %+v", Build(r.e, Options{}).Pending)
	}
	if _, ok := r.find(PendISRLag, 2); ok {
		t.Error("a caught-up follower is announced as leaving the ISR")
	}
	// Cut broker 2 off from leader 0 (both ways; ZooKeeper stays), then write.
	r.at(1000, `"do":"link","from":2,"to":0,"down":true`, `"do":"link","from":0,"to":2,"down":true`,
		`"do":"produce","topic":"t","partition":0,"acks":1`)
	r.at(1200)
	if _, ok := r.find(PendISRLag, 2); ok {
		t.Error("a follower behind for 200 ms is announced as leaving the ISR (it may still catch up)")
	}
	r.at(5000)
	lag, ok := r.find(PendISRLag, 2)
	if !ok {
		t.Fatalf("no isr-lag for follower 2 at 5 s: %+v", Build(r.e, Options{}).Pending)
	}
	if _, ok := r.find(PendISRLag, 1); ok {
		t.Error("follower 1, which keeps fetching, is announced as leaving the ISR")
	}
	r.at(lag.At - 1)
	if got := r.firstEvent(engine.EvISRPending, 0, 0); got >= 0 {
		t.Fatalf("the ISR shrank at %d, before the announced %d", got, lag.At)
	}
	r.at(lag.At)
	if got := r.firstEvent(engine.EvISRPending, 0, 0); got != lag.At {
		t.Fatalf("isr-lag announced %d (%s); leader 0 asked to shrink at %d", lag.At, lag.Text, got)
	}
	// Kill broker 1: its session expires when announced.
	kill := lag.At + 1000
	r.at(kill, `"do":"kill","broker":1`)
	exp, ok := r.find(PendZKSessionExpiry, 1)
	if !ok || exp.At != kill+r.e.Config().ZookeeperSessionTimeoutMs {
		t.Fatalf("session expiry of broker 1: %+v %v", exp, ok)
	}
	r.at(exp.At)
	if got := r.firstEvent(engine.EvZKSession, 1, kill); got != exp.At {
		t.Fatalf("session expiry announced for %d, happened at %d", exp.At, got)
	}
	if _, ok := r.find(PendZKSessionExpiry, 1); ok {
		t.Error("an expired session is still pending")
	}
}

// TestPendingOverview: an overview lists the deadlines of focused partitions and brokers and the
// cluster-wide ones, not the parked fetches of the thousand others.
func TestPendingOverview(t *testing.T) {
	sc, err := engine.ParseScenario([]byte(`{"name":"big","brokers":6,"topics":[{"name":"t","partitions":300,"replicationFactor":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(300); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(engine.Action{Do: "kill", Broker: ptr(int32(4))}); err != nil {
		t.Fatal(err)
	}
	all := Build(e, Options{DetailLimit: 1000}).Pending
	focus := Build(e, Options{Focus: []TP{{Topic: "t", Partition: 7}}}).Pending
	if len(all) != maxPending || len(focus) == 0 || len(focus) >= len(all) && slices.Equal(focus, all) {
		t.Fatalf("detail %d deadlines, overview %d", len(all), len(focus))
	}
	for _, p := range focus {
		switch {
		case p.Kind == PendZKSessionExpiry || p.Kind == PendLeaderRebalance:
		case p.Topic == "t" && p.Partition == engine.Some[int32](7):
			// a parked Fetch carrying t-7 among others is named for t-7
		default:
			t.Errorf("overview focused on t-7 lists %+v", p)
		}
	}
	if !slices.ContainsFunc(focus, func(p Pending) bool { return p.Kind == PendZKSessionExpiry && p.Broker == engine.Some[int32](4) }) {
		t.Errorf("the overview lacks broker 4's session expiry: %+v", focus)
	}
}

// TestPendingConsumerFetchParked: a consume with nothing below the HW waits in the leader's
// purgatory (DelayedFetch, fetch.max.wait.ms 500: audit 12), and the view names it the
// consumer's, with the consumer's setting and its deadline.
func TestPendingConsumerFetchParked(t *testing.T) {
	r := newPendingRun(t)
	r.at(300, `"do":"consume","topic":"t","partition":0`)
	r.at(302)
	for _, p := range Build(r.e, Options{}).Pending {
		if p.Kind == PendFetchParked && p.At == 801 {
			if want := "the consumer's Fetch of t-0 waits on leader 0 for records below the high watermark (fetch.max.wait.ms = 500 ms)"; p.Text != want {
				t.Fatalf("parked consumer Fetch: %q, want %q", p.Text, want)
			}
			return
		}
	}
	t.Fatalf("no consumer Fetch parked until 801: %+v", Build(r.e, Options{}).Pending)
}

// TestPendingLevelFollowerLeavesBefore21: before 2.1 (KAFKA-7152) a follower at the leader's log
// end that stops fetching leaves the ISR after replica.lag.time.max.ms all the same
// (Partition.getOutOfSyncReplicas, 0.10.2.2, looks only at lastCaughtUpTimeMs), so the view
// announces it with nothing produced; from 2.1 such a follower stays and nothing is announced.
func TestPendingLevelFollowerLeavesBefore21(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		sc, err := engine.ParseScenario([]byte(`{"name":"p","brokers":3,"config":{"inter.broker.protocol.version":"` + era +
			`"},"topics":[{"name":"t","partitions":1,"replicationFactor":3}]}`))
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(sc)
		if err != nil {
			t.Fatal(err)
		}
		r := &pendingRun{t: t, e: e}
		r.at(1000, `"do":"link","from":2,"to":0,"down":true`, `"do":"link","from":0,"to":2,"down":true`)
		r.at(5000)
		lag, ok := r.find(PendISRLag, 2)
		if era == "2.1" || era == "3.7" {
			if ok {
				t.Errorf("%s: a follower at the log end is announced as leaving the ISR: %+v", era, lag)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: no isr-lag for silent follower 2 at 5 s: %+v", era, Build(r.e, Options{}).Pending)
		}
		// Before 2.1 the leader writes the shrunk ISR to ZooKeeper itself (no AlterPartition).
		r.at(lag.At - 1)
		if got := r.firstEvent(engine.EvISRChange, 0, 0); got >= 0 {
			t.Fatalf("%s: the ISR shrank at %d, before the announced %d", era, got, lag.At)
		}
		r.at(lag.At)
		if got := r.firstEvent(engine.EvISRChange, 0, 0); got != lag.At {
			t.Fatalf("%s: isr-lag announced %d (%s); leader 0 shrank at %d", era, lag.At, lag.Text, got)
		}
	}
}

// TestPendingProducerRetryReason: a batch that was never sent waits at the head of its
// partition's deque for a live leader (or a free connection) and looks again every
// retry.backoff.ms; one refused by the leader backs off before it is sent again. The view says
// which.
func TestPendingProducerRetryReason(t *testing.T) {
	retry := func(r *pendingRun) (Pending, bool) {
		for _, p := range Build(r.e, Options{}).Pending {
			if p.Kind == PendRetry && p.Topic == "t" {
				return p, true
			}
		}
		return Pending{}, false
	}
	r := newPendingRun(t)
	r.at(1000, `"do":"kill","broker":0`)
	r.at(1100, `"do":"produce","topic":"t","partition":0`)
	r.at(1150)
	if p, ok := retry(r); !ok || !strings.Contains(p.Text, "waits for a live leader") {
		t.Errorf("a batch for a dead leader, never sent: %+v %v", p, ok)
	}

	sc, err := engine.ParseScenario([]byte(`{"name":"p","brokers":3,"config":{"inter.broker.protocol.version":"2.1","min.insync.replicas":3},` +
		`"topics":[{"name":"t","partitions":1,"replicationFactor":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	r = &pendingRun{t: t, e: e}
	r.at(1000, `"do":"kill","broker":2`)
	r.at(10000, `"do":"produce","topic":"t","partition":0`) // the ISR is [0 1]: NOT_ENOUGH_REPLICAS
	r.at(10050)
	if p, ok := retry(r); !ok || !strings.Contains(p.Text, "again (after retry.backoff.ms = 100 ms") {
		t.Errorf("a batch refused NOT_ENOUGH_REPLICAS, in its backoff: %+v %v", p, ok)
	}
}
