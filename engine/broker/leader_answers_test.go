package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestLeaderAnswersWithFakeBroker: OffsetsForLeaderEpoch is answered with the end offset of the
// epoch asked for, as the era words it, and fenced for an older current leader epoch; ListOffsets
// with the leader's log start and end.
func TestLeaderAnswersWithFakeBroker(t *testing.T) {
	h, rm, p := leaderWithFollowers(t, []int32{0, 1, 2}, IsrRules{})
	p.Log().AppendAsLeader(1, []int64{3}) // epoch 0: offsets 0-1; epoch 1 from offset 2
	ask := func(current, epoch int32) protocol.OffsetsForEpochResult {
		rm.HandleOffsetsForEpoch(h, &protocol.Message{ID: 9, From: 2, OffsetsForEpoch: &protocol.OffsetsForEpochRequest{ReplicaID: 2,
			Partitions: []protocol.OffsetsForEpochPartition{{TP: h.TP(0), CurrentLeaderEpoch: current, LeaderEpoch: epoch}}}})
		m := h.sent[len(h.sent)-1]
		if m.Type != protocol.MsgOffsetsForEpochResponse || m.ReplyTo != 9 || m.To != 2 {
			t.Fatalf("answer %+v", m)
		}
		return m.OffsetsForEpochResp.Partitions[0]
	}
	h.book.Replica.EpochAnswerNamesEpoch = true
	if r := ask(1, 0); r.Error != protocol.ErrNone || r.LeaderEpoch != 0 || r.EndOffset != 2 {
		t.Errorf("epoch 0 asked (KIP-279): %+v, want epoch 0 ending at 2", r)
	}
	if r := ask(0, 0); r.Error != protocol.ErrFencedLeaderEpoch {
		t.Errorf("asked at current leader epoch 0 of a leader at 1: %s, want FENCED_LEADER_EPOCH", r.Error)
	}
	rm.HandleListOffsets(h, &protocol.Message{ID: 10, From: 2, ListOffsets: &protocol.ListOffsetsRequest{ReplicaID: 2, TP: h.TP(0),
		CurrentLeaderEpoch: -1}})
	if r := h.sent[len(h.sent)-1].ListOffsetsResponse; r.Error != protocol.ErrNone || r.LogStartOffset != 0 || r.LogEndOffset != 3 {
		t.Errorf("ListOffsets: %+v, want log 0..3", r)
	}
}
