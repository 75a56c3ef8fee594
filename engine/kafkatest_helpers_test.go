package engine

import (
	"encoding/json"
	"fmt"
	"github.com/highwater-sim/highwater/engine/protocol"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Shared builders for the ports of Kafka's own tests: kafka_fetcher_test.go,
// kafka_partition_test.go, kafka_replicamanager_test.go and kafka_cluster_test.go.
//
// Unit-style ports build an engine from a tiny scenario, then quiesce it (no timers, no fetchers)
// and set logs, epochs and fetch states directly, as Kafka's tests do with their mocks. Time then
// moves only through RunUntil, and only the messages a test causes fly.

// kafkaT0 is the time unit-style ports start at, well past replica.lag.time.max.ms, as Kafka's
// tests run on a MockTime far from 0.
const kafkaT0 = 1_000_000

// ktTopic is the topic every port uses.
const ktTopic = "t"

// newKafkaEngine builds a cluster of n brokers with topic "t" assigned as given, and the config
// given as name → JSON value.
func newKafkaEngine(t testing.TB, n int, assignment [][]int32, cfg map[string]string) *Engine {
	t.Helper()
	sc := &Scenario{Name: t.Name(), Seed: 1, Brokers: n,
		Topics: []Topic{{Name: ktTopic, Assignment: assignment}}, Config: map[string]json.RawMessage{}}
	for k, v := range cfg {
		sc.Config[k] = json.RawMessage(v)
	}
	e, err := New(sc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// quiesce drops every timer and fetcher, then moves the clock to kafkaT0: the test drives
// everything from here.
func quiesce(t testing.TB, e *Engine) {
	t.Helper()
	e.agenda = agenda{}
	for _, b := range e.brokers {
		*b.fetchers = nil
	}
	if err := e.RunUntil(kafkaT0); err != nil {
		t.Fatal(err)
	}
}

// newUnitEngine is newKafkaEngine then quiesce; it returns the engine and partition t-0.
func newUnitEngine(t testing.TB, n int, replicas []int32, cfg map[string]string) (*Engine, *partition) {
	t.Helper()
	e := newKafkaEngine(t, n, [][]int32{replicas}, cfg)
	quiesce(t, e)
	return e, e.partitionOf(ktTopic, 0)
}

// parseLog reads a log literal: space-separated batches "offset/eEPOCH" or "first-last/eEPOCH".
// Offsets must be contiguous; the first one is the log start.
func parseLog(t testing.TB, lit string) (int64, []commitlog.Record) {
	t.Helper()
	var recs []commitlog.Record
	start, next := int64(-1), int64(-1)
	for _, f := range strings.Fields(lit) {
		var first, last int64
		var epoch int32
		if _, err := fmt.Sscanf(f, "%d-%d/e%d", &first, &last, &epoch); err != nil {
			if _, err := fmt.Sscanf(f, "%d/e%d", &first, &epoch); err != nil {
				t.Fatalf("bad log literal %q in %q", f, lit)
			}
			last = first
		}
		if start < 0 {
			start, next = first, first
		}
		if first != next || last < first {
			t.Fatalf("log literal %q: batch %q does not follow offset %d", lit, f, next-1)
		}
		for o := first; o <= last; o++ {
			// Equal literals give equal records, so logs of different replicas compare.
			recs = append(recs, commitlog.Record{ID: 1_000_000 + o*1000 + int64(epoch), Epoch: epoch})
		}
		next = last + 1
	}
	return max(start, 0), recs
}

// logOf builds a log from a literal, as a follower appending those batches would; its HW is
// the log start.
func logOf(t testing.TB, lit string) commitlog.Log {
	t.Helper()
	var l commitlog.Log
	start, recs := parseLog(t, lit)
	if start > 0 {
		l.TruncateFullyAndStartAt(start)
	}
	l.AppendAsFollower(recs)
	return l
}

// logString renders a log as a literal, runs of one epoch as ranges.
func logString(l *commitlog.Log) string {
	var parts []string
	recs := l.Records()
	o := l.LogStartOffset()
	for i := 0; i < len(recs); {
		j := i
		for j+1 < len(recs) && recs[j+1].Epoch == recs[i].Epoch {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprintf("%d/e%d", o+int64(i), recs[i].Epoch))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d/e%d", o+int64(i), o+int64(j), recs[i].Epoch))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// cacheString renders an epoch cache as "(epoch,start) ...".
func cacheString(c *commitlog.EpochCache) string {
	parts := make([]string, 0, c.Len())
	for _, en := range c.Entries() {
		parts = append(parts, fmt.Sprintf("(%d,%d)", en.Epoch, en.StartOffset))
	}
	return strings.Join(parts, " ")
}

// ktLead makes broker leader of p as a LeaderAndIsr would (Partition.makeLeader), after writing
// the same state to the controller so that AlterPartition round trips succeed.
func ktLead(e *Engine, p *partition, leader, leaderEpoch int32, isr []int32, partitionEpoch int32) {
	e.ctrl.SetStateForTest(p.pid, leader, leaderEpoch, isr, partitionEpoch)
	e.makeLeader(e.brokers[leader], e.replicaOn(p.pid, leader), ktState(e, p, leader, leaderEpoch, isr, partitionEpoch))
}

// ktFollow makes broker a follower of leader (Partition.makeFollower only: no fetcher change).
func ktFollow(e *Engine, p *partition, broker, leader, leaderEpoch int32, partitionEpoch int32) bool {
	return e.makeFollower(e.brokers[broker], e.replicaOn(p.pid, broker), ktState(e, p, leader, leaderEpoch, nil, partitionEpoch))
}

func ktState(e *Engine, p *partition, leader, leaderEpoch int32, isr []int32, partitionEpoch int32) LeaderAndIsrState {
	return LeaderAndIsrState{TP: p.tp(), Leader: leader, LeaderEpoch: leaderEpoch, ISR: protocol.SortedCopy(isr),
		PartitionEpoch: partitionEpoch, Replicas: e.ctrl.Assignment(p.pid)}
}

// appendLeader appends n records on the leader replica r in its epoch, then tries to raise the
// HW (Partition.appendRecordsToLeader).
func appendLeader(e *Engine, r *replica, n int) {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = e.clients.NextRecordID()
	}
	r.Log().AppendAsLeader(r.LeaderEpoch(), ids)
	r.SessionsChanged()
	if b := e.brokers[r.Broker()]; b.rm.MaybeIncrementLeaderHW(b.Broker, r.Pid(), r, -1) {
		b.rm.CompleteDelayedProduces(b.Broker, r.Pid(), r)
	}
}

// seedLog appends n records at epoch on a replica that is not leader yet (PartitionTest.seedLogData).
func seedLog(e *Engine, r *replica, n int, epoch int32) {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = e.clients.NextRecordID()
	}
	r.Log().AppendAsLeader(epoch, ids)
}

// followerFetch is PartitionTest.fetchFollower: follower fetches p from its leader at offset with
// lastFetchedEpoch (-1 for none), in the leader's current epoch, at the current time.
func followerFetch(e *Engine, p *partition, follower int32, offset int64, lastFetchedEpoch int32) FetchPartitionData {
	r := e.replicaOn(p.pid, e.ctrl.Leader(p.pid))
	req := &FetchRequest{ReplicaID: follower, BrokerEpoch: e.brokers[follower].brokerEpoch, MinBytes: 1}
	fp := FetchPartition{TP: p.tp(), FetchOffset: offset, LogStartOffset: 0, CurrentLeaderEpoch: r.LeaderEpoch(),
		LastFetchedEpoch: lastFetchedEpoch}
	d, _ := e.readPartition(r, req, &fp, true)
	return d
}

// runFor lets the engine run for ms of simulated time.
func runFor(t testing.TB, e *Engine, ms int64) {
	t.Helper()
	if err := e.RunUntil(e.now + ms); err != nil {
		t.Fatal(err)
	}
}

// fetcherOfPartition returns broker b's fetcher holding p, or nil.
func fetcherOfPartition(b *broker, p *partition) *fetcher {
	for _, f := range *b.fetchers {
		if f.State(p.pid) != nil {
			return f
		}
	}
	return nil
}

// doWorkOnce is one turn of Kafka's AbstractFetcherThread.doWork for fetcher f: maybeTruncate
// (one OffsetsForLeaderEpoch round, if any partition is Truncating), then maybeFetch (one Fetch
// round, with the ListOffsets of an OFFSET_OUT_OF_RANGE). The engine's thread loops on by
// itself; this runs the agenda until that much has been answered. If every partition is
// delayed, it first waits for the backoff to pass.
func doWorkOnce(t testing.TB, e *Engine, b *broker, f *fetcher) {
	t.Helper()
	e.doWork(b, f)
	next := func() {
		t.Helper()
		if e.agenda.len() == 0 {
			t.Fatalf("fetcher %d→%d: nothing left to run (partitions: %+v)", f.Owner(), f.Leader(), *f)
		}
		e.processNext()
	}
	for f.InFlight() == 0 {
		next()
	}
	for {
		id := f.InFlight()
		typ := e.pending.get(id).Type
		for e.pending.get(id) != nil {
			next()
		}
		then := ""
		if f.InFlight() != 0 && e.pending.get(f.InFlight()) != nil {
			then = e.pending.get(f.InFlight()).Type
		}
		switch {
		case typ == MsgOffsetsForEpoch && then == MsgFetch, typ == MsgFetch && then == MsgListOffsets:
			continue
		default:
			return
		}
	}
}

// eventsOf returns the events of type typ in evs that pass keep (nil: all).
func eventsOf(evs []Event, typ string, keep func(Event) bool) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Type == typ && (keep == nil || keep(ev)) {
			out = append(out, ev)
		}
	}
	return out
}

// onBroker keeps events that happened on broker b (or were sent by it).
func onBroker(b int32) func(Event) bool {
	return func(ev Event) bool {
		if ev.Message != nil {
			return ev.Message.From == b
		}
		return ev.Broker.Set && ev.Broker.V == b
	}
}

// truncations returns the offsets broker b truncated p to, in order.
func truncations(evs []Event, b int32, p *partition) []int64 {
	var out []int64
	for _, ev := range eventsOf(evs, EvTruncate, onBroker(b)) {
		if ev.Partition.Set && ev.Partition.V == p.index && ev.Topic == p.topic {
			out = append(out, ev.To.V)
		}
	}
	return out
}

// readPartition is Partition.fetchRecords on replica r, through its broker's replica manager
// (brk.ReplicaManager.ReadPartition), as Kafka's PartitionTest reads a leader's partition.
func (e *Engine) readPartition(r *replica, req *FetchRequest, fp *FetchPartition, update bool) (FetchPartitionData, int64) {
	b := e.brokers[r.Broker()]
	return b.rm.ReadPartition(b.Broker, r.Pid(), r, req, fp, update)
}
