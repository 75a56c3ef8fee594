package engine

import (
	"slices"
	"testing"
)

// Audit 11, message delivery between brokers, the controller and clients, against each era's
// Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it
// follows.

// alterPartitionSends is when broker from sent AlterPartition requests.
func alterPartitionSends(e *Engine, from int32) []int64 {
	var out []int64
	for _, ev := range eventsOf(e.events, MsgAlterPartition, func(ev Event) bool { return ev.Message.From == from }) {
		out = append(out, ev.T)
	}
	return out
}

// TestAudit11AlterPartitionRetryTimes: 3.7.0's AlterPartition is resent on its channel's own
// schedule, not the producer's retry.backoff.ms (no broker setting; the engine used it). An
// AlterPartition whose connection is reset (the controller's broker crashed and refuses it) or
// that times out after controller.socket.timeout.ms goes back to the head of the
// NodeToControllerRequestThread's queue (handleResponse: wasDisconnected → putFirst) and leaves
// again once the channel's NetworkClient may reconnect, reconnect.backoff.ms 50 after the
// disconnect (NodeToControllerChannelManagerImpl.buildNetworkClient: reconnectBackoffMs 50, max
// 50). Leader 1 of t-0 [1,2] shrinks follower 2 (its Fetch link cut at 1000, a record at 2000)
// at the 6000 check (replica.lag.time.max.ms 4000):
//   - the controller's broker 0 died at 1000 and its session lasts until 19000: each attempt is
//     refused one latency later, the failure comes back one latency after that, and the next
//     leaves 50 ms later, every 52 ms, until broker 1 is controller itself at 19000 and commits
//     the shrink at 19001 (retry.backoff.ms 1000 changes nothing);
//   - the link from 1 to the live controller 0 is cut: the AlterPartition held since 6000 times
//     out at 36000 and is sent again at 36050.
func TestAudit11AlterPartitionRetryTimes(t *testing.T) {
	setup := func(t *testing.T) (*Engine, *partition) {
		cfg := eraCfg("3.7")
		cfg["replica.lag.time.max.ms"] = "4000"
		cfg["retry.backoff.ms"] = "1000"
		e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
		p := e.partitionOf(ktTopic, 0)
		runFor(t, e, 100)
		apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
		runFor(t, e, 900)
		return e, p
	}
	t.Run("controller broker dead", func(t *testing.T) {
		e, p := setup(t)
		apply(t, e, `{"do":"kill","broker":0}`)
		apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
		runFor(t, e, 1000)
		apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
		runFor(t, e, 4200) // to 6200
		if got, want := alterPartitionSends(e, 1), []int64{6000, 6052, 6104, 6156}; !slices.Equal(got, want) {
			t.Fatalf("AlterPartition sent at %v, want %v (reconnect.backoff.ms 50 after each refusal)", got, want)
		}
		runFor(t, e, 12801) // to 19001
		if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1}) {
			t.Fatalf("ISR %v at 19001, want [1] (broker 1 controller from 19000)", isr)
		}
	})
	t.Run("held until it times out", func(t *testing.T) {
		e, p := setup(t)
		apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
		apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
		runFor(t, e, 1000)
		apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
		runFor(t, e, 35000) // to 37000
		if got, want := alterPartitionSends(e, 1), []int64{6000, 36050}; !slices.Equal(got, want) {
			t.Fatalf("AlterPartition sent at %v, want %v (controller.socket.timeout.ms 30000, then 50 ms)", got, want)
		}
		if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1, 2}) {
			t.Fatalf("ISR %v at 37000, want [1 2] (the link to the controller is still cut)", isr)
		}
	})
}

// TestAudit11RefusalCrossesTheLinkBack: a request that reaches a broker whose process is gone is
// refused (the host answers the connection with an RST), and the requester learns it when that
// RST has crossed the link back, with that link's latency, as it learns of a crash with requests
// in flight (resetRequestsTo). The engine failed it one default latency after the refusal
// whatever the link back. Follower 2 of t-0 [0,1,2] (3.7) fetches from leader 0, which is killed
// at 2000; the link 0 -> 2 has 3000 ms of latency: each Fetch reaches 0 one millisecond after it
// leaves and fails 3000 ms later, and the thread sends the next after replica.fetch.backoff.ms
// (1000; AbstractFetcherThread.processFetchRequest's handlePartitionsWithErrors from 3.1), so
// refusals come 4001 ms apart, not 1002.
func TestAudit11RefusalCrossesTheLinkBack(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg("3.7"))
	runFor(t, e, 1000)
	apply(t, e, `{"do":"link","from":0,"to":2,"latencyMs":3000}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"kill","broker":0}`)
	runFor(t, e, 15000)
	var refused []int64
	for _, ev := range eventsOf(e.events, EvDropped, func(ev Event) bool {
		return ev.Message.From == 2 && ev.Message.Type == MsgFetch
	}) {
		refused = append(refused, ev.T)
	}
	if len(refused) < 3 {
		t.Fatalf("follower 2's Fetch refused at %v, want at least three refusals by 17000", refused)
	}
	for i := 1; i < len(refused); i++ {
		if d := refused[i] - refused[i-1]; d != 4001 {
			t.Fatalf("follower 2's Fetch refused at %v: %d ms apart, want 4001 (the RST's 3000 ms back, the 1000 ms backoff, 1 ms there)", refused, d)
		}
	}
}
