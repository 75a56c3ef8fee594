package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// The leader's answers to a follower's truncation questions: OffsetsForLeaderEpoch
// (KafkaApis.handleOffsetForLeaderEpochRequest, Partition.lastOffsetForLeaderEpoch) and the
// offsets a follower out of range asks for (ListOffsets, earliest and latest).

// HandleOffsetsForEpoch answers the truncation phase's question m on the leader: for each
// partition, the end offset of the epoch asked for, as the era words it (LastOffsetForLeaderEpoch;
// EpochAnswerNamesEpoch: KIP-279, 2.0).
func (rm *ReplicaManager) HandleOffsetsForEpoch(h Host, m *protocol.Message) {
	req := m.OffsetsForEpoch
	rules := h.ReplicaRules()
	resp := &protocol.OffsetsForEpochResponse{}
	for _, q := range req.Partitions {
		_, p := h.ReplicaNamed(q.TP)
		res := protocol.OffsetsForEpochResult{TP: q.TP, LeaderEpoch: -1, EndOffset: -1}
		if res.Error = p.CheckLeaderRequest(q.CurrentLeaderEpoch, req.ReplicaID, rules.NotLeaderForUnknownLocal); res.Error == protocol.ErrNone {
			res.LeaderEpoch, res.EndOffset = LastOffsetForLeaderEpoch(&p.log, q.LeaderEpoch, rules.EpochAnswerNamesEpoch)
		}
		resp.Partitions = append(resp.Partitions, res)
	}
	h.Send(&protocol.Message{Type: protocol.MsgOffsetsForEpochResponse, From: rm.broker, To: m.From, ReplyTo: m.ID,
		OffsetsForEpochResp: resp})
}

// HandleListOffsets answers a follower's OFFSET_OUT_OF_RANGE recovery m: the leader's log start
// and end.
func (rm *ReplicaManager) HandleListOffsets(h Host, m *protocol.Message) {
	req := m.ListOffsets
	_, p := h.ReplicaNamed(req.TP)
	resp := &protocol.ListOffsetsResponse{TP: req.TP, LogEndOffset: -1, LogStartOffset: -1}
	if resp.Error = p.CheckLeaderRequest(req.CurrentLeaderEpoch, req.ReplicaID, h.ReplicaRules().NotLeaderForUnknownLocal); resp.Error == protocol.ErrNone {
		resp.LogEndOffset, resp.LogStartOffset = p.log.LogEndOffset(), p.log.LogStartOffset()
	}
	h.Send(&protocol.Message{Type: protocol.MsgListOffsetsResponse, From: rm.broker, To: m.From, ReplyTo: m.ID,
		ListOffsetsResponse: resp})
}
