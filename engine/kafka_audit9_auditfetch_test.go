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

// TestAuditResponseLimitRotatesPartitions: under replica.fetch.response.max.bytes the partitions
// of one fetcher thread are served in turn. Before fetch sessions the follower lists them in its
// partitionStates order and moves one that got records to the end (AbstractFetcherThread
// .processFetchRequest, updateAndMoveToEnd: 0.10.2.2 l.155-158, 0.11.0.2 l.188-191), so the next
// Fetch lists the other first; with sessions the leader reads the session's partitionMap in
// order and moves one answered with records to its end (IncrementalFetchContext's
// PartitionIterator: 2.1.1 FetchSession.scala l.429-430, 3.7.0 l.492-493; a full answer does not
// rotate). Two partitions, three one-record produces each reaching the leader at 101, answers
// of one record (100 bytes): before 1.1 the follower gets t-0, t-1, t-0, ...; with sessions t-0
// (full answer), t-0, t-1, t-0, t-1, t-1. The engine read in partition order: all of t-0 first.
func TestAuditResponseLimitRotatesPartitions(t *testing.T) {
	type leos struct{ at, p0, p1 int64 }
	old := []leos{{102, 1, 0}, {104, 1, 1}, {106, 2, 1}, {108, 2, 2}, {110, 3, 2}, {112, 3, 3}}
	sessions := []leos{{102, 1, 0}, {104, 2, 0}, {106, 2, 1}, {108, 3, 1}, {110, 3, 2}, {112, 3, 3}}
	for _, tc := range []struct {
		era  string
		want []leos
	}{{"0.10.2", old}, {"0.11.0", old}, {"2.1", sessions}, {"3.7", sessions}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.fetch.response.max.bytes"] = "100"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}, {0, 1}}, cfg)
			runFor(t, e, 100)
			for _, p := range []string{"0", "1"} {
				for i := 0; i < 3; i++ {
					apply(t, e, `{"do":"produce","topic":"t","partition":`+p+`,"count":1,"acks":1}`)
				}
			}
			p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
			for _, w := range tc.want {
				if err := e.RunUntil(w.at); err != nil {
					t.Fatal(err)
				}
				g0 := e.replicaOn(p0.pid, 1).Log().LogEndOffset()
				g1 := e.replicaOn(p1.pid, 1).Log().LogEndOffset()
				if g0 != w.p0 || g1 != w.p1 {
					t.Fatalf("follower 1's LEOs at %d: t-0 %d, t-1 %d; want %d, %d", w.at, g0, g1, w.p0, w.p1)
				}
			}
		})
	}
}

// TestAuditConsumerIgnoresReplicaFetchMaxBytes: a consumer's Fetch is limited by the consumer's
// own max.partition.fetch.bytes (ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES, 1 MiB, 0.10.2.2
// l.145, 3.7.0 l.217), not by the brokers' replica.fetch.max.bytes, which only the replica
// fetchers send (ReplicaFetcherThread: fetchSize). With replica.fetch.max.bytes 100 a consume of
// "all available" read one record of five below the HW.
func TestAuditConsumerIgnoresReplicaFetchMaxBytes(t *testing.T) {
	cfg := map[string]string{"replica.fetch.max.bytes": "100"}
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":5,"acks":1}`)
	runFor(t, e, 2000)
	if got := consumeAll(t, e, p); len(got) != 5 {
		t.Fatalf("the consumer read %d records, want the 5 below the HW", len(got))
	}
}
