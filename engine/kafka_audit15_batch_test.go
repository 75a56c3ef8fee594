package engine

import (
	"os"
	"strings"
	"testing"
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
