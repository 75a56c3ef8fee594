package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// The leader's side of Produce (ReplicaManager.appendRecords, Partition.appendRecordsToLeader)
// and the produce purgatory's completions (DelayedProduce). acks=0 gets no answer, acks=1 an
// answer after the local append, acks=all an answer once the HW passes the batch (or an error).

// CheckLeaderRequest is the check every leader-bound request passes first
// (ReplicaManager.getPartitionOrError, Partition's leader and epoch checks) on p, the broker's
// replica of the partition (nil: it has none). replicaID is a follower's id, or
// protocol.ClientNode; currentEpoch -1 is none (before KIP-320). unknownIsNotLeader is 2.0's rule
// for a partition without its Partition object yet (rules: notLeaderForUnknownLocal).
func (p *Partition) CheckLeaderRequest(currentEpoch, replicaID int32, unknownIsNotLeader bool) protocol.KafkaError {
	switch {
	case p == nil:
		return protocol.ErrUnknownTopicOrPartition
	case p.offline:
		return protocol.ErrKafkaStorage
	case !p.known && !unknownIsNotLeader:
		return protocol.ErrUnknownTopicOrPartition // no Partition object yet: getPartition finds none (before 2.0)
	case !p.known:
		return protocol.ErrNotLeaderOrFollower
	case currentEpoch >= 0 && currentEpoch < p.leaderEpoch:
		return protocol.ErrFencedLeaderEpoch
	case currentEpoch >= 0 && currentEpoch > p.leaderEpoch:
		return protocol.ErrUnknownLeaderEpoch
	case !p.IsLeader():
		return protocol.ErrNotLeaderOrFollower
	case replicaID != protocol.ClientNode && p.Remote(replicaID) == nil: // getReplicaOrException
		if currentEpoch >= 0 {
			return protocol.ErrUnknownLeaderEpoch
		}
		return protocol.ErrNotLeaderOrFollower
	}
	return protocol.ErrNone
}

// HandleProduce appends a producer's batch m to the leader's log and answers it, now or once
// the HW passes it.
func (rm *ReplicaManager) HandleProduce(h Host, m *protocol.Message) {
	req := m.Produce
	pid, p := h.ReplicaNamed(req.TP)
	if bw := rm.zkBlocked; bw != nil && bw.pid == pid && p != nil {
		// The partition's lock is held by an ISR write waiting for ZooKeeper (zkBlockedWrite):
		// the produce waits for it, and its producer gives up at its request timeout (the
		// producer's own timer, set at the send).
		bw.produces = append(bw.produces, m)
		return
	}
	hw := h.HWRules()
	errName := p.CheckLeaderRequest(-1, protocol.ClientNode, h.ReplicaRules().NotLeaderForUnknownLocal)
	if errName == protocol.ErrNone && req.Acks == -1 && len(p.State().ISR()) < hw.EffectiveMinIsr(len(h.Assignment(pid))) {
		errName = protocol.ErrNotEnoughReplicas
	}
	if errName != protocol.ErrNone {
		if req.Acks != 0 {
			rm.respondProduce(h, m, errName, -1)
		}
		// acks=0 gets no answer, an error neither: Kafka closes the connection instead
		// (KafkaApis.handleProduceRequest: `if (produceRequest.acks == 0) { if (errorInResponse)
		// closeConnection ... }`, 0.10.2.2 and 3.7.0), and the producer, which awaits nothing,
		// learns of it only by reconnecting.
		return
	}
	// An idempotent producer's retry may be a batch the log already has (its answer was lost, or
	// it reached this leader as a follower before the leadership moved): Kafka's
	// UnifiedLog.append (3.7.0) skips the append when analyzeAndValidateProducerState finds it
	// among the producer's last cached batches (ProducerStateEntry.findDuplicateBatch) and
	// answers with the original batch's offsets. A first attempt can never be a duplicate, so
	// only a retry is looked for: a steady load pays nothing. The check follows the min.insync
	// one above, as in Partition.appendRecordsToLeader.
	if req.Retried {
		if base, ok := p.log.FindBatch(req.RecordIDs); ok {
			rm.duplicateProduce(h, m, pid, p, base)
			return
		}
		// Not there, or only in part: the engine may truncate inside a batch (Kafka truncates
		// whole batches only), and then the retry is appended whole, as any batch.
	}
	if req.Idempotent && len(req.RecordIDs) > 0 {
		if err := checkSequence(h, p, req.RecordIDs[0]); err != protocol.ErrNone {
			rm.respondProduce(h, m, err, -1)
			return
		}
	}
	base := p.log.AppendBatchAsLeader(p.leaderEpoch, req.RecordIDs, h.ReplicaRules().RecordBatches)
	if !h.CountOnly(LeaderAppend) {
		h.Emit(Event{Kind: LeaderAppend, Pid: protocol.Some(pid), From: protocol.Some(base),
			To: protocol.Some(p.log.LogEndOffset()), Epoch: protocol.Some(int64(p.leaderEpoch))})
	}
	p.SessionsChanged()
	h.Appended(p, len(req.RecordIDs))
	rm.appended(h, m, pid, p, base, true)
}

// appended is what follows a leader's append of produce m's batch at base (appended: false for
// an idempotent retry's batch found in the log, which appends nothing): the HW check, the
// purgatories' checks in the era's order, and the produce's answer or park.
func (rm *ReplicaManager) appended(h Host, m *protocol.Message, pid int32, p *Partition, base int64, appended bool) {
	rules := h.ReplicaRules()
	if rules.AppendChecksFetchesFirst && appended {
		// 0.10.2.2 and 0.11.0.2's appendRecordsToLeader: "probably unblock some follower fetch
		// requests since log end offset has been updated" (tryCompleteDelayedFetch) under the
		// partition's lock, before maybeIncrementLeaderHW: a fetch it completes carries the old HW.
		rm.TryCompleteWatchers(h, p)
	}
	hwMoved := rm.MaybeIncrementLeaderHW(h, pid, p, -1)
	if rules.PurgatoryAfterProduce {
		// 3.7.0: appendRecordsToLeader completes nothing; ReplicaManager.appendRecords parks the
		// produce (maybeAddDelayedProduce: tryCompleteElseWatch) and leaves its purgatory checks
		// to the action queue, run after the request (addCompletePurgatoryAction): HW increased,
		// the produces then the fetches; HW the same, the fetches.
		rm.answerAppended(h, m, pid, p, base)
		if hwMoved {
			rm.CompleteDelayedProduces(h, pid, p)
		}
		rm.TryCompleteWatchers(h, p)
		return
	}
	// 0.10.2.2 to 2.1.1's appendRecordsToLeader: HW increased, tryCompleteDelayedRequests
	// (fetches, then produces); 2.1.1 otherwise checks the fetches alone (0.10.2.2 and 0.11.0.2
	// did above). Then ReplicaManager.appendRecords parks the produce.
	if hwMoved {
		rm.tryCompleteDelayedRequests(h, pid, p)
	} else if !rules.AppendChecksFetchesFirst {
		rm.TryCompleteWatchers(h, p)
	}
	rm.answerAppended(h, m, pid, p, base)
}

// duplicateProduce answers an idempotent retry whose batch p's log has at base, not appending
// it again: as for an append (ReplicaManager.appendRecords), acks=1 at once and acks=all once
// the HW passes the batch's end (the produce purgatory's required offset, lastOffset + 1).
func (rm *ReplicaManager) duplicateProduce(h Host, m *protocol.Message, pid int32, p *Partition, base int64) {
	if !h.CountOnly(DuplicateBatch) {
		r, _ := p.log.At(base) // the epoch the batch was appended in
		h.Emit(Event{Kind: DuplicateBatch, Pid: protocol.Some(pid), From: protocol.Some(base),
			To: protocol.Some(base + int64(len(m.Produce.RecordIDs))), Epoch: protocol.Some(int64(r.Epoch))})
	}
	// appendRecordsToLeader checks the HW after a duplicate too (maybeIncrementLeaderHW), and
	// ReplicaManager.addCompletePurgatoryAction re-checks the purgatories (3.7.0).
	rm.appended(h, m, pid, p, base, false)
}

// answerAppended answers produce m, whose batch p's log holds from base: acks=1 now, acks=all
// parked in the produce purgatory until the HW passes it.
func (rm *ReplicaManager) answerAppended(h Host, m *protocol.Message, pid int32, p *Partition, base int64) {
	req := m.Produce
	switch req.Acks {
	case 0:
	case 1:
		rm.respondProduce(h, m, protocol.ErrNone, base)
	default:
		dp := h.NewDelayedProduce(m, base, len(req.RecordIDs))
		p.leadership().produces.Add(dp)
		rm.CompleteDelayedProduces(h, pid, p)
		if !dp.Done() {
			h.ScheduleProduceTimeout(dp, h.Now()+req.TimeoutMs)
		}
	}
}

// respondProduce answers produce m, in storage the engine reuses once the producer has the
// answer (recycle.go's terms): a steady acks=all load answers a batch a millisecond.
func (rm *ReplicaManager) respondProduce(h Host, m *protocol.Message, errName protocol.KafkaError, base int64) {
	h.SendProduceAnswer(m, protocol.ProduceResponse{Op: m.Produce.Op, TP: m.Produce.TP, Error: errName, BaseOffset: base})
}

// tryCompleteDelayedRequests is Partition.tryCompleteDelayedRequests of p, the broker's replica
// of pid, after its HW rose: the fetch purgatory first, then the produce purgatory
// (0.10.2.2 to 2.1.1: tryCompleteDelayedFetch, tryCompleteDelayedProduce; 3.7.0:
// DelayedOperations.checkAndCompleteAll, fetch.checkAndComplete then produce.checkAndComplete).
// Every HW rise of a leader calls it: a follower's fetch (updateFollowerFetchState), an ISR
// change, a new leader's (makeLeader), an append (appendRecordsToLeader, but 3.7.0's
// addCompletePurgatoryAction: answerAppended). A consumer's fetch parked for data below the HW is
// what it completes; a follower's counts the bytes to the LEO, which a HW rise does not move.
func (rm *ReplicaManager) tryCompleteDelayedRequests(h Host, pid int32, p *Partition) {
	rm.TryCompleteWatchers(h, p)
	rm.CompleteDelayedProduces(h, pid, p)
}

// CompleteDelayedProduces is DelayedProduce.tryComplete for every produce parked on p, the
// broker's replica of pid.
func (rm *ReplicaManager) CompleteDelayedProduces(h Host, pid int32, p *Partition) {
	l := p.lead
	if l == nil || l.produces.Len() == 0 {
		return
	}
	hw := h.HWRules()
	l.produces.TryComplete(p.offline, p.IsLeader(), p.log.HighWatermark(), &l.state, hw.EffectiveMinIsr(len(h.Assignment(pid))),
		func(dp *DelayedProduce, err protocol.KafkaError, base int64) {
			rm.respondProduce(h, dp.Request(), err, base)
		})
}

// DelayedProduceExpired answers a parked produce at its timeout, unless it was answered.
func (rm *ReplicaManager) DelayedProduceExpired(h Host, dp *DelayedProduce) {
	if dp.Expire() {
		rm.respondProduce(h, dp.Request(), protocol.ErrRequestTimedOut, -1)
	}
}

// checkSequence is the leader's check of an idempotent batch against the producer's state in its
// log, after the duplicate check (UnifiedLog.analyzeAndValidateProducerState →
// ProducerAppendInfo.append, 3.7.0; ProducerStateManager in 0.11.0.2 and 2.1.1). The state is
// the producer's last batch in the log, which is what Kafka's ProducerStateManager holds on a
// leader, a follower (it is updated by replication) and after a truncation or restart (it is
// rebuilt from the log). A batch from an older producer epoch is refused INVALID_PRODUCER_EPOCH
// (checkProducerEpoch); one from a newer epoch must start at sequence 0; one from the same epoch
// must follow the last sequence (inSequence), else OUT_OF_ORDER_SEQUENCE_NUMBER: a new leader
// that lost the producer's last acknowledged batches (an unclean election, a power loss) refuses
// the next. A producer the log has no batch of is the era's UnknownProducerError.
//
// The batch's header (producer epoch, base sequence) is its first record's (first): Kafka's
// request carries it; the engine's carries the record ids, whose header the producer holds
// (Cluster.RecordHeader), as it is now: a batch whose sequence the producer rewrote while the
// request was on its way is checked with the new one.
func checkSequence(h Host, p *Partition, first int64) protocol.KafkaError {
	pEpoch, seq, _ := h.RecordHeader(first)
	for o := p.log.LogEndOffset() - 1; o >= p.log.LogStartOffset(); o-- {
		r, _ := p.log.At(o)
		epoch, last, ok := h.RecordHeader(r.ID)
		if !ok {
			continue // a batch of no idempotent producer (acks 0 or 1, or idempotence off)
		}
		switch {
		case pEpoch < epoch:
			return protocol.ErrInvalidProducerEpoch
		case pEpoch != epoch && seq != 0, pEpoch == epoch && seq != last+1:
			return protocol.ErrOutOfOrderSequenceNumber
		}
		return protocol.ErrNone
	}
	if seq != 0 {
		return h.ReplicaRules().UnknownProducerError
	}
	return protocol.ErrNone
}
