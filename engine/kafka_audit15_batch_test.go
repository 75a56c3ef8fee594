package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Audit 15, a follower's fetch from inside one of the leader's record batches (message format
// v2, 0.11.0 on), against each era's Kafka source (tags 0.11.0.2, 2.1.1, 3.7.0). The grader file
// b01 (testdata/grader) plays the 0.11.0 case through the CLI; engine/broker's
// fetcher_append_test.go drives each era's rule on one thread.

// TestAudit15FollowerReadStartsAtBatch: the leader's read for a follower's Fetch at an offset
// inside a batch returns that whole batch, from its first record: LogSegment.read's
// translateOffset (FileRecords.searchForOffsetWithSize: the first batch whose lastOffset is at or
// past the offset) gives the position the read starts at (0.11.0.2, 2.1.1, 3.7.0). The engine
// read from the fetch offset, handing the follower the batch's tail as if it were a batch.
func TestAudit15FollowerReadStartsAtBatch(t *testing.T) {
	for _, era := range []string{"0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e, p := newUnitEngine(t, 2, []int32{0, 1}, map[string]string{"inter.broker.protocol.version": `"` + era + `"`})
			r := e.replicaOn(p.pid, 0)
			ids := make([]int64, 5)
			for i := range ids {
				ids[i] = e.clients.NextRecordID()
			}
			r.Log().AppendBatchAsLeader(r.LeaderEpoch(), ids, true)
			d := followerFetch(e, p, 1, 2, r.LeaderEpoch())
			if d.DivergingEpoch != nil || d.Error != ErrNone {
				t.Fatalf("answer %+v", d)
			}
			if d.RecordsBefore != 2 || len(d.Records) != 5 || d.Records[0].ID != ids[0] {
				t.Errorf("a fetch at 2 inside the batch 0..4 got %d records from %d below the offset (first id %v), want the 5 from offset 0",
					len(d.Records), d.RecordsBefore, d.Records)
			}
			// At a batch's start the read starts there.
			if d := followerFetch(e, p, 1, 5, r.LeaderEpoch()); d.RecordsBefore != 0 || len(d.Records) != 0 {
				t.Errorf("a fetch at the LEO got %+v", d)
			}
		})
	}
}

// TestAudit15FetchInsideBatchKillsFetcherThread011 is grader b01: broker 1's fetch of t-0 at 16,
// inside broker 0's batch 11..20, gets the batch from 11; Log.append (assignOffsets false)
// throws IllegalArgumentException "Out of order offsets" (0.11.0.2: firstOffset 11 <
// nextOffsetMetadata 16), AbstractFetcherThread.processFetchRequest rethrows it as a
// KafkaException, and ShutdownableThread.run returns: the thread is dead, stays in
// AbstractFetcherManager.fetcherThreadMap, and its other partition, t-1, is never fetched again,
// so leader 0's isr-expiration task drops broker 1 from t-1's ISR after replica.lag.time.max.ms
// (Partition.getOutOfSyncReplicas). The engine appended 11..20 at 16 and went on fetching.
func TestAudit15FetchInsideBatchKillsFetcherThread011(t *testing.T) {
	src, err := os.ReadFile("testdata/grader/b01-fetch-inside-batch-kills-fetcher-0.11.0.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(src)
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	e, res, err := Run(sc, func(b []Event) { evs = append(evs, b...) })
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("expectations: %v", res.Failures)
	}
	var died *Event
	for i := range evs {
		if evs[i].Type == EvFetcher && strings.Contains(evs[i].Text, "died") {
			died = &evs[i]
		}
	}
	if died == nil || died.T < 39500 || !strings.Contains(died.Text, "broker 1's fetcher 0 for leader broker 0 died on t-0") ||
		!strings.Contains(died.Text, "from offset 11") || !strings.Contains(died.Text, "log end offset 16") {
		t.Fatalf("no FetcherDied event for broker 1's thread: %+v", died)
	}
	fs := e.Fetchers(1)
	if len(fs) != 1 || !fs[0].Dead() || fs[0].Leader() != 0 || fs[0].Len() != 2 {
		t.Fatalf("broker 1's fetchers: %d, want its one dead thread to leader 0, still holding both partitions", len(fs))
	}
	for _, ev := range evs {
		if ev.T > died.T && ev.Type == MsgFetch && ev.Message != nil && ev.Message.From == 1 {
			t.Fatalf("broker 1 fetched after its thread died: %s at %d", ev.Text, ev.T)
		}
	}
	t1 := e.partitionOf("t", 1)
	shrunk := false
	for _, ev := range evs {
		if ev.T > died.T && ev.Type == EvISRChange && ev.Partition == Some(t1.pid) && strings.Contains(ev.Text, "[0 1] → [0]") {
			shrunk = true
		}
	}
	if !shrunk {
		t.Error("leader 0 never dropped broker 1 from t-1's ISR")
	}
}

// TestAudit15ProcessingErrorRuleByEra: before 2.3 an error while a fetched partition's data is
// processed ends the fetcher thread (processFetchRequest's `case e: Throwable => throw new
// KafkaException`, 0.10.2.2, 0.11.0.2, 2.1.1); from 2.3 (KIP-461, KAFKA-8346, 414852c7017) it
// marks that partition failed (3.7.0 markPartitionFailed). From 2.1 (KAFKA-6975, 37a4d5ea46b) an
// empty log at its log start takes a batch starting below it (Partition
// .appendRecordsToFollowerOrFutureReplica).
func TestAudit15ProcessingErrorRuleByEra(t *testing.T) {
	for _, c := range []struct {
		era              string
		kills, fromStart bool
	}{{"0.10.2", true, false}, {"0.11.0", true, false}, {"2.1", true, true}, {"3.7", false, true}} {
		e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, map[string]string{"inter.broker.protocol.version": `"` + c.era + `"`})
		if r := e.rules.Fetcher; r.ErrorKillsThread != c.kills || r.AppendFromLogStart != c.fromStart {
			t.Errorf("%s: ErrorKillsThread %v, AppendFromLogStart %v; want %v, %v", c.era, r.ErrorKillsThread, r.AppendFromLogStart, c.kills, c.fromStart)
		}
	}
}

// TestAudit15TruncateInsideBatch: Log.truncateTo(t) with t inside a batch (0.11.0.2 to 3.7.0):
// LogSegment.truncateTo cuts the segment at translateOffset(t), the batch's start, so the whole
// batch goes, and updateLogEndOffset(t) sets the LEO to t: the offsets from the batch's start to
// t hold no record. leaderEpochCache.clearAndFlushLatest(t) keeps the entries that start below t.
// A restart ends the log at its last record (LogSegment.nextOffset: the last batch's
// nextOffset). The engine cut at t exactly and kept the batch's first records.
func TestAudit15TruncateInsideBatch(t *testing.T) {
	var l commitlog.Log
	l.AppendBatchAsLeader(0, []int64{1, 2, 3}, true)       // 0..2, epoch 0
	l.AppendBatchAsLeader(2, []int64{4, 5, 6, 7, 8}, true) // 3..7, epoch 2
	held := l.Read(3, 8)                                   // a fetch answer in flight
	cut := l.TruncateTo(5)
	if l.LogEndOffset() != 5 || len(cut) != 5 || cut[0].ID != 4 {
		t.Fatalf("LEO %d, cut %v: want LEO 5 and the batch 3..7 cut whole", l.LogEndOffset(), cut)
	}
	for o := int64(3); o < 5; o++ {
		if r, _ := l.At(o); !r.Gap || r.ID != 0 {
			t.Errorf("offset %d holds %+v, want no record", o, r)
		}
	}
	if held[0].ID != 4 || held[0].Gap {
		t.Errorf("a slice read before the truncation changed: %+v", held[0])
	}
	if got := cacheString(l.Cache()); got != "(0,0) (2,3)" {
		t.Errorf("epoch cache %s, want (0,0) (2,3): clearAndFlushLatest(5) keeps the entries below 5", got)
	}
	if l.NextRecord(3) != 5 || l.RecordsEnd() != 3 {
		t.Errorf("NextRecord(3) %d, RecordsEnd %d; want 5 (the LEO), 3", l.NextRecord(3), l.RecordsEnd())
	}
	// At a batch's start the cut is exact.
	var m commitlog.Log
	m.AppendBatchAsLeader(0, []int64{1, 2}, true)
	m.AppendBatchAsLeader(0, []int64{3, 4}, true)
	if cut := m.TruncateTo(2); len(cut) != 2 || m.LogEndOffset() != 2 {
		t.Errorf("cut at a batch start: %v, LEO %d", cut, m.LogEndOffset())
	}
	l.Recover(5, 0)
	if l.LogEndOffset() != 3 || l.HighWatermark() != 3 {
		t.Errorf("after a restart: LEO %d, HW %d; want 3, 3 (the log ends at its last record)", l.LogEndOffset(), l.HighWatermark())
	}
}

// TestAudit15ReadFromGap: a leader whose log has a gap (its truncation inside a batch left
// offsets without records, then it appended a batch after them) answers a follower's fetch at an
// offset in the gap with the batch after it: LogSegment.read's translateOffset finds the first
// batch whose last offset is at or past the fetch offset. The follower's Log.append takes it (its
// first offset is past the LEO, not below), so the follower's log has the gap too. A fetch in a
// gap at the log's end reads nothing.
func TestAudit15ReadFromGap(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, map[string]string{"inter.broker.protocol.version": `"0.11.0"`})
	r := e.replicaOn(p.pid, 0)
	r.Log().AppendBatchAsLeader(0, []int64{e.clients.NextRecordID(), e.clients.NextRecordID(), e.clients.NextRecordID()}, true)
	r.Log().AppendBatchAsLeader(0, []int64{e.clients.NextRecordID(), e.clients.NextRecordID(), e.clients.NextRecordID()}, true)
	r.Log().TruncateTo(4) // 3..5 cut whole, LEO 4: offset 3 without a record
	if d := followerFetch(e, p, 1, 3, -1); len(d.Records) != 0 {
		t.Errorf("a fetch in the gap at the log's end got %v", d.Records)
	}
	next := e.clients.NextRecordID()
	r.Log().AppendBatchAsLeader(0, []int64{next}, true) // offset 4
	d := followerFetch(e, p, 1, 3, -1)
	if d.RecordsBefore != -1 || len(d.Records) != 1 || d.Records[0].ID != next {
		t.Fatalf("a fetch at 3 got %d records beginning %d past it, want the batch at 4", len(d.Records), -d.RecordsBefore)
	}
	// A follower at offset 3 takes it at 4.
	f := e.replicaOn(p.pid, 1).Log()
	f.AppendAsFollower(r.Log().Read(0, 3))
	f.AppendGap(1)
	f.AppendAsFollower(d.Records)
	if rec, _ := f.At(3); !rec.Gap || f.LogEndOffset() != 5 {
		t.Errorf("follower: offset 3 %+v, LEO %d", rec, f.LogEndOffset())
	}
}

// TestAudit15TruncationInsideBatchAndThreadReplaced011 is grader b02: broker 0, restarted as a
// follower of broker 1 at epoch 3, is answered 16 for its epoch 2 and truncates inside its batch
// 11..20 (LogSegment.truncateTo: the batch goes whole, the LEO is 16, offsets 11..15 hold no
// record), then fetches broker 1's batch from 16. Broker 1's dead thread for leader 0 left the
// fetcher manager only when broker 1 became leader (makeLeaders' removeFetcherForPartitions, then
// shutdownIdleFetcherThreads), and the preferred election back to broker 0 starts a new thread
// (addFetcherForPartitions finds none in fetcherThreadMap), which fetches.
func TestAudit15TruncationInsideBatchAndThreadReplaced011(t *testing.T) {
	src, err := os.ReadFile("testdata/grader/b02-truncation-inside-batch-leaves-gap-0.11.0.json")
	if err != nil {
		t.Fatal(err)
	}
	evs, res := runScenarioText(t, string(src))
	if !res.OK() {
		t.Fatalf("expectations: %v", res.Failures)
	}
	var steps []string // from broker 1's return at 39500
	for _, ev := range evs {
		switch {
		case ev.T < 39500:
		case ev.Type == EvTruncate && strings.Contains(ev.Text, "broker 0 truncated"),
			ev.Type == EvFetcher && strings.HasPrefix(ev.Text, "broker 1"):
			steps = append(steps, ev.Text)
		}
	}
	want := []string{"broker 1 started fetcher 0 for leader broker 0", "broker 1's fetcher 0 for leader broker 0 died",
		"broker 1 stopped idle fetcher 0 for leader broker 0", "broker 0 truncated t-0 from offset 31 to 16 (20 records dropped)",
		"broker 1 started fetcher 0 for leader broker 0"}
	var got []string
	for _, s := range steps {
		for _, w := range want {
			if strings.HasPrefix(s, w) {
				got = append(got, w)
				break
			}
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("broker 1's threads and broker 0's truncation, in order:\n%s", strings.Join(steps, "\n"))
	}
	for _, ev := range evs {
		if ev.Type == EvTruncate && strings.Contains(ev.Text, "broker 0 truncated") && !strings.Contains(ev.Text, "offsets 11..15 are left without records") {
			t.Errorf("truncation text: %s", ev.Text)
		}
	}
}
