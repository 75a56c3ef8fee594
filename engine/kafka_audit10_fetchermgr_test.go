package engine

import (
	"testing"
)

// Audit of the replica fetcher threads, their manager and the leader's fetch byte limits against
// each era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka
// function it follows.

// leosAt runs e to each time given and checks broker b's LEOs of t-0 and t-1 there.
func leosAt(t *testing.T, e *Engine, b int32, want [][3]int64) {
	t.Helper()
	p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
	for _, w := range want {
		if err := e.RunUntil(w[0]); err != nil {
			t.Fatal(err)
		}
		g0 := e.replicaOn(p0.pid, b).Log().LogEndOffset()
		g1 := e.replicaOn(p1.pid, b).Log().LogEndOffset()
		if g0 != w[1] || g1 != w[2] {
			t.Fatalf("broker %d's LEOs at %d: t-0 %d, t-1 %d; want %d, %d", b, w[0], g0, g1, w[1], w[2])
		}
	}
}

// TestAudit10PartialRecordCountsAgainstResponseLimit: ReplicaManager.readFromLocalLog (0.10.2.2
// l.598-607, 3.7.0 readFromLog l.1850-1859) takes records.sizeInBytes of each partition's read off the bytes
// left of replica.fetch.response.max.bytes, and LogSegment.read (3.7.0 storage LogSegment.java l.443-455) reads fetchSize = min(the bytes
// there are, adjustedMaxSize) bytes, so a record cut by the partition limit still counts.
// replica.fetch.max.bytes 250, replica.fetch.response.max.bytes 400, records of 100 bytes, five
// one-record produces to t-0 and then five to t-1 reaching the leader at 101: the first append
// answers the parked Fetch with t-0's one record (LEO 1 at 102). The next Fetch reads its first
// partition's 250 bytes (two records and half a third) and leaves 150 for the second: one record.
// Before 1.1 t-1 goes first (t-0 got records and moved to the end of partitionStates: t-1 2,
// t-0 2 at 104); with sessions t-0 goes first (the full answer did not rotate the session:
// t-0 3, t-1 1). The engine counted 200 bytes for two records and gave the second partition two.
func TestAudit10PartialRecordCountsAgainstResponseLimit(t *testing.T) {
	for _, tc := range []struct {
		era  string
		want [][3]int64
	}{
		{"0.10.2", [][3]int64{{102, 1, 0}, {104, 2, 2}}},
		{"0.11.0", [][3]int64{{102, 1, 0}, {104, 2, 2}}},
		{"2.1", [][3]int64{{102, 1, 0}, {104, 3, 1}}},
		{"3.7", [][3]int64{{102, 1, 0}, {104, 3, 1}}},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.fetch.max.bytes"] = "250"
			cfg["replica.fetch.response.max.bytes"] = "400"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}, {0, 1}}, cfg)
			runFor(t, e, 100)
			for _, p := range []string{"0", "1"} {
				for i := 0; i < 5; i++ {
					apply(t, e, `{"do":"produce","topic":"t","partition":`+p+`,"count":1,"acks":1}`)
				}
			}
			leosAt(t, e, 1, tc.want)
		})
	}
}

// TestAudit10FetchHandsOutWholeBatches: from message format v2 (0.11.0, KIP-98) a produce is one
// record batch, and LogSegment.read reads at least the whole first batch at the fetch offset
// while minOneMessage (0.11.0.2 LogSegment.scala: adjustedMaxSize = max(maxSize,
// startOffsetAndSize.size); 3.7.0 storage LogSegment.java l.443-455), whatever
// replica.fetch.max.bytes says. With replica.fetch.max.bytes 100 (one record's size), a produce
// of five records with acks=all reaching the leader at 101 answers the follower's parked Fetch
// with all five: the follower's LEO is 5 at 102, its next Fetch moves the HW at 103 and the
// producer has its ack at 104. In 0.10.2 (message format v1, each uncompressed record its own
// message) the follower takes one record per Fetch: LEO 1 at 102 ... 5 at 110, the ack at 112.
// The engine counted records in every era, as in 0.10.2.
func TestAudit10FetchHandsOutWholeBatches(t *testing.T) {
	type point struct{ at, leo, acked int64 }
	batches := []point{{101, 0, 0}, {102, 5, 0}, {103, 5, 0}, {104, 5, 5}}
	for _, tc := range []struct {
		era  string
		want []point
	}{
		{"0.10.2", []point{{102, 1, 0}, {104, 2, 0}, {110, 5, 0}, {111, 5, 0}, {112, 5, 5}}},
		{"0.11.0", batches}, {"2.1", batches}, {"3.7", batches},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.fetch.max.bytes"] = "100"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":5,"acks":"all"}`)
			for _, w := range tc.want {
				if err := e.RunUntil(w.at); err != nil {
					t.Fatal(err)
				}
				if got := followerLEO(e, 1); got != w.leo {
					t.Fatalf("follower 1's LEO at %d: %d, want %d", w.at, got, w.leo)
				}
				if got := e.client(e.partitionOf(ktTopic, 0)).Acked(); got != w.acked {
					t.Fatalf("acked at %d: %d, want %d", w.at, got, w.acked)
				}
			}
		})
	}
}

// TestAudit10FirstBatchPastResponseLimit: the first batch is whole even past
// replica.fetch.response.max.bytes (ReplicaManager.readFromLocalLog's minOneMessage, until a
// partition returned bytes: 0.11.0.2, 2.1.1, 3.7.0 readFromLog). replica.fetch.response.max.bytes
// 300, produces of five records to t-0 and then to t-1 reaching the leader at 101: the parked
// Fetch answers with t-0's whole batch (LEO 5 at 102; t-1's append comes after); the next Fetch
// finds nothing new for t-0 and reads t-1's whole batch (LEO 5 at 104). In 0.10.2 (each record a
// message) t-0 takes three (300 bytes), then t-1 three and t-0 none (nothing left), then t-0 two
// and t-1 one. The engine cut the batches at three records in every era.
func TestAudit10FirstBatchPastResponseLimit(t *testing.T) {
	batches := [][3]int64{{102, 5, 0}, {104, 5, 5}}
	for _, tc := range []struct {
		era  string
		want [][3]int64
	}{
		{"0.10.2", [][3]int64{{102, 3, 0}, {104, 3, 3}, {106, 5, 4}}},
		{"0.11.0", batches}, {"2.1", batches}, {"3.7", batches},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.fetch.response.max.bytes"] = "300"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}, {0, 1}}, cfg)
			runFor(t, e, 100)
			for _, p := range []string{"0", "1"} {
				apply(t, e, `{"do":"produce","topic":"t","partition":`+p+`,"count":5,"acks":1}`)
			}
			leosAt(t, e, 1, tc.want)
		})
	}
}
