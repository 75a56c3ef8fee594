package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// The leader's side of Fetch (Partition.fetchRecords, ReplicaManager.fetchMessages) and the fetch
// purgatory (DelayedFetch). A follower's fetch is answered at once when it brings an error or a
// divergence, or when enough bytes are there; otherwise it waits up to replica.fetch.wait.max.ms
// for data. A consumer's fetch (replica id -1) reads only up to the high watermark and never waits.

// delayedFetch is a fetch parked in purgatory.
type delayedFetch struct {
	req  *Message
	done bool
}

func (e *Engine) handleFetch(b *broker, m *Message) {
	req := m.Fetch
	// The answer is built already filtered (the session's rule, quiet, partition by partition): a parked
	// fetch discards it, and most partitions of a steady follower's fetch have nothing new.
	consumer := req.ReplicaID == ClientNode
	var kept []FetchPartitionData
	var bytes int64
	now := req.MaxWaitMs <= 0 || consumer
	// The fetch is parked on its partitions in the same walk, while it may still wait; if it is
	// answered at once it is marked done, which every watch list skips (nothing checks a watch
	// list during the walk).
	df := &delayedFetch{req: m}
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		r := e.localReplica(b.id, fp.TP)
		if !consumer && e.unchangedForSession(r, req, fp) {
			// readPartition's answer would be quiet, hold no bytes, and update the follower's
			// state with these values.
			e.updateFollowerFetchState(r, req.ReplicaID, fp.FetchOffset, fp.LogStartOffset, fp.FetchOffset, req.BrokerEpoch)
			if !now {
				r.watchers = addWatcher(r.watchers, df)
			}
			continue
		}
		d, n := e.readPartition(r, req, fp, true)
		bytes += n
		if d.Error != ErrNone || d.DivergingEpoch != nil {
			now = true
		}
		if consumer || !quiet(fp, &d) {
			kept = append(kept, d)
		}
		if !now {
			if r != nil {
				r.watchers = addWatcher(r.watchers, df)
			}
		}
	}
	if now || bytes >= req.MinBytes {
		df.done = true
		if kept == nil {
			kept = []FetchPartitionData{}
		}
		e.sendFetchResponse(b, m, &FetchResponse{Partitions: kept})
		return
	}
	e.schedule(delayedFetchDone{e.timer(b), df}.due(e.now + req.MaxWaitMs))
}

// sendFetchResponse sends the answer to fetch m; resp holds only what the session must hear.
func (e *Engine) sendFetchResponse(b *broker, m *Message, resp *FetchResponse) {
	e.send(&Message{Type: MsgFetchResponse, From: b.id, To: m.From, ReplyTo: m.ID, FetchResponse: resp})
}

// readPartition reads one partition of a fetch from r, the leader's replica of it (nil if it has
// none), and, for a follower's first read, updates what the leader knows of the follower. It
// returns the data and the bytes it holds.
func (e *Engine) readPartition(r *replica, req *FetchRequest, fp *FetchPartition, update bool) (FetchPartitionData, int64) {
	d := FetchPartitionData{TP: fp.TP, HighWatermark: -1, LogStartOffset: -1, LogEndOffset: -1}
	if d.Error = e.checkLeaderRequest(r, fp.CurrentLeaderEpoch, req.ReplicaID); d.Error != ErrNone {
		return d, 0
	}
	log := &r.log
	hw, start, leo := log.HighWatermark(), log.LogStartOffset(), log.LogEndOffset()
	d.HighWatermark, d.LogStartOffset, d.LogEndOffset = hw, start, leo
	consumer := req.ReplicaID == ClientNode
	if fp.LastFetchedEpoch >= 0 && !consumer {
		ep, off := log.Cache().EndOffsetFor(fp.LastFetchedEpoch, leo)
		switch {
		case ep == -1 && off == -1, fp.FetchOffset < start:
			d.Error = ErrOffsetOutOfRange
			return d, 0
		case ep < fp.LastFetchedEpoch || off < fp.FetchOffset:
			// No follower state update on a divergence (KAFKA-13141).
			d.DivergingEpoch = &EpochEndOffset{Epoch: ep, EndOffset: off}
			return d, 0
		}
	}
	if fp.FetchOffset > leo || fp.FetchOffset < start {
		d.Error = ErrOffsetOutOfRange
		return d, 0
	}
	end := leo
	if consumer {
		end = hw
		if fp.MaxRecords > 0 {
			end = min(end, fp.FetchOffset+fp.MaxRecords)
		}
	}
	// replica.fetch.max.bytes per partition; the first record always fits.
	if limit := max(1, e.cfg.ReplicaFetchMaxBytes/e.cfg.RecordSizeBytes); end-fp.FetchOffset > limit {
		end = fp.FetchOffset + limit
	}
	d.Records = log.Read(fp.FetchOffset, end)
	if update && !consumer {
		e.updateFollowerFetchState(r, req.ReplicaID, fp.FetchOffset, fp.LogStartOffset, leo, req.BrokerEpoch)
	}
	return d, int64(len(d.Records)) * e.cfg.RecordSizeBytes
}

// checkLeaderRequest is the epoch and leadership check every leader-bound request passes first.
func (e *Engine) checkLeaderRequest(r *replica, currentEpoch int32, replicaID int32) KafkaError {
	switch {
	case r == nil:
		return ErrUnknownTopicOrPartition
	case r.offline:
		return ErrKafkaStorage
	case !r.known:
		return ErrNotLeaderOrFollower
	case currentEpoch >= 0 && currentEpoch < r.leaderEpoch:
		return ErrFencedLeaderEpoch
	case currentEpoch >= 0 && currentEpoch > r.leaderEpoch:
		return ErrUnknownLeaderEpoch
	case !r.isLeader():
		return ErrNotLeaderOrFollower
	case replicaID != ClientNode && r.remote(replicaID) == nil: // getReplicaOrException
		if currentEpoch >= 0 {
			return ErrUnknownLeaderEpoch
		}
		return ErrNotLeaderOrFollower
	}
	return ErrNone
}

// updateFollowerFetchState is Replica.updateFetchState: a fetch at offset f
// while the leader's LEO is leo.
func (e *Engine) updateFollowerFetchState(r *replica, follower int32, f, logStart, leo int64, brokerEpoch int64) {
	rr := r.remote(follower)
	if rr == nil {
		return
	}
	switch {
	case f >= leo:
		rr.lastCaughtUpTime = max(rr.lastCaughtUpTime, e.now)
	case f >= rr.lastFetchLeaderLEO:
		rr.lastCaughtUpTime = max(rr.lastCaughtUpTime, rr.lastFetchTime)
	}
	moved := rr.leo != f
	rr.leo = f
	rr.logStart = logStart
	rr.lastFetchLeaderLEO = max(leo, rr.lastFetchLeaderLEO)
	rr.lastFetchTime = e.now
	rr.brokerEpoch = brokerEpoch
	e.maybeExpandIsr(r, rr)
	if moved && e.advanceHW(r, follower) {
		e.completeDelayedProduces(r)
	}
}

// addWatcher parks df on a replica's watch list, dropping the fetches already completed (they
// are skipped when the list is checked; without this, a partition that gets no new data keeps
// every fetch that ever waited on it, and each holds its whole request).
func addWatcher(ws []*delayedFetch, df *delayedFetch) []*delayedFetch {
	kept := ws[:0]
	for _, w := range ws {
		if !w.done {
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	return append(kept, df)
}

// tryCompleteWatchers re-checks the fetches parked on r (new data, a moved HW, a leadership change).
func (e *Engine) tryCompleteWatchers(b *broker, r *replica) {
	if len(r.watchers) == 0 {
		return
	}
	kept := r.watchers[:0]
	for _, df := range r.watchers {
		if df.done {
			continue
		}
		if e.canCompleteFetch(b, df, r) {
			e.completeFetch(b, df)
			continue
		}
		kept = append(kept, df)
	}
	clear(r.watchers[len(kept):])
	r.watchers = kept
}

// canCompleteFetch is DelayedFetch.tryComplete's conditions (A)–(H) but the timeout: some
// partition can answer at once (an error, a divergence), or the bytes ready reach MinBytes. Every
// partition's bytes are ≥ 0, so one partition that suffices decides it: the partition of r, whose
// change prompted the check, is looked at first.
func (e *Engine) canCompleteFetch(b *broker, df *delayedFetch, r *replica) bool {
	req := df.req.Fetch
	parts := req.Partitions
	if r != nil {
		pid := r.p.pid
		i, found := slices.BinarySearchFunc(parts, pid, func(fp FetchPartition, pid int32) int { return cmp.Compare(e.pidOf(fp.TP), pid) })
		if found {
			if now, n := e.fetchPartReady(b, &parts[i]); now || n >= req.MinBytes {
				return true
			}
		}
	}
	var bytes int64
	for i := range parts {
		now, n := e.fetchPartReady(b, &parts[i])
		if now {
			return true
		}
		bytes += n
		if bytes >= req.MinBytes {
			return true
		}
	}
	return bytes >= req.MinBytes
}

// fetchPartReady is one partition of canCompleteFetch: whether it completes the fetch at once,
// else the bytes it has ready.
func (e *Engine) fetchPartReady(b *broker, fp *FetchPartition) (bool, int64) {
	r := e.localReplica(b.id, fp.TP)
	if r == nil || !r.isLeader() || r.offline {
		return true, 0
	}
	if fp.CurrentLeaderEpoch >= 0 && fp.CurrentLeaderEpoch < r.leaderEpoch {
		return true, 0
	}
	leo := r.log.LogEndOffset()
	if fp.FetchOffset > leo {
		return true, 0
	}
	if fp.LastFetchedEpoch >= 0 {
		ep, off := r.log.Cache().EndOffsetFor(fp.LastFetchedEpoch, leo)
		if ep < fp.LastFetchedEpoch || off < fp.FetchOffset {
			return true, 0
		}
	}
	return false, (leo - fp.FetchOffset) * e.cfg.RecordSizeBytes
}

// completeFetch answers a parked fetch, re-reading without updating follower state again; the HW
// sent is the one current now.
func (e *Engine) completeFetch(b *broker, df *delayedFetch) {
	df.done = true
	req := df.req.Fetch
	consumer := req.ReplicaID == ClientNode
	kept := []FetchPartitionData{}
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		r := e.localReplica(b.id, fp.TP)
		if !consumer && e.unchangedForSession(r, req, fp) {
			continue // readPartition would answer nothing new, and the session would drop it
		}
		d, _ := e.readPartition(r, req, fp, false)
		if consumer || !quiet(fp, &d) {
			kept = append(kept, d)
		}
	}
	e.sendFetchResponse(b, df.req, &FetchResponse{Partitions: kept})
}

// unchangedForSession reports, cheaply, that a follower's partition would read as nothing new
// (no records, error or divergence, the HW and log start it already has), so that quiet
// drops it. It may answer false for such a partition; never true for another.
func (e *Engine) unchangedForSession(r *replica, req *FetchRequest, fp *FetchPartition) bool {
	if fp.SessionFull || r == nil {
		return false
	}
	log := &r.log
	if log.LogEndOffset() != fp.FetchOffset || log.HighWatermark() != fp.SessionHighWatermark || log.LogStartOffset() > fp.LogStartOffset {
		return false
	}
	if fp.LastFetchedEpoch >= 0 && fp.LastFetchedEpoch != log.Cache().Latest() {
		return false // EndOffsetFor decides; leave it to readPartition
	}
	return e.checkLeaderRequest(r, fp.CurrentLeaderEpoch, req.ReplicaID) == ErrNone
}

func (e *Engine) delayedFetchExpired(b *broker, df *delayedFetch) {
	if df == nil || df.done {
		return
	}
	e.completeFetch(b, df)
}

// handleOffsetsForEpoch answers the truncation phase's question on the leader.
func (e *Engine) handleOffsetsForEpoch(b *broker, m *Message) {
	req := m.OffsetsForEpoch
	resp := &OffsetsForEpochResponse{}
	for _, q := range req.Partitions {
		r := e.localReplica(b.id, q.TP)
		res := OffsetsForEpochResult{TP: q.TP, LeaderEpoch: -1, EndOffset: -1}
		if res.Error = e.checkLeaderRequest(r, q.CurrentLeaderEpoch, req.ReplicaID); res.Error == ErrNone {
			res.LeaderEpoch, res.EndOffset = e.era.answerOffsetsForEpoch(&r.log, q.LeaderEpoch)
		}
		resp.Partitions = append(resp.Partitions, res)
	}
	e.send(&Message{Type: MsgOffsetsForEpochResponse, From: b.id, To: m.From, ReplyTo: m.ID, OffsetsForEpochResp: resp})
}

// handleListOffsets answers a follower's OFFSET_OUT_OF_RANGE recovery.
func (e *Engine) handleListOffsets(b *broker, m *Message) {
	req := m.ListOffsets
	r := e.localReplica(b.id, req.TP)
	resp := &ListOffsetsResponse{TP: req.TP, LogEndOffset: -1, LogStartOffset: -1}
	if resp.Error = e.checkLeaderRequest(r, req.CurrentLeaderEpoch, req.ReplicaID); resp.Error == ErrNone {
		resp.LogEndOffset, resp.LogStartOffset = r.log.LogEndOffset(), r.log.LogStartOffset()
	}
	e.send(&Message{Type: MsgListOffsetsResponse, From: b.id, To: m.From, ReplyTo: m.ID, ListOffsetsResponse: resp})
}

// quiet reports that answer d to fp has nothing the follower's fetch session must hear (KIP-227
// incremental fetch responses): the session keeps the partitions with records, an error, a
// divergence, or a HW or log start that differs from the follower's. Partitions with nothing new
// are left out; the follower's state for them does not change either way.
func quiet(fp *FetchPartition, d *FetchPartitionData) bool {
	return !fp.SessionFull && len(d.Records) == 0 && d.Error == ErrNone && d.DivergingEpoch == nil &&
		d.HighWatermark == fp.SessionHighWatermark && d.LogStartOffset <= fp.LogStartOffset
}

func describeFetchPart(d FetchPartitionData) string {
	switch {
	case d.Error != ErrNone:
		return fmt.Sprintf("%s-%d %s", d.Topic, d.Partition, d.Error)
	case d.DivergingEpoch != nil:
		return fmt.Sprintf("%s-%d diverging epoch %d at %d", d.Topic, d.Partition, d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
	}
	return fmt.Sprintf("%s-%d %d records, HW %d", d.Topic, d.Partition, len(d.Records), d.HighWatermark)
}
