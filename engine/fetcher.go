package engine

import (
	"fmt"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// Replica fetcher threads (AbstractFetcherManager, AbstractFetcherThread, ReplicaFetcherThread).
// A broker runs one fetcher per (source broker, fetcherId); fetcherId hashes the partition as
// Kafka does, so partitions spread over num.replica.fetchers threads per leader. A thread's loop,
// doWork, is maybeTruncate then maybeFetch: it has at most one request in flight, and its Fetch
// carries its ready partitions in a fetch session (fetch_session_handler.go). What a turn costs
// follows what changed, not the thread's size (fetcher_changes.go).

// fetchState is a follower's per-partition fetch state (broker.PartitionFetchState).
type fetchState = brk.PartitionFetchState

// fetcher is a fetcher thread: its partitions' state is package broker's (brk.FetcherThread:
// the fetch states, the pid index, the session handler, the change list and counts); its
// leader, id, request in flight, wake-up and what its request in flight carried are kept there
// too; making its requests and handling their answers are the engine's.
type fetcher struct {
	brk.FetcherThread
}

func fetcherKey(leader, id int32) int64 { return int64(leader)<<32 | int64(uint32(id)) }

func (b *broker) fetcherFor(leader, id int32) *fetcher {
	for _, f := range b.fetchers {
		if f.Leader() == leader && f.ID() == id {
			return f
		}
	}
	return nil
}

// addFetcher gives partition st to the fetcher for (leader, fetcherId), creating the thread if
// needed. An existing state at the same leader epoch is kept (no re-truncation).
func (e *Engine) addFetcher(b *broker, leader int32, st fetchState) {
	p := e.partitions[st.Pid()]
	f := e.fetcherStarted(b, leader, brk.FetcherID(p.topic, p.index, e.cfg.NumReplicaFetchers))
	if f.Add(st, b.replicaOf(p.pid).Log(), p.tp()) {
		e.wakeFetcher(f, e.now)
	}
}

// fetcherStarted is b's fetcher for (leader, id), started if there is none.
func (e *Engine) fetcherStarted(b *broker, leader, id int32) *fetcher {
	if f := b.fetcherFor(leader, id); f != nil {
		return f
	}
	f := &fetcher{FetcherThread: brk.NewFetcherThread(b.id, leader, id)}
	b.fetchers = append(b.fetchers, f)
	slices.SortFunc(b.fetchers, func(x, y *fetcher) int {
		if x.Leader() != y.Leader() {
			return int(x.Leader() - y.Leader())
		}
		return int(x.ID() - y.ID())
	})
	e.emit(Event{Type: EvFetcher, Broker: Some(b.id), Reason: "started",
		Text: fmt.Sprintf("broker %d started fetcher %d for leader broker %d", b.id, id, leader)})
	return f
}

// removeFetcherForPartitions takes partitions off every fetcher of b.
func (e *Engine) removeFetcherForPartitions(b *broker, pids []int32) {
	sorted := slices.Clone(pids)
	slices.Sort(sorted)
	for _, f := range b.fetchers {
		f.Remove(sorted)
	}
}

// shutdownIdleFetchers stops fetchers left without partitions.
func (e *Engine) shutdownIdleFetchers(b *broker) {
	b.fetchers = slices.DeleteFunc(b.fetchers, func(f *fetcher) bool {
		if f.Len() > 0 {
			return false
		}
		e.emit(Event{Type: EvFetcher, Broker: Some(b.id), Reason: "stopped",
			Text: fmt.Sprintf("broker %d stopped idle fetcher %d for leader broker %d", b.id, f.ID(), f.Leader())})
		return true
	})
}

func (e *Engine) wakeFetcher(f *fetcher, at int64) {
	if !f.Wake(at) {
		return
	}
	e.schedule(fetcherWake{e.timer(e.brokers[f.Owner()]), fetcherKey(f.Leader(), f.ID())}.due(at))
}

func (e *Engine) fetcherWake(b *broker, key int64) {
	f := b.fetcherFor(int32(key>>32), int32(uint32(key)))
	if f == nil || !f.Woken(e.now) {
		return
	}
	e.doWork(b, f)
}

// doWork is one turn of the fetcher thread's loop.
func (e *Engine) doWork(b *broker, f *fetcher) {
	if f.InFlight() != 0 || b.state == brokerDead {
		return
	}
	if f.LastSent() == e.now {
		// Simplification: a fetcher sends at most one request per simulated millisecond, so
		// zero latency with zero max wait cannot loop forever at one instant.
		e.wakeFetcher(f, e.now+1)
		return
	}
	if e.maybeTruncate(b, f) {
		return
	}
	e.maybeFetch(b, f)
}

// maybeTruncate handles the partitions in the Truncating state; it reports whether it sent an
// OffsetsForLeaderEpoch request (the thread then waits for the answer). Kafka walks every
// partition for them; the engine only when it counts one (followerWalkAll: always).
func (e *Engine) maybeTruncate(b *broker, f *fetcher) bool {
	if f.TruncatingCount() == 0 && !e.followerWalkAll {
		return false
	}
	var ask []OffsetsForEpochPartition
	f.ClearSent()
	for i := range f.Len() {
		st := f.At(i)
		if !st.Truncating() || st.DelayUntil() > e.now {
			continue
		}
		r := b.replicaOf(st.Pid())
		latest := r.Log().Cache().Latest()
		if !e.era.epochRequests || (latest < 0 && !e.era.emptyCacheAsks) {
			// No epochs to ask about: truncate to the fetch offset (the HW) and fetch.
			e.truncate(r, st.FetchOffset(), "truncate to the high watermark (no leader epoch to ask about)")
			f.SetTruncating(st, false)
			st.SetFetchOffset(r.Log().LogEndOffset())
			continue
		}
		ask = append(ask, OffsetsForEpochPartition{TP: e.partitions[st.Pid()].tp(),
			CurrentLeaderEpoch: e.era.requestEpoch(st.Epoch()), LeaderEpoch: latest})
		f.AddSent(st, latest)
	}
	if len(ask) == 0 {
		return false
	}
	m := &Message{Type: MsgOffsetsForEpoch, From: b.id, To: f.Leader(),
		OffsetsForEpoch: &OffsetsForEpochRequest{ReplicaID: b.id, Partitions: ask}}
	e.send(m)
	f.RequestSent(m.ID, e.now)
	return true
}

// maybeFetch sends one Fetch (buildFetch: every ready partition in the session; full or
// incremental), or waits.
func (e *Engine) maybeFetch(b *broker, f *fetcher) {
	// The message, its body and the partitions of a steady incremental Fetch in one allocation
	// (one per fetch round). A message built but not sent is kept for the next build: nothing
	// refers to it.
	x := e.spareFetch
	if x == nil {
		x = &fetchRequestMessage{}
	}
	req, ok, next := e.buildFetch(f, x.parts[:0])
	if !ok {
		e.spareFetch = x
		if f.Len() > 0 {
			e.wakeFetcher(f, next)
		}
		return
	}
	e.spareFetch = nil
	x.body = req
	x.m = Message{Type: MsgFetch, From: b.id, To: f.Leader(), Fetch: &x.body}
	e.send(&x.m)
	f.RequestSent(x.m.ID, e.now)
}

// fetcherOf returns the fetcher of b waiting for the answer to request id.
func (b *broker) fetcherOf(id uint64) *fetcher {
	for _, f := range b.fetchers {
		if f.InFlight() == id {
			return f
		}
	}
	return nil
}

// backoff delays a partition of f by replica.fetch.backoff.ms.
func (e *Engine) backoff(f *fetcher, st *fetchState) {
	st.SetDelayUntil(e.now + max(1, e.cfg.ReplicaFetchBackoffMs))
	f.NoteChange(st)
}

// handleFetchResponse is processFetchRequest's answer handling on the follower.
func (e *Engine) handleFetchResponse(b *broker, m *Message) {
	f := b.fetcherOf(m.ReplyTo)
	if f == nil {
		return
	}
	f.Answered()
	sent := f.TakeFetchSent(e.followerWalkAll)
	if e.era.fetchSessions {
		if e.fetchSent.pidOf == nil {
			e.fetchSent.pidOf = e.pidOf
		}
		e.fetchSent.FetchSent = sent
		ok := f.Session().HandleResponse(m.FetchResponse, &e.fetchSent)
		e.fetchSent.FetchSent = brk.FetchSent{}
		if !ok {
			e.doWork(b, f) // a session error: nothing to process, no backoff; the next Fetch is full
			return
		}
	}
	for _, d := range m.FetchResponse.Partitions {
		pid := e.pidOf(d.TP)
		st := f.State(pid)
		if st == nil {
			continue // removed meanwhile
		}
		if sp, ok := sent.Of(pid, st); ok && st.Ready(e.now) && st.FetchOffset() == sp.FetchOffset() {
			e.processPartitionData(b, f, st, d, sp.Epoch())
		} // else not sent, moved or re-truncated meanwhile
	}
	e.doWork(b, f)
}

// processPartitionData applies one partition of a fetch response.
func (e *Engine) processPartitionData(b *broker, f *fetcher, st *fetchState, d FetchPartitionData, sentEpoch int32) {
	r := b.replicaOf(st.Pid())
	switch d.Error {
	case ErrNone:
	case ErrFencedLeaderEpoch:
		e.fenced(b, f, st, sentEpoch)
		return
	case ErrOffsetOutOfRange:
		e.fetchOffsetAndTruncate(b, f, st)
		return
	default:
		e.backoff(f, st)
		return
	}
	if d.DivergingEpoch != nil {
		// Truncate on fetch: same rule as the truncation phase; the response's HW is not applied.
		t, _ := brk.TruncationOffset(r.Log(), st.FetchOffset(), d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
		e.truncate(r, t, fmt.Sprintf("diverging epoch %d ends at offset %d", d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset))
		st.Fetched(r.Log().LogEndOffset(), r.Log().Cache().Latest())
		f.NoteChange(st)
		return
	}
	if st.FetchOffset() != r.Log().LogEndOffset() {
		e.markFailed(b, f, st, fmt.Sprintf("fetch offset %d is not the log end offset %d", st.FetchOffset(), r.Log().LogEndOffset()))
		return
	}
	if len(d.Records) > 0 {
		r.Log().AppendAsFollower(d.Records)
		e.afterAppend(r, len(d.Records))
		st.Fetched(r.Log().LogEndOffset(), d.Records[len(d.Records)-1].Epoch)
		f.NoteChange(st)
	}
	if d.LogStartOffset > r.Log().LogStartOffset() {
		r.Log().SetLogStartOffset(d.LogStartOffset)
		e.sessionsChanged(r)
		e.logStartMoved(r)
	}
	e.setFollowerHW(r, d.HighWatermark)
}

// fenced handles FENCED_LEADER_EPOCH: if our epoch is still the one we sent, we are behind the
// leader: the partition is marked failed and waits for a LeaderAndIsr.
func (e *Engine) fenced(b *broker, f *fetcher, st *fetchState, sentEpoch int32) {
	if sentEpoch == st.Epoch() {
		e.markFailed(b, f, st, "fenced: the leader is at a newer leader epoch")
		return
	}
	e.backoff(f, st)
}

func (e *Engine) markFailed(b *broker, f *fetcher, st *fetchState, why string) {
	p := e.partitions[st.Pid()]
	e.emit(Event{Type: EvFailed, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index), Reason: why,
		Text: fmt.Sprintf("broker %d stopped fetching %s: %s", b.id, p.name(), why)})
	f.RemovePartition(st.Pid())
}

// fetchOffsetAndTruncate handles OFFSET_OUT_OF_RANGE: ask the leader for its offsets.
func (e *Engine) fetchOffsetAndTruncate(b *broker, f *fetcher, st *fetchState) {
	p := e.partitions[st.Pid()]
	f.SetTruncating(st, false)
	m := &Message{Type: MsgListOffsets, From: b.id, To: f.Leader(), ListOffsets: &ListOffsetsRequest{
		ReplicaID: b.id, TP: p.tp(), CurrentLeaderEpoch: e.era.requestEpoch(st.Epoch())}}
	f.ClearSent()
	f.AddSent(st, 0)
	e.send(m)
	// The thread blocks on this call, as Kafka's does.
	f.RequestSent(m.ID, e.now)
}

func (e *Engine) handleListOffsetsResponse(b *broker, m *Message) {
	f := b.fetcherOf(m.ReplyTo)
	if f == nil {
		return
	}
	f.Answered()
	resp := m.ListOffsetsResponse
	pid := e.pidOf(resp.TP)
	st, sent := f.State(pid), f.TakeSent().Of(pid)
	if st != nil && sent != nil && st.Epoch() == sent.Epoch() {
		r := b.replicaOf(pid)
		f.NoteChange(st) // each case changes its fetch data or readiness, or removes it
		switch {
		case resp.Error == ErrFencedLeaderEpoch:
			e.fenced(b, f, st, sent.Epoch())
		case resp.Error != ErrNone:
			e.backoff(f, st)
		case resp.LogEndOffset < r.Log().LogEndOffset():
			// The unclean-election case: divergence below this point is not repaired.
			e.truncate(r, resp.LogEndOffset, fmt.Sprintf("offset out of range: the leader's log ends at %d", resp.LogEndOffset))
			st.Fetched(r.Log().LogEndOffset(), r.Log().Cache().Latest())
		case resp.LogStartOffset > r.Log().LogEndOffset():
			dropped := r.Log().Records()
			oldLEO, oldHW := r.Log().LogEndOffset(), r.Log().HighWatermark()
			r.Log().TruncateFullyAndStartAt(resp.LogStartOffset)
			e.sessionsChanged(r)
			e.logStartMoved(r)
			e.emitTruncate(r, oldLEO, dropped, "offset out of range: the leader's log starts past ours")
			if hw := r.Log().HighWatermark(); hw != oldHW {
				// UnifiedLog.truncateFullyAndStartAt moves the high watermark to the new start.
				e.hwChanged(r, oldHW, "follower")
			}
			st.Fetched(resp.LogStartOffset, -1)
		default:
			st.SetFetchOffset(max(resp.LogStartOffset, r.Log().LogEndOffset()))
		}
	}
	e.doWork(b, f)
}

// handleOffsetsForEpochResponse applies the truncation phase's answers.
func (e *Engine) handleOffsetsForEpochResponse(b *broker, m *Message) {
	f := b.fetcherOf(m.ReplyTo)
	if f == nil {
		return
	}
	f.Answered()
	sentParts := f.TakeSent()
	for _, res := range m.OffsetsForEpochResp.Partitions {
		pid := e.pidOf(res.TP)
		st, sent := f.State(pid), sentParts.Of(pid)
		if st == nil || sent == nil || !st.Truncating() || st.Epoch() != sent.Epoch() {
			continue
		}
		r := b.replicaOf(pid)
		f.NoteChange(st) // each case changes its fetch data or readiness, or removes it
		switch res.Error {
		case ErrNone:
		case ErrFencedLeaderEpoch:
			e.fenced(b, f, st, sent.Epoch())
			continue
		default:
			e.backoff(f, st)
			continue
		}
		t, done := brk.TruncationOffset(r.Log(), st.FetchOffset(), res.LeaderEpoch, res.EndOffset)
		e.truncate(r, t, fmt.Sprintf("OffsetsForLeaderEpoch(%d) answered (epoch %d, offset %d)", sent.AskedEpoch(), res.LeaderEpoch, res.EndOffset))
		st.SetFetchOffset(r.Log().LogEndOffset())
		if done {
			f.SetTruncating(st, false)
			st.SetLastFetchedEpoch(r.Log().Cache().Latest())
		}
	}
	e.doWork(b, f)
}

// fetcherRequestFailed handles a failed send or a timeout: back off every partition of it. A
// failed Fetch also closes its session: the next Fetch is full (handleError).
func (e *Engine) fetcherRequestFailed(b *broker, req *Message) {
	f := b.fetcherOf(req.ID)
	if f == nil {
		return
	}
	f.Answered()
	if req.Type == MsgFetch {
		f.Session().HandleError()
	}
	for i := range f.Len() {
		e.backoff(f, f.At(i))
	}
	e.doWork(b, f)
}
