package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// A fetcher thread's loop (AbstractFetcherThread.doWork): maybeTruncate, then maybeFetch. The
// thread has at most one request in flight; its Fetch carries its ready partitions in a fetch
// session (FetchSessionHandler, Build). What a turn costs follows what changed, not the
// thread's size (the engine's fetcher_changes.go says how).

// FetchMessage is a Fetch's storage: the message, its body and room for the partition a steady
// incremental Fetch carries (usually one: the one that changed since the last round), in one
// allocation per fetch round. Messages are shared once sent (events and the view hold them): the
// engine hands out this storage (Follower.NewFetch) and reuses it only when nothing can refer to
// the message any more; one built but not sent goes back (KeepFetch).
type FetchMessage struct {
	m     protocol.Message
	body  protocol.FetchRequest
	parts [1]protocol.FetchPartition
}

// Message is the Fetch message the storage holds.
func (x *FetchMessage) Message() *protocol.Message { return &x.m }

// DoWork is one turn of the thread's loop.
func (t *FetcherThread) DoWork(h Follower) {
	if t.inflight != 0 || t.dead || h.Dead() {
		return
	}
	now := h.Now()
	if t.lastSent == now {
		// Simplification: a fetcher sends at most one request per simulated millisecond, so
		// zero latency with zero max wait cannot loop forever at one instant.
		t.WakeUp(h, now+1)
		return
	}
	rules := h.Rules()
	if t.maybeTruncate(h, &rules) {
		return
	}
	t.maybeFetch(h, &rules)
}

// FetchAfterTruncation is the rest of the doWork whose maybeTruncate got its OffsetsForLeaderEpoch
// answer (or lost it): maybeFetch, before any partition left Truncating (an intermediate round of
// KIP-279, or one added meanwhile) is asked about again in the next doWork (AbstractFetcherThread
// .doWork: maybeTruncate() then maybeFetch(), 0.11.0.2 l.101-113, 2.1.1, 3.7.0 l.111-114). With
// nothing to fetch the thread awaits replica.fetch.backoff.ms first.
func (t *FetcherThread) FetchAfterTruncation(h Follower) {
	if t.inflight != 0 || t.dead || h.Dead() {
		return
	}
	now := h.Now()
	if t.lastSent == now {
		t.WakeUp(h, now+1) // as DoWork: one request per simulated millisecond
		return
	}
	rules := h.Rules()
	t.maybeFetch(h, &rules)
}

// WakeUp has the thread work at time at, unless it is to work before.
func (t *FetcherThread) WakeUp(h Follower, at int64) {
	if t.dead {
		return // a dead thread never works again: nothing to wake
	}
	if t.Wake(at) {
		h.ScheduleWake(t, at)
	}
}

// maybeTruncate handles the partitions in the Truncating state; it reports whether it sent an
// OffsetsForLeaderEpoch request (the thread then waits for the answer). Kafka walks every
// partition for them; the thread only when it counts one (WalkAll: always).
func (t *FetcherThread) maybeTruncate(h Follower, rules *FetcherRules) bool {
	if t.truncatingCount == 0 && !rules.WalkAll {
		return false
	}
	var ask []protocol.OffsetsForEpochPartition
	t.ClearSent()
	now := h.Now()
	for i := range t.parts {
		st := &t.parts[i]
		if !st.Truncating() || st.DelayUntil() > now {
			continue
		}
		log := &st.replica.log
		latest := log.Cache().Latest()
		if !rules.EpochRequests || (latest < 0 && !rules.EmptyCacheAsks) {
			// No epochs to ask about: truncate to the fetch offset (the HW) and fetch.
			h.Truncate(st.Pid(), st.replica, st.FetchOffset(), "truncate to the high watermark (no leader epoch to ask about)")
			t.SetTruncating(st, false)
			st.SetFetchOffset(log.LogEndOffset())
			continue
		}
		ask = append(ask, protocol.OffsetsForEpochPartition{TP: h.TP(st.Pid()),
			CurrentLeaderEpoch: rules.RequestEpoch(st.Epoch()), LeaderEpoch: latest})
		t.AddSent(st, latest)
	}
	if len(ask) == 0 {
		return false
	}
	m := &protocol.Message{Type: protocol.MsgOffsetsForEpoch, From: t.owner, To: t.leader,
		OffsetsForEpoch: &protocol.OffsetsForEpochRequest{ReplicaID: t.owner, Partitions: ask}}
	h.Send(m)
	t.RequestSent(m.ID, now)
	return true
}

// maybeFetch sends one Fetch (every ready partition in the session; full or incremental), or
// waits.
func (t *FetcherThread) maybeFetch(h Follower, rules *FetcherRules) {
	x := h.NewFetch()
	req, ok, _ := t.buildFetch(h, rules, x.parts[:0])
	if !ok {
		h.KeepFetch(x)
		if len(t.parts) > 0 {
			// AbstractFetcherThread.maybeFetch (0.10.2.2 doWork, 2.1.1, 3.7.0): with no Fetch to
			// send the thread awaits partitionMapCond for replica.fetch.backoff.ms from now; a
			// delayed partition's deadline passing does not signal it, only addPartitions and
			// the like do (AddFetcher's WakeUp).
			t.WakeUp(h, h.Now()+rules.BackoffMs)
		}
		return
	}
	x.body = req
	x.m = protocol.Message{Type: protocol.MsgFetch, From: t.owner, To: t.leader, Fetch: &x.body}
	h.Send(&x.m)
	t.RequestSent(x.m.ID, h.Now())
}

// BuildFetch makes the thread's next Fetch (RemoteLeaderEndPoint.buildFetch with
// FetchSessionHandler.Builder: Build), or reports that there is none to send and the earliest
// backoff deadline of a delayed partition (information only: the thread then waits
// replica.fetch.backoff.ms from now, maybeFetch). Before fetch sessions every Fetch is full and
// sessionless. Before an incremental build the tests' Check looks at the change list
// (fetcher_check.go).
func (t *FetcherThread) BuildFetch(h Follower, into []protocol.FetchPartition) (req protocol.FetchRequest, ok bool, next int64) {
	rules := h.Rules()
	return t.buildFetch(h, &rules, into)
}

func (t *FetcherThread) buildFetch(h Follower, rules *FetcherRules, into []protocol.FetchPartition) (req protocol.FetchRequest, ok bool, next int64) {
	s := &t.session
	if rules.Check != nil && rules.Sessions && !s.Full() && !rules.WalkAll {
		t.checkChanges(h, rules)
	}
	parts, forgotten, next, ok := t.Build(rules.Sessions, rules.WalkAll, rules.Fencing, rules.TruncateOnFetch, h.Now(),
		rules.BackoffMs, h, into)
	if !ok {
		return req, false, next
	}
	req = protocol.FetchRequest{ReplicaID: t.owner, BrokerEpoch: h.BrokerEpoch(), MaxWaitMs: rules.MaxWaitMs,
		MinBytes: rules.MinBytes, FetcherID: t.id, SessionID: s.SessionID(), SessionEpoch: s.Epoch(),
		Partitions: parts, ForgottenTopicsData: forgotten}
	if !rules.Sessions {
		req.SessionID, req.SessionEpoch = protocol.InvalidSessionID, protocol.FinalEpoch // Fetch before v7: no session
	}
	if req.Partitions == nil {
		req.Partitions = []protocol.FetchPartition{}
	}
	return req, true, next
}

// backoff delays a partition by replica.fetch.backoff.ms.
func (t *FetcherThread) backoff(h Follower, rules *FetcherRules, st *PartitionFetchState) {
	st.SetDelayUntil(h.Now() + rules.BackoffMs)
	t.MoveToEnd(st) // delayPartitions: updateAndMoveToEnd
	t.NoteChange(st)
}
