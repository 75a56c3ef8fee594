package engine

import (
	"testing"
)

// Audit 12, the fetch and produce purgatories (DelayedFetch, DelayedProduce,
// DelayedOperationPurgatory) and where ReplicaManager and Partition complete them, against each
// era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function
// it follows.

// fetchResponsesTo is when broker from answered a Fetch of broker (or client) to.
func fetchResponsesTo(e *Engine, from, to int32) []int64 {
	var out []int64
	for _, ev := range eventsOf(e.events, MsgFetchResponse, func(ev Event) bool {
		return ev.Message.From == from && ev.Message.To == to
	}) {
		out = append(out, ev.T)
	}
	return out
}

// fetchesFrom is when broker (or client) from sent a Fetch to broker to.
func fetchesFrom(e *Engine, from, to int32) []int64 {
	var out []int64
	for _, ev := range eventsOf(e.events, MsgFetch, func(ev Event) bool {
		return ev.Message.From == from && ev.Message.To == to
	}) {
		out = append(out, ev.T)
	}
	return out
}

// TestAudit12LogDirFailureLeavesFetchesParked: ReplicaManager.handleLogDirFailure (2.1.1,
// 3.7.0) marks the failed directory's partitions offline (markPartitionOffline) and completes
// no delayed operation: a follower's Fetch parked on the failed leader stays parked until its
// replica.fetch.wait.max.ms passes, and is then answered (DelayedFetch.onComplete reads the
// partition: KAFKA_STORAGE_ERROR). The engine answered it at the failure.
func TestAudit12LogDirFailureLeavesFetchesParked(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
			runFor(t, e, 700)
			sent := fetchesFrom(e, 2, 1)
			if len(sent) == 0 {
				t.Fatal("follower 2 sent no Fetch")
			}
			last := sent[len(sent)-1] // parked on leader 1 one latency later, for 500 ms
			apply(t, e, `{"do":"failDisk","broker":1}`)
			runFor(t, e, 600)
			var after []int64
			for _, at := range fetchResponsesTo(e, 1, 2) {
				if at >= 700 {
					after = append(after, at)
				}
			}
			if len(after) == 0 || after[0] != last+1+500 {
				t.Fatalf("leader 1 answered follower 2's parked Fetch (sent at %d) at %v after the failure at 700, want first at %d (its max wait)",
					last, after, last+1+500)
			}
		})
	}
}
