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
			sent := fetchSendTimes(e, 2, 1, 0)
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

// consumeResults is when each consume step was answered, and how many records it read.
func consumeResults(e *Engine) (at []int64, read []int) {
	for _, ev := range eventsOf(e.events, EvConsumeResult, nil) {
		at = append(at, ev.T)
	}
	for _, op := range e.clients.ConsumeOps() {
		read = append(read, len(op.Records))
	}
	return at, read
}

// TestAudit12ConsumerFetchWaitsInPurgatory: a consumer's Fetch carries fetch.max.wait.ms (500) and
// fetch.min.bytes (1) (Fetcher.sendFetches, 0.10.2.2 to 3.7.0), and ReplicaManager.fetchMessages
// parks it when fewer bytes than that lie below the HW past its offset; DelayedFetch.tryComplete
// counts a consumer's bytes to the HW (FetchIsolation.HIGH_WATERMARK; 0.10.2.2:
// fetchOnlyCommitted). Leader 1 of t-0 [1,2]: a consume at 100 finds nothing and parks; without
// a produce it is answered at its max wait, 100 + 1 + 500, with nothing. With a record produced
// at 200 it is answered when follower 2's fetch raises the HW (Partition.updateFollowerFetchState
// → maybeIncrementLeaderHW → tryCompleteDelayedRequests, fetches first), well before 601, with
// the record; the append alone (HW unmoved, ISR [1 2]) does not complete it.
func TestAudit12ConsumerFetchWaitsInPurgatory(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			t.Run("max wait", func(t *testing.T) {
				e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
				runFor(t, e, 100)
				apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
				runFor(t, e, 400)
				if at, _ := consumeResults(e); len(at) != 0 {
					t.Fatalf("consume answered at %v, want still parked at 500", at)
				}
				runFor(t, e, 200)
				if at, read := consumeResults(e); len(at) != 1 || at[0] != 100+1+500+1 || read[0] != 0 {
					t.Fatalf("consume answered at %v reading %v, want at 602 (parked 101..601, one latency back) reading 0", at, read)
				}
			})
			t.Run("HW rise", func(t *testing.T) {
				e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
				runFor(t, e, 100)
				apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
				runFor(t, e, 100)
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
				runFor(t, e, 500)
				at, read := consumeResults(e)
				if len(at) != 1 || read[0] != 1 || at[0] <= 201 || at[0] >= 300 {
					t.Fatalf("consume answered at %v reading %v, want once, 1 record, after the append at 201 and the follower's next fetch, before 300", at, read)
				}
				hw := eventsOf(e.events, EvHighWatermark, onBroker(1))
				if len(hw) == 0 || hw[0].T != at[0]-1 {
					t.Fatalf("leader's HW events %v; want the consume answered one latency after the first (%d)", hw, at[0])
				}
			})
		})
	}
}

// TestAudit12AppendCompletionOrder: which purgatory an append checks first, per era. t-0 on [0]
// alone (ISR [0]: the append moves the HW at once); a consume parked at 100, one acks=1 record
// at 200, appended at 201.
//   - 0.10.2.2 and 0.11.0.2 Partition.appendRecordsToLeader: tryCompleteDelayedFetch before
//     maybeIncrementLeaderHW (the consumer's bytes count to the HW: nothing yet), then, the HW
//     having risen, tryCompleteDelayedRequests (the consumer's Fetch is answered); then
//     ReplicaManager.appendRecords answers the acks=1 produce.
//   - 2.1.1: the HW first, then tryCompleteDelayedRequests, then the produce's answer: the same
//     order.
//   - 3.7.0: appendRecords answers the produce (acks=1: no DelayedProduce) and leaves the
//     purgatories to the action queue (addCompletePurgatoryAction: produces, then fetches), run
//     after the request: the consumer's Fetch is answered after the produce.
func TestAudit12AppendCompletionOrder(t *testing.T) {
	for _, tc := range []struct {
		era          string
		produceFirst bool
	}{{"0.10.2", false}, {"0.11.0", false}, {"2.1", false}, {"3.7", true}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 1, [][]int32{{0}}, eraCfg(tc.era))
			runFor(t, e, 100)
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
			runFor(t, e, 10)
			var order []string
			for _, ev := range e.events {
				if ev.T == 201 && ev.Message != nil && ev.Message.To == ClientNode {
					order = append(order, ev.Type)
				}
			}
			want := []string{MsgFetchResponse, MsgProduceResponse}
			if tc.produceFirst {
				want = []string{MsgProduceResponse, MsgFetchResponse}
			}
			if len(order) != 2 || order[0] != want[0] || order[1] != want[1] {
				t.Fatalf("leader 0 answered the client at 201: %v, want %v", order, want)
			}
		})
	}
}

// TestAudit12PreHWFetchCheck: 0.10.2.2 and 0.11.0.2's Partition.appendRecordsToLeader checks the
// fetch purgatory under the partition's lock right after the append ("probably unblock some
// follower fetch requests since log end offset has been updated"), before maybeIncrementLeaderHW:
// a follower's Fetch it completes carries the HW from before the append. From 2.1.1 the HW moves
// first. Leader 0 of t-0 [0,1]; once follower 1's Fetch is parked at the LEO, the ISR is set to
// [0] (the controller's state, as after a shrink): an acks=1 record then moves the HW on the
// append alone (maybeIncrementLeaderHW waits on the ISR and on followers caught up within
// replica.lag.time.max.ms, here 50: 1 last caught up at its parked Fetch, at the start), and the
// answer to 1's parked Fetch carries HW 0 in 0.10.2 and 0.11.0, 1 in 2.1 and 3.7.
func TestAudit12PreHWFetchCheck(t *testing.T) {
	for _, tc := range []struct {
		era string
		hw  int64
	}{{"0.10.2", 0}, {"0.11.0", 0}, {"2.1", 1}, {"3.7", 1}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.lag.time.max.ms"] = "50"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100) // 1's Fetch is parked on 0
			ktLead(e, p, 0, 0, []int32{0}, e.ctrl.PartitionEpoch(p.pid))
			n := len(e.events)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
			runFor(t, e, 1)
			var got []int64
			for _, ev := range e.events[n:] {
				if ev.Type == MsgFetchResponse && ev.Message.From == 0 && ev.Message.To == 1 {
					got = append(got, ev.Message.FetchResponse.Partitions[0].HighWatermark)
				}
			}
			if len(got) != 1 || got[0] != tc.hw {
				t.Fatalf("leader 0's answers to follower 1 at the append carry HW %v, want [%d]", got, tc.hw)
			}
		})
	}
}
