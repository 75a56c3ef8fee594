package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestProduceWithFakeBroker: acks=1 is answered after the local append; acks=all waits in the
// purgatory until the HW passes the batch, or its timeout; acks=all below min.insync.replicas
// is refused NOT_ENOUGH_REPLICAS before the append; a failed acks=0 produce gets no answer; a
// replica that does not lead answers NOT_LEADER_OR_FOLLOWER.
func TestProduceWithFakeBroker(t *testing.T) {
	produce := func(acks protocol.Acks, ids ...int64) *protocol.Message {
		return &protocol.Message{ID: 500 + uint64(len(ids)), Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
			Produce: &protocol.ProduceRequest{TP: protocol.TP{Topic: "t"}, Acks: acks, RecordIDs: ids, TimeoutMs: 30000}}
	}
	answer := func(t *testing.T, h *fakeHost, n int) *protocol.ProduceResponse {
		t.Helper()
		if len(h.sent) != n {
			t.Fatalf("%d messages sent, want %d", len(h.sent), n)
		}
		return h.sent[n-1].ProduceResponse
	}
	h, rm, p := leaderWithFollowers(t, []int32{0, 1, 2}, IsrRules{})
	h.book.HW = HWRules{LagTimeMaxMs: 10000, MinInsyncReplicas: 2}
	h.now = 100
	rm.HandleProduce(h, produce(1, 7))
	if r := answer(t, h, 1); r.Error != protocol.ErrNone || r.BaseOffset != 2 || p.Log().LogEndOffset() != 3 {
		t.Fatalf("acks=1: %+v, LEO %d", r, p.Log().LogEndOffset())
	}
	if want := []string{"appended to 0 at 2..3 in 1", "appended 1 to 0"}; !slices.Equal(h.calls, want) {
		t.Errorf("after the append: calls %q, want %q", h.calls, want)
	}
	h.calls = nil
	rm.HandleProduce(h, produce(-1, 8, 9))
	if len(h.sent) != 1 || p.Produces().Len() != 1 || !slices.Contains(h.calls, "produce timeout at 30100") {
		t.Fatalf("acks=all: %d sent, %d parked, calls %q; want it parked with its timeout", len(h.sent), p.Produces().Len(), h.calls)
	}
	for _, f := range []int32{0, 2} {
		p.Remote(f).UpdateFetchState(h.now, 5, 0, 5, 42)
	}
	if !rm.MaybeIncrementLeaderHW(h, 0, p, 2) {
		t.Fatal("the followers' fetches did not move the HW")
	}
	rm.CompleteDelayedProduces(h, 0, p)
	if r := answer(t, h, 2); r.Error != protocol.ErrNone || r.BaseOffset != 3 || p.Produces().Len() != 0 {
		t.Errorf("acks=all once the HW passed it: %+v, %d parked", r, p.Produces().Len())
	}

	// A parked produce's timeout: REQUEST_TIMED_OUT, once.
	rm.HandleProduce(h, produce(-1, 10))
	if p.Produces().Len() != 1 || len(h.sent) != 2 {
		t.Fatal("the produce was not parked")
	}
	rm.DelayedProduceExpired(h, h.lastProduce)
	rm.DelayedProduceExpired(h, h.lastProduce)
	if r := answer(t, h, 3); r.Error != protocol.ErrRequestTimedOut {
		t.Errorf("at its timeout: %s, want REQUEST_TIMED_OUT", r.Error)
	}
	h2, rm2, p2 := leaderWithFollowers(t, []int32{1}, IsrRules{})
	h2.book.HW = HWRules{LagTimeMaxMs: 10000, MinInsyncReplicas: 2}
	rm2.HandleProduce(h2, produce(-1, 11))
	if r := answer(t, h2, 1); r.Error != protocol.ErrNotEnoughReplicas || p2.Log().LogEndOffset() != 2 {
		t.Errorf("acks=all with an ISR of 1 under min.insync.replicas 2: %+v, LEO %d; want NOT_ENOUGH_REPLICAS, no append", r, p2.Log().LogEndOffset())
	}
	rm2.HandleProduce(h2, produce(0, 12))
	if len(h2.sent) != 1 {
		t.Error("a failed acks=0 produce was answered")
	}
	p2.SetLeader(0) // another broker leads now
	rm2.HandleProduce(h2, produce(1, 13))
	if r := answer(t, h2, 2); r.Error != protocol.ErrNotLeaderOrFollower {
		t.Errorf("to a replica that does not lead: %s, want NOT_LEADER_OR_FOLLOWER", r.Error)
	}
}
