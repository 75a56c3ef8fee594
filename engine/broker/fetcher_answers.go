package broker

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The answers to a fetcher thread's requests (AbstractFetcherThread.processFetchRequest,
// truncateToEpochEndOffsets, and ReplicaFetcherThread's handling of OFFSET_OUT_OF_RANGE). The
// engine finds the thread an answer is for (the one with that request in flight) and hands it
// here; each handler ends with the thread's next turn.

// sentByName is what the Fetch in flight carried (FetchSent) as the session handler asks it
// (SentFetch): by partition name. The thread keeps one, so an answer's handling allocates none.
// Each partition it is asked about is resolved (its pid and fetch state) and written down in the
// thread's answered, in the order asked: the handler's incremental check asks about every
// partition of the answer, in the answer's order, before any is processed, and the processing
// then reads what it resolved rather than resolving each partition a second time.
type sentByName struct {
	FetchSent
	names Follower
}

// answeredPartition is an answered partition resolved: its pid and the index of its fetch state
// in the thread's parts (-1: not in the thread). An index, not a pointer: the thread's scratch
// list then holds no pointers, which the collector's write barriers would check.
type answeredPartition struct{ pid, at int32 }

func (s *sentByName) Carried(tp protocol.TP) bool {
	t := s.t
	pid := s.names.PidOf(tp)
	var st *PartitionFetchState
	at, found := t.index(pid) // State, keeping the index
	if found {
		st = &t.parts[at]
	} else {
		at = -1
	}
	t.answered = append(t.answered, answeredPartition{pid: pid, at: int32(at)})
	_, ok := s.Of(pid, st) // with a recorded list (walkAll), Of does not read st
	return ok
}

// HandleFetchResponse applies the answer m to the thread's Fetch.
func (t *FetcherThread) HandleFetchResponse(h Follower, m *protocol.Message) {
	t.Answered()
	rules := h.Rules()
	sent := t.TakeFetchSent(rules.WalkAll)
	parts := m.FetchResponse.Partitions // read in place: an answer is not changed once sent
	t.answered = t.answered[:0]
	if rules.Sessions {
		// Read from the stamps, what the handler is handed is the same at every answer: it is
		// written once, not at every answer (a write of its pointers costs barriers while the
		// collector runs). A recorded list (walkAll) is new at every answer.
		if sent.walkAll || t.sentNames.walkAll || t.sentNames.t != t || t.sentNames.names != h {
			t.sentNames = sentByName{FetchSent: sent, names: h}
		}
		if !t.session.HandleResponse(m.FetchResponse, &t.sentNames) {
			t.DoWork(h) // a session error: nothing to process, no backoff; the next Fetch is full
			return
		}
	}
	// An incremental answer's check resolved every partition (answered); a full one's did not.
	// A partition failing below leaves the thread, and those after it move down one: a state
	// is taken where the check found it only if it is still there (pids are each once), else
	// looked up again.
	resolved := len(t.answered) == len(parts)
	now := h.Now()
	for i := range parts {
		d := &parts[i]
		var pid int32
		var st *PartitionFetchState
		if resolved {
			a := t.answered[i]
			if pid = a.pid; a.at >= 0 && int(a.at) < len(t.parts) && t.parts[a.at].pid == pid {
				st = &t.parts[a.at]
			} else {
				st = t.State(pid) // not in the thread when checked (rare), or moved since
			}
		} else {
			pid = h.PidOf(d.TP)
			st = t.State(pid)
		}
		if st == nil {
			continue // removed meanwhile
		}
		if sp, ok := sent.Of(pid, st); ok && st.Ready(now) && st.FetchOffset() == sp.FetchOffset() {
			t.processPartitionData(h, &rules, st, d, sp.Epoch())
			if t.dead {
				// The KafkaException left processFetchRequest's loop: the partitions after
				// this one are not processed, and the thread's run() is over.
				return
			}
		} // else not sent, moved or re-truncated meanwhile
	}
	t.DoWork(h)
}

// processPartitionData applies one partition of a fetch response.
func (t *FetcherThread) processPartitionData(h Follower, rules *FetcherRules, st *PartitionFetchState, d *protocol.FetchPartitionData, sentEpoch int32) {
	p := st.replica // the broker's replica (stable: a Partition never moves), without a lookup by pid
	log := &p.log
	switch d.Error {
	case protocol.ErrNone:
	case protocol.ErrFencedLeaderEpoch:
		t.fenced(h, rules, st, sentEpoch)
		return
	case protocol.ErrOffsetOutOfRange:
		t.fetchOffsetAndTruncate(h, rules, st)
		return
	default:
		t.backoff(h, rules, st)
		return
	}
	if d.DivergingEpoch != nil {
		// Truncate on fetch: same rule as the truncation phase; the response's HW is not applied.
		to, _ := TruncationOffset(log, st.FetchOffset(), d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
		h.Truncate(st.Pid(), p, to, fmt.Sprintf("diverging epoch %d ends at offset %d", d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset))
		st.Fetched(log.LogEndOffset(), log.Cache().Latest())
		t.NoteChange(st)
		return
	}
	if st.FetchOffset() != log.LogEndOffset() {
		// ReplicaFetcherThread.processPartitionData's "Offset mismatch" (RuntimeException in
		// 0.11.0.2, IllegalStateException in 2.1.1 and 3.7.0).
		t.processingFailed(h, rules, st, fmt.Sprintf("fetch offset %d is not the log end offset %d", st.FetchOffset(), log.LogEndOffset()))
		return
	}
	if d.RecordsBefore > 0 && len(d.Records) > 0 && !t.appendBelowEnd(h, rules, st, d) {
		return
	}
	preLEO := log.LogEndOffset()
	stale := log.HighWatermark() > preLEO // kept by a truncation before 2.4 (TruncationKeepsHW)
	if len(d.Records) > 0 {
		gap := max(0, -d.RecordsBefore)
		if gap > 0 {
			// The fetch offset was in a Gap of the leader's log: the batch after it starts past
			// the log end, which Log.append takes (its first offset is not below the LEO), and
			// the offsets between hold nothing here either.
			log.AppendGap(gap)
		}
		if rules.EpochCacheOnlyNewer {
			log.AppendAsFollowerOnlyNewerEpochs(d.Records)
		} else {
			log.AppendAsFollower(d.Records)
		}
		p.SessionsChanged() // the leader's sessions caching it, if it led before
		h.Appended(p, int(gap)+len(d.Records))
		st.Fetched(log.LogEndOffset(), d.Records[len(d.Records)-1].Epoch)
		// processFetchRequest (0.10.2.2 l.155-158, 2.1.1 l.317, 3.7.0 l.373): a partition that
		// got records moves to the end of partitionStates.
		t.MoveToEnd(st)
		t.NoteChange(st)
	}
	if d.LogStartOffset > log.LogStartOffset() {
		log.SetLogStartOffset(d.LogStartOffset)
		h.LogStartMoved(p.pid)
	}
	h.SetHighWatermark(p, d.HighWatermark)
	if stale && len(d.Records) > 0 && log.HighWatermark() > preLEO {
		h.HWMoved(p.pid, preLEO) // the records just appended below the HW, for the checker
	}
}

// appendBelowEnd handles records that start below the follower's log end (a Fetch from inside
// one of the leader's batches gets the whole batch: LogSegment.read): Log.append with
// assignOffsets false refuses them, as their first offset is below nextOffsetMetadata (0.11.0.2:
// IllegalArgumentException "Out of order offsets"; 2.1.1 and 3.7.0:
// UnexpectedAppendOffsetException). From 2.1 (KAFKA-6975) a log that is empty at its log start
// takes a batch that reaches its start: Partition.appendRecordsToFollowerOrFutureReplica
// truncateFullyAndStartAt the batch's first offset and appends again. It reports whether the
// records are to be appended.
func (t *FetcherThread) appendBelowEnd(h Follower, rules *FetcherRules, st *PartitionFetchState, d *protocol.FetchPartitionData) bool {
	p := st.replica
	log := &p.log
	leo := log.LogEndOffset()
	first := st.FetchOffset() - d.RecordsBefore
	last := first + int64(len(d.Records)) - 1
	if rules.AppendFromLogStart && leo == log.LogStartOffset() && first < leo && last >= leo {
		h.TruncateFullyAndStartAt(p, first, fmt.Sprintf("the leader's batch starts at offset %d, below this empty log's start %d: the log starts at the batch (KAFKA-6975)", first, leo))
		return true
	}
	t.processingFailed(h, rules, st, fmt.Sprintf("Log.append refused the leader's batch from offset %d: it starts below the log end offset %d (the fetch at %d was inside the batch)", first, leo, st.FetchOffset()))
	return false
}

// processingFailed is an error while a partition's data is processed (processFetchRequest's
// catch of a Throwable): before 2.3 the thread dies, from 2.3 (KIP-461) the partition is
// marked failed.
func (t *FetcherThread) processingFailed(h Follower, rules *FetcherRules, st *PartitionFetchState, why string) {
	if !rules.ErrorKillsThread {
		t.markFailed(h, st, why)
		return
	}
	// "throw new KafkaException(error processing data for partition ...)" out of doWork:
	// ShutdownableThread.run logs "Error due to" and returns. Nothing takes the thread out of
	// AbstractFetcherManager's fetcherThreadMap, so a later addFetcherForPartitions for its
	// leader and fetcher id hands it partitions it never fetches; only shutdownIdleFetcherThreads
	// removes it, once it has none.
	t.dead = true
	h.Emit(Event{Kind: FetcherDied, Pid: protocol.Some(st.Pid()), Reason: why,
		Arg: [4]int64{int64(t.id), int64(t.leader), int64(len(t.parts))}})
}

// fenced handles FENCED_LEADER_EPOCH: if our epoch is still the one we sent, we are behind the
// leader: the partition is marked failed and waits for a LeaderAndIsr.
func (t *FetcherThread) fenced(h Follower, rules *FetcherRules, st *PartitionFetchState, sentEpoch int32) {
	if sentEpoch == st.Epoch() {
		t.markFailed(h, st, "fenced: the leader is at a newer leader epoch")
		return
	}
	t.backoff(h, rules, st)
}

// markFailed stops fetching a partition (AbstractFetcherThread.markPartitionFailed).
func (t *FetcherThread) markFailed(h Follower, st *PartitionFetchState, why string) {
	pid := st.Pid()
	h.Emit(Event{Kind: PartitionFailed, Pid: protocol.Some(pid), Reason: why})
	t.RemovePartition(pid)
}

// fetchOffsetAndTruncate handles OFFSET_OUT_OF_RANGE: ask the leader for its offsets.
func (t *FetcherThread) fetchOffsetAndTruncate(h Follower, rules *FetcherRules, st *PartitionFetchState) {
	t.SetTruncating(st, false)
	t.MoveToEnd(st) // handleOutOfRangeError: updateAndMoveToEnd
	m := &protocol.Message{Type: protocol.MsgListOffsets, From: t.owner, To: t.leader, ListOffsets: &protocol.ListOffsetsRequest{
		ReplicaID: t.owner, TP: h.TP(st.Pid()), CurrentLeaderEpoch: rules.RequestEpoch(st.Epoch())}}
	t.ClearSent()
	t.AddSent(st, 0)
	h.Send(m)
	// The thread blocks on this call, as Kafka's does.
	t.RequestSent(m.ID, h.Now())
}

// HandleListOffsetsResponse applies the leader's offsets to the partition that was out of range.
func (t *FetcherThread) HandleListOffsetsResponse(h Follower, m *protocol.Message) {
	t.Answered()
	resp := m.ListOffsetsResponse
	pid := h.PidOf(resp.TP)
	st, sent := t.State(pid), t.TakeSent().Of(pid)
	if st != nil && sent != nil && st.Epoch() == sent.Epoch() {
		rules := h.Rules()
		p := st.replica
		log := &p.log
		t.NoteChange(st) // each case changes its fetch data or readiness, or removes it
		switch {
		case resp.Error == protocol.ErrFencedLeaderEpoch:
			t.fenced(h, &rules, st, sent.Epoch())
		case resp.Error != protocol.ErrNone:
			t.backoff(h, &rules, st)
		case resp.LogEndOffset < log.LogEndOffset() && rules.OutOfRangeFatal && !rules.UncleanElection:
			// Before 2.1 truncating below the follower's end needs unclean leader election
			// allowed: "Exiting because log truncation is not allowed" (KAFKA-1028; 0.10.2:
			// System.exit, 0.11: FatalExitError, which stops the thread first).
			t.dead = true
			h.Exit(pid, fmt.Sprintf("log truncation is not allowed (unclean.leader.election.enable is false): leader broker %d's log ends at %d, below this replica's %d",
				t.leader, resp.LogEndOffset, log.LogEndOffset()))
			return
		case resp.LogEndOffset < log.LogEndOffset():
			// The unclean-election case: divergence below this point is not repaired.
			h.Truncate(pid, p, resp.LogEndOffset, fmt.Sprintf("offset out of range: the leader's log ends at %d", resp.LogEndOffset))
			st.Fetched(log.LogEndOffset(), log.Cache().Latest())
		case resp.LogStartOffset > log.LogEndOffset():
			h.TruncateFullyAndStartAt(p, resp.LogStartOffset, "offset out of range: the leader's log starts past ours")
			st.Fetched(resp.LogStartOffset, -1)
		default:
			st.SetFetchOffset(max(resp.LogStartOffset, log.LogEndOffset()))
		}
	}
	t.DoWork(h)
}

// HandleOffsetsForEpochResponse applies the truncation phase's answers.
func (t *FetcherThread) HandleOffsetsForEpochResponse(h Follower, m *protocol.Message) {
	t.Answered()
	sentParts := t.TakeSent()
	rules := h.Rules()
	for _, res := range m.OffsetsForEpochResp.Partitions {
		pid := h.PidOf(res.TP)
		st, sent := t.State(pid), sentParts.Of(pid)
		if st == nil || sent == nil || !st.Truncating() || st.Epoch() != sent.Epoch() {
			continue
		}
		p := st.replica
		log := &p.log
		t.NoteChange(st) // each case changes its fetch data or readiness, or removes it
		switch res.Error {
		case protocol.ErrNone:
		case protocol.ErrFencedLeaderEpoch:
			t.fenced(h, &rules, st, sent.Epoch())
			continue
		default:
			t.backoff(h, &rules, st)
			continue
		}
		to, done := TruncationOffset(log, st.FetchOffset(), res.LeaderEpoch, res.EndOffset)
		h.Truncate(pid, p, to, fmt.Sprintf("OffsetsForLeaderEpoch(%d) answered (epoch %d, offset %d)", sent.AskedEpoch(), res.LeaderEpoch, res.EndOffset))
		st.SetFetchOffset(log.LogEndOffset())
		if done {
			t.SetTruncating(st, false)
			st.SetLastFetchedEpoch(log.Cache().Latest())
		}
	}
	t.FetchAfterTruncation(h)
}

// RequestFailed handles a failed send or a timeout of the request in flight: back off every
// partition of the thread. A failed Fetch also closes its session: the next Fetch is full
// (FetchSessionHandler.handleError).
func (t *FetcherThread) RequestFailed(h Follower, req *protocol.Message) {
	t.Answered()
	if req.Type == protocol.MsgFetch {
		t.session.HandleError()
	}
	rules := h.Rules()
	if req.Type == protocol.MsgFetch && rules.AwaitAfterFailedFetch {
		// AbstractFetcherThread.processFetchRequest before 3.1 (0.10.2.2 l.119-131, 0.11.0.2,
		// 2.1.1 l.273-287): the catch awaits partitionMapCond for fetchBackOffMs, then
		// handlePartitionsWithErrors delays every partition by fetchBackOffMs from then. The
		// next doWork finds nothing ready and awaits again: the next Fetch leaves two backoffs
		// after the failure.
		wake := h.Now() + rules.BackoffMs
		for i := range t.parts {
			st := &t.parts[i]
			st.SetDelayUntil(wake + rules.BackoffMs)
			t.NoteChange(st)
		}
		if len(t.parts) > 0 {
			t.WakeUp(h, wake)
		}
		return
	}
	if req.Type != protocol.MsgFetch {
		// An OffsetsForLeaderEpoch or ListOffsets that got no answer delays only the partitions
		// it asked about, and the thread goes on to fetch the others at once: the send's
		// exception becomes an error for each partition of the request (0.11.0.2
		// ReplicaFetcherThread.fetchEpochsFromLeader, then maybeTruncate's delayPartitions; 2.1.1
		// fetchEpochEndOffsets, then truncateToEpochEndOffsets' handlePartitionsWithErrors, in
		// the doWork that runs maybeFetch next; 3.7.0 the same, and handleOutOfRangeError's
		// catch for ListOffsets, one partition).
		for _, sent := range t.TakeSent() {
			if st := t.State(sent.pid); st != nil && st.Epoch() == sent.Epoch() {
				t.backoff(h, &rules, st)
			}
		}
		if req.Type == protocol.MsgOffsetsForEpoch {
			t.FetchAfterTruncation(h) // the rest of maybeTruncate's doWork
			return
		}
		t.DoWork(h) // a ListOffsets: handleOutOfRangeError ran in processFetchRequest, the doWork's end
		return
	}
	for i := range t.parts {
		t.backoff(h, &rules, &t.parts[i])
	}
	t.DoWork(h)
}
