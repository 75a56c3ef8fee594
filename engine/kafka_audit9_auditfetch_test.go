package engine

import (
	"testing"
)

// Audit of fetcher threads with several partitions and the leader's fetch limits against each
// era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function
// it follows.

var auditFetchEras = []string{"0.10.2", "0.11.0", "2.1", "3.7"}

// followerLEO is broker b's LEO of partition 0 of topic t.
func followerLEO(e *Engine, b int32) int64 {
	p := e.partitionOf(ktTopic, 0)
	return e.replicaOn(p.pid, b).Log().LogEndOffset()
}

// TestAuditDelayedFetchCountsAtMostMaxBytes: DelayedFetch.tryComplete (0.10.2.2 l.103, 0.11.0.2
// l.111, 2.1.1 l.112, 3.7.0 l.108) counts min(endOffset.positionDiff(fetchOffset),
// fetchInfo.maxBytes) per partition toward fetchMinBytes. With replica.fetch.max.bytes 100 and
// replica.fetch.min.bytes 300, three records appended one by one never complete the follower's
// parked Fetch: it waits its 500 ms (answered at 501, 503 in 0.11.0 after the start's
// OffsetsForLeaderEpoch round). The engine counted the whole 300 bytes and answered at the third
// append (201).
func TestAuditDelayedFetchCountsAtMostMaxBytes(t *testing.T) {
	for _, era := range auditFetchEras {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["replica.fetch.max.bytes"] = "100"
			cfg["replica.fetch.min.bytes"] = "300"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			runFor(t, e, 100)
			for i := 0; i < 3; i++ {
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
				runFor(t, e, 50)
			}
			if err := e.RunUntil(500); err != nil {
				t.Fatal(err)
			}
			if got := followerLEO(e, 1); got != 0 {
				t.Fatalf("follower 1's LEO at 500: %d, want 0 (its Fetch waits replica.fetch.wait.max.ms)", got)
			}
			runFor(t, e, 10)
			if got := followerLEO(e, 1); got != 1 {
				t.Fatalf("follower 1's LEO at 510: %d, want 1 (one record of 100 bytes per answer)", got)
			}
		})
	}
}

// TestAuditResponseMaxBytesLimitsAnswer: ReplicaManager.readFromLocalLog (0.10.2.2 l.598-607,
// 3.7.0 readFromLog: limitBytes, minOneMessage) reads each partition up to
// min(replica.fetch.max.bytes, what is left of the request's maxBytes, the follower's
// replica.fetch.response.max.bytes), at least one record until one partition returned some. With
// replica.fetch.response.max.bytes 200 a follower takes a backlog of four records two at a time.
// Five produces of one record reach the leader at 101: the first completes the parked Fetch with
// one record (follower's LEO 1 at 102), the next Fetches read two each (LEO 3 at 104, 5 at 106).
// The engine ignored the setting and took the four at once (LEO 5 at 104).
func TestAuditResponseMaxBytesLimitsAnswer(t *testing.T) {
	for _, era := range auditFetchEras {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["replica.fetch.response.max.bytes"] = "200"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			runFor(t, e, 100)
			for i := 0; i < 5; i++ {
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			}
			for _, w := range []struct{ at, leo int64 }{{102, 1}, {104, 3}, {105, 3}, {106, 5}} {
				if err := e.RunUntil(w.at); err != nil {
					t.Fatal(err)
				}
				if got := followerLEO(e, 1); got != w.leo {
					t.Fatalf("follower 1's LEO at %d: %d, want %d", w.at, got, w.leo)
				}
			}
		})
	}
}
