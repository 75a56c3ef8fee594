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
