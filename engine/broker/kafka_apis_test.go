package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// sentSince is the messages h sent from the n-th on, as "type→to".
func sentSince(h *fakeHost, n int) []string {
	var out []string
	for _, m := range h.sent[n:] {
		out = append(out, m.Type+"→"+nodeLabel(m.To))
	}
	return out
}

// nodeLabel names a node in a test's expectations.
func nodeLabel(n int32) string {
	if n == protocol.ClientNode {
		return "client"
	}
	return string(rune('0' + n))
}

// TestBrokerHandle drives broker 1 through its entry points only (Handle, RequestFailed and the
// timers), as the network and the agenda do: a LeaderAndIsr answered to the controller, leading
// t-0 and following t-1 under broker 2; a produce answered; the fetcher's wake sending a Fetch,
// a stale wake doing nothing, and its answer appended; a follower's Fetch parked and answered at
// its expiry; OffsetsForLeaderEpoch and ListOffsets answered; the ISR shrink task asking the
// controller, the request's failure, its resend and the controller's answer committing the ISR;
// the checkpoint task; StopReplica stopping the fetcher; and the controller's messages left to
// the cluster.
func TestBrokerHandle(t *testing.T) {
	h, b := brokerOfTwo(t, ReplicaRules{BrokerEpochs: true, AssignEpochOnElection: true, FollowerRestartsOnNewEpoch: true,
		TruncateOnFetch: true, NumReplicaFetchers: 1, CheckpointIntervalMs: 5000})
	h.book.LeaderFetch = LeaderFetchRules{NotLeaderForUnknownLocal: true, MaxBytes: 1 << 20, RecordSizeBytes: 100}
	h.book.Isr = IsrRules{AlterPartition: true, LagTimeMaxMs: 10000}
	b.Startup(false)
	t0, t1 := b.Replica(0), b.Replica(1)
	handled := func(m *protocol.Message, want ...string) {
		t.Helper()
		n := len(h.sent)
		if !b.Handle(m) {
			t.Fatalf("%s not handled", m.Type)
		}
		if got := sentSince(h, n); !slices.Equal(got, want) {
			t.Fatalf("after %s: sent %q, want %q", m.Type, got, want)
		}
	}

	h.now = 10
	state := func(pid, leader int32, isr []int32) protocol.LeaderAndIsrState {
		return protocol.LeaderAndIsrState{TP: h.TP(pid), Leader: leader, LeaderEpoch: 1, ISR: isr, Replicas: h.Assignment(pid)}
	}
	lai := &protocol.Message{ID: 100, Type: protocol.MsgLeaderAndIsr, From: 0, To: 1, LeaderAndIsr: &protocol.LeaderAndIsrRequest{
		ControllerEpoch: 1, BrokerEpoch: 42, LiveLeaders: []int32{1, 2},
		Partitions: []protocol.LeaderAndIsrState{state(0, 1, []int32{0, 1}), state(1, 2, []int32{1, 2})}}}
	handled(lai, "leader-and-isr-response→0")
	if resp := h.sent[len(h.sent)-1]; resp.ReplyTo != 100 || resp.From != 1 || resp.LeaderAndIsrResponse.Error != protocol.ErrNone ||
		len(resp.LeaderAndIsrResponse.Partitions) != 2 {
		t.Fatalf("the LeaderAndIsr's answer: %+v", resp)
	}
	if !t0.IsLeader() || t1.IsLeader() || b.Fetchers().For(2, 0) == nil || !slices.Equal(h.wakes, []int64{10}) {
		t.Fatalf("after the LeaderAndIsr: t-0 leader %v, t-1 leader %v, fetcher %v, wakes %v", t0.IsLeader(), t1.IsLeader(),
			b.Fetchers().For(2, 0), h.wakes)
	}

	handled(&protocol.Message{ID: 101, Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
		Produce: &protocol.ProduceRequest{TP: h.TP(0), Acks: 1, RecordIDs: []int64{5, 6}, TimeoutMs: 30000}}, "produce-response→client")
	if t0.Log().LogEndOffset() != 2 {
		t.Fatalf("t-0's LEO after the produce: %d", t0.Log().LogEndOffset())
	}

	// The fetcher's wake-up: a Fetch to broker 2.
	n := len(h.sent)
	b.FetcherWake(2, 0)
	if got := sentSince(h, n); !slices.Equal(got, []string{"fetch→2"}) {
		t.Fatalf("the fetcher's wake sent %q", got)
	}
	fetch := h.sent[n]
	handled(&protocol.Message{ID: 102, Type: protocol.MsgFetchResponse, From: 2, To: 1, ReplyTo: fetch.ID,
		FetchResponse: &protocol.FetchResponse{Partitions: []protocol.FetchPartitionData{{TP: h.TP(1), HighWatermark: 1,
			LogEndOffset: 1, Records: []commitlog.Record{{ID: 9, Epoch: 1}}}}}})
	if t1.Log().LogEndOffset() != 1 || t1.Log().HighWatermark() != 1 {
		t.Fatalf("t-1 after the Fetch's answer: LEO %d, HW %d; want 1, 1", t1.Log().LogEndOffset(), t1.Log().HighWatermark())
	}
	// The answer woke the thread for the next millisecond (it sent at this one); a wake-up at
	// another time is a stale one: nothing.
	if !slices.Equal(h.wakes, []int64{10, 11}) {
		t.Fatalf("wakes %v, want the LeaderAndIsr's at 10 and the answer's at 11", h.wakes)
	}
	n = len(h.sent)
	b.FetcherWake(2, 0)
	h.now = 11
	b.FetcherWake(2, 0)
	if got := sentSince(h, n); !slices.Equal(got, []string{"fetch→2"}) {
		t.Fatalf("a stale wake and the answer's sent %q, want one Fetch", got)
	}

	// Follower 0's Fetch at t-0's LEO reads nothing: parked, answered at its max wait.
	h.now = 20
	follower := fetchFrom(h, 0, protocol.InvalidSessionID, protocol.FinalEpoch, 2, 0)
	handled(follower)
	if len(h.fetchTimeouts) != 1 || t0.Log().HighWatermark() != 2 {
		t.Fatalf("the follower's Fetch: timeouts %v, t-0's HW %d; want one, 2", h.fetchTimeouts, t0.Log().HighWatermark())
	}
	h.now = h.fetchTimeouts[0].at
	n = len(h.sent)
	b.DelayedFetchExpired(h.fetchTimeouts[0].df, h.fetchTimeouts[0].seq)
	if _, parts, ok := answered(h, follower); !ok || !slices.Equal(sentSince(h, n), []string{"fetch-response→0"}) ||
		!slices.Equal(parts, []string{"t-0 0 records, HW 2"}) {
		t.Fatalf("the parked Fetch's expiry: sent %q, answer %q", sentSince(h, n), parts)
	}

	handled(&protocol.Message{ID: 103, Type: protocol.MsgOffsetsForEpoch, From: 0, To: 1, OffsetsForEpoch: &protocol.OffsetsForEpochRequest{
		ReplicaID: 0, Partitions: []protocol.OffsetsForEpochPartition{{TP: h.TP(0), CurrentLeaderEpoch: 1, LeaderEpoch: 1}}}},
		"offsets-for-leader-epoch-response→0")
	handled(&protocol.Message{ID: 104, Type: protocol.MsgListOffsets, From: 0, To: 1, ListOffsets: &protocol.ListOffsetsRequest{
		ReplicaID: 0, TP: h.TP(0), CurrentLeaderEpoch: 1}}, "list-offsets-response→0")

	// Follower 0 falls behind: the ISR shrink task asks the controller (broker 0) to shrink, the
	// request fails, the resend asks again, and the controller's answer commits the ISR.
	handled(&protocol.Message{ID: 105, Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
		Produce: &protocol.ProduceRequest{TP: h.TP(0), Acks: 1, RecordIDs: []int64{7}, TimeoutMs: 30000}}, "produce-response→client")
	h.now = 20 + 10001
	n = len(h.sent)
	b.IsrExpiration()
	if got := sentSince(h, n); !slices.Equal(got, []string{"alter-partition→0"}) {
		t.Fatalf("the shrink task sent %q", got)
	}
	alter := h.sent[n]
	if !b.RequestFailed(alter) {
		t.Fatal("the AlterPartition's failure not handled")
	}
	b.AlterPartitionResend(0)
	if got := sentSince(h, n); !slices.Equal(got, []string{"alter-partition→0", "alter-partition→0"}) {
		t.Fatalf("the resend sent %q", got)
	}
	resent := h.sent[n+1]
	handled(&protocol.Message{ID: 106, Type: protocol.MsgAlterPartitionResponse, From: 0, To: 1, ReplyTo: resent.ID,
		AlterPartitionResponse: &protocol.AlterPartitionResponse{TP: h.TP(0), Leader: 1, LeaderEpoch: 1, ISR: []int32{1},
			PartitionEpoch: 1}})
	if !slices.Equal(t0.State().ISR(), []int32{1}) || t0.State().IsInflight() {
		t.Fatalf("t-0's ISR after the controller's answer: %v (in flight %v), want [1]", t0.State().ISR(), t0.State().IsInflight())
	}

	h.checkpoints = nil
	b.HighWatermarkCheckpoint()
	if t0.HWCheckpoint() != t0.Log().HighWatermark() || t1.HWCheckpoint() != 1 || !slices.Equal(h.checkpoints, []int64{h.now + 5000}) {
		t.Fatalf("the checkpoint task: t-0 %d (HW %d), t-1 %d, next %v", t0.HWCheckpoint(), t0.Log().HighWatermark(),
			t1.HWCheckpoint(), h.checkpoints)
	}

	handled(&protocol.Message{ID: 107, Type: protocol.MsgStopReplica, From: 0, To: 1, StopReplica: &protocol.StopReplicaRequest{
		ControllerEpoch: 1, BrokerEpoch: 42, Partitions: []protocol.TP{h.TP(1)}}}, "stop-replica-response→0")
	if resp := h.sent[len(h.sent)-1]; resp.ReplyTo != 107 || resp.StopReplicaResponse.Error != protocol.ErrNone ||
		len(resp.StopReplicaResponse.Partitions) != 1 || resp.StopReplicaResponse.Partitions[0].TP != h.TP(1) {
		t.Fatalf("the StopReplica's answer: %+v (KafkaApis.handleStopReplicaRequest: NONE, t-1 NONE)", resp)
	}
	if f := b.Fetchers().For(2, 0); f != nil && f.State(1) != nil {
		t.Fatal("StopReplica left t-1 on its fetcher")
	}

	// The controller's messages, and the failure of its request, are the cluster's.
	n = len(h.sent)
	for _, m := range []*protocol.Message{
		{ID: 108, Type: protocol.MsgAlterPartition, From: 2, To: 1},
		{ID: 109, Type: protocol.MsgLeaderAndIsrResponse, From: 2, To: 1},
		{ID: 110, Type: protocol.MsgControlledShutdown, From: 2, To: 1},
	} {
		if b.Handle(m) {
			t.Errorf("%s handled by the broker: it is the controller's", m.Type)
		}
	}
	if b.RequestFailed(&protocol.Message{ID: 111, Type: protocol.MsgLeaderAndIsr, From: 1, To: 0}) {
		t.Error("the controller's LeaderAndIsr's failure handled by the broker")
	}
	if len(h.sent) != n {
		t.Errorf("the cluster's messages sent %q", sentSince(h, n))
	}
}
