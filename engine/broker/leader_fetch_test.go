package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// leaderOfTwo is broker 1 leading t-0 and t-1 (assignment 0, 1, 2; ISR 0, 1), two records each,
// through the replica manager and a fake broker, with fetch sessions on (100 bytes a record).
func leaderOfTwo(t *testing.T) (*fakeHost, *ReplicaManager) {
	t.Helper()
	h := &fakeHost{fakeFollower: newFakeFollower(0, 1), book: Rules{Replica: ReplicaRules{CheckpointIntervalMs: 5000},
		HW: HWRules{MinInsyncReplicas: 1, LagTimeMaxMs: 10000}, Isr: IsrRules{AlterPartition: true, LagTimeMaxMs: 10000},
		LeaderFetch: LeaderFetchRules{Sessions: true, SessionTouchedByFetch: true, NotLeaderForUnknownLocal: true,
			MaxBytes: 1 << 20, RecordSizeBytes: 100, SessionSlots: 10}}}
	var fetchers FetcherManager
	rm := NewReplicaManager(1, &fetchers)
	for pid := range int32(2) {
		p := h.replicas[pid]
		p.Log().AppendAsLeader(0, []int64{10*int64(pid) + 1, 10*int64(pid) + 2})
		rm.MakeLeader(h, pid, p, protocol.LeaderAndIsrState{TP: h.TP(pid), Leader: 1, LeaderEpoch: 1, ISR: []int32{0, 1},
			Replicas: []int32{0, 1, 2}}, nil)
	}
	h.calls = nil
	return h, &rm
}

// fetchFrom is follower's Fetch to broker 1 in session (id, epoch), listing pids at offset.
func fetchFrom(h *fakeHost, follower, id, epoch int32, offset int64, pids ...int32) *protocol.Message {
	h.nextID++
	req := &protocol.FetchRequest{ReplicaID: follower, BrokerEpoch: 7, MaxWaitMs: 500, MinBytes: 1, SessionID: id,
		SessionEpoch: epoch, Partitions: []protocol.FetchPartition{}}
	for _, pid := range pids {
		req.Partitions = append(req.Partitions, protocol.FetchPartition{TP: h.TP(pid), FetchOffset: offset,
			CurrentLeaderEpoch: 1, LastFetchedEpoch: -1})
	}
	return &protocol.Message{ID: h.nextID, Type: protocol.MsgFetch, From: follower, To: 1, Fetch: req}
}

// answered is the answer to Fetch m among the messages sent, as "t-0 2 records, HW 0" per
// partition; ok false if there is none.
func answered(h *fakeHost, m *protocol.Message) (resp *protocol.FetchResponse, parts []string, ok bool) {
	for _, s := range h.sent {
		if s.Type == protocol.MsgFetchResponse && s.ReplyTo == m.ID {
			for _, d := range s.FetchResponse.Partitions {
				parts = append(parts, DescribeFetchPartition(d))
			}
			return s.FetchResponse, parts, true
		}
	}
	return nil, nil, false
}

// TestLeaderFetchWithFakeBroker drives the leader's side of Fetch through a fake broker: a full
// Fetch answered at once that opens a session and moves the follower's state; an incremental
// Fetch with nothing to read parked in purgatory (its read moved the HW), and its expiry answering
// the partitions whose HW moved; a quiet incremental Fetch parked with no partition read, and an
// append completing it with that partition only; a stale timer of that park doing nothing; and a
// sessionless full Fetch parked on its partitions' watch lists, completed by an append.
func TestLeaderFetchWithFakeBroker(t *testing.T) {
	h, rm := leaderOfTwo(t)
	t0, t1 := h.replicas[0], h.replicas[1]
	h.now = 100

	full := fetchFrom(h, 0, protocol.InvalidSessionID, protocol.InitialEpoch, 0, 0, 1)
	rm.FetchMessages(h, full)
	resp, parts, ok := answered(h, full)
	if !ok || resp.Error != protocol.ErrNone || resp.SessionID == protocol.InvalidSessionID ||
		!slices.Equal(parts, []string{"t-0 2 records, HW 0", "t-1 2 records, HW 0"}) {
		t.Fatalf("the full Fetch: answered %v, %+v, %q", ok, resp, parts)
	}
	id := resp.SessionID
	s := rm.FetchSessions().Get(id)
	if s == nil || s.Size() != 2 || s.Epoch() != 1 || s.ReplicaID() != 0 || t0.FetchSessionCount() != 1 ||
		t0.Remote(0).LogEndOffset() != 0 {
		t.Fatalf("after the full Fetch: session %+v, t-0's sessions %d, follower 0's LEO %d", s, t0.FetchSessionCount(),
			t0.Remote(0).LogEndOffset())
	}

	// Follower 0 took both records: its read moves the HW of both (ISR 0, 1) but has no bytes,
	// so the Fetch waits, and its expiry answers the new HW.
	h.now = 110
	inc := fetchFrom(h, 0, id, 1, 2, 0, 1)
	rm.FetchMessages(h, inc)
	if _, _, ok := answered(h, inc); ok || len(h.fetchTimeouts) != 1 || h.fetchTimeouts[0].at != 610 ||
		t0.Log().HighWatermark() != 2 || t1.Log().HighWatermark() != 2 || s.Epoch() != 2 {
		t.Fatalf("an incremental Fetch with no bytes: answered %v, timeouts %+v, HWs %d and %d, epoch %d; want it parked until 610",
			ok, h.fetchTimeouts, t0.Log().HighWatermark(), t1.Log().HighWatermark(), s.Epoch())
	}
	if want := []string{"hw 0: 0 → 2 (leader, follower 0 at 2)", "hw 1: 0 → 2 (leader, follower 0 at 2)"}; !slices.Equal(h.calls, want) {
		t.Errorf("calls %q, want %q", h.calls, want)
	}
	h.now = 610
	rm.DelayedFetchExpired(h, h.fetchTimeouts[0].df, h.fetchTimeouts[0].seq)
	if resp, parts, ok := answered(h, inc); !ok || resp.SessionID != id ||
		!slices.Equal(parts, []string{"t-0 0 records, HW 2", "t-1 0 records, HW 2"}) {
		t.Fatalf("the expired Fetch: answered %v, %q; want both partitions' new HW", ok, parts)
	}

	// Nothing changed since: the next Fetch lists nothing and reads nothing, and waits; an append
	// to t-1 completes it with t-1 alone.
	h.now = 620
	quiet := fetchFrom(h, 0, id, 2, 2)
	rm.FetchMessages(h, quiet)
	if _, _, ok := answered(h, quiet); ok || len(h.fetchTimeouts) != 2 || s.Parked() == nil {
		t.Fatalf("a quiet incremental Fetch: answered %v, timeouts %d; want it parked", ok, len(h.fetchTimeouts))
	}
	h.now = 630
	sent := len(h.sent)
	rm.HandleProduce(h, &protocol.Message{ID: 900, Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
		Produce: &protocol.ProduceRequest{TP: h.TP(1), Acks: 1, RecordIDs: []int64{13}, TimeoutMs: 30000}})
	resp, parts, ok = answered(h, quiet)
	if !ok || resp.SessionID != id || !slices.Equal(parts, []string{"t-1 1 record, HW 2"}) || len(h.sent) != sent+2 ||
		s.Parked() != nil {
		t.Fatalf("after an append to t-1: answered %v, %q, %d sent; want t-1's new record only, with the produce's answer",
			ok, parts, len(h.sent)-sent)
	}
	sent = len(h.sent)
	rm.DelayedFetchExpired(h, h.fetchTimeouts[1].df, h.fetchTimeouts[1].seq)
	if len(h.sent) != sent {
		t.Error("the timer of a park already answered sent an answer")
	}

	// Before fetch sessions: follower 2's full Fetch at the log end waits on both partitions'
	// watch lists; an append to t-0 completes it, answered whole.
	h.book.LeaderFetch.Sessions = false
	h.now = 700
	old := fetchFrom(h, 2, protocol.InvalidSessionID, protocol.FinalEpoch, 3, 0, 1)
	old.Fetch.Partitions[0].FetchOffset = 2
	rm.FetchMessages(h, old)
	if _, _, ok := answered(h, old); ok || len(h.fetchTimeouts) != 3 || len(t0.watching()) != 1 || len(t1.watching()) != 1 {
		t.Fatalf("a sessionless Fetch at the log end: answered %v; want it parked on both partitions", ok)
	}
	h.now = 710
	rm.HandleProduce(h, &protocol.Message{ID: 901, Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
		Produce: &protocol.ProduceRequest{TP: h.TP(0), Acks: 0, RecordIDs: []int64{3}, TimeoutMs: 30000}})
	resp, parts, ok = answered(h, old)
	if !ok || resp.SessionID != protocol.InvalidSessionID || !slices.Equal(parts, []string{"t-0 1 record, HW 2", "t-1 0 records, HW 2"}) ||
		len(t0.watching()) != 0 || len(t1.watching()) != 1 {
		t.Fatalf("after an append to t-0: answered %v, %q, watchers %d and %d; want the whole answer, t-0's list emptied",
			ok, parts, len(t0.watching()), len(t1.watching()))
	}
	if n := len(t1.watching()); n != 1 || !t1.watching()[0].Done() {
		t.Errorf("t-1's watch list: %d, want the answered fetch, skipped until the list is next pruned", n)
	}
}

// TestLeaderFetchSessionErrors: an incremental Fetch for a session the leader does not have is
// answered FETCH_SESSION_ID_NOT_FOUND, one at the wrong epoch INVALID_FETCH_SESSION_EPOCH; a full
// Fetch naming a session closes it; losing the cache (a restart) takes every session off its
// partitions.
func TestLeaderFetchSessionErrors(t *testing.T) {
	h, rm := leaderOfTwo(t)
	h.now = 100
	full := fetchFrom(h, 0, protocol.InvalidSessionID, protocol.InitialEpoch, 0, 0, 1)
	rm.FetchMessages(h, full)
	resp, _, _ := answered(h, full)
	id := resp.SessionID
	for _, c := range []struct {
		id, epoch int32
		want      protocol.KafkaError
	}{{id + 1, 1, protocol.ErrFetchSessionIDNotFound}, {id, 5, protocol.ErrInvalidFetchSessionEpoch}} {
		m := fetchFrom(h, 0, c.id, c.epoch, 2, 0)
		rm.FetchMessages(h, m)
		if resp, _, ok := answered(h, m); !ok || resp.Error != c.want {
			t.Errorf("session %d epoch %d: %+v, want %s", c.id, c.epoch, resp, c.want)
		}
	}
	again := fetchFrom(h, 0, id, protocol.InitialEpoch, 2, 0)
	again.Fetch.MaxWaitMs = 0 // answered at once, with nothing to read
	rm.FetchMessages(h, again)
	resp, _, _ = answered(h, again)
	if rm.FetchSessions().Get(id) != nil || resp.SessionID == id || h.replicas[1].FetchSessionCount() != 0 ||
		h.replicas[0].FetchSessionCount() != 1 {
		t.Fatalf("a full Fetch naming session %d: new session %d, t-0 and t-1 cached by %d and %d sessions; want the old one closed",
			id, resp.SessionID, h.replicas[0].FetchSessionCount(), h.replicas[1].FetchSessionCount())
	}
	rm.LoseFetchSessions(h)
	if rm.FetchSessions().Len() != 0 || h.replicas[0].FetchSessionCount() != 0 {
		t.Errorf("after a restart: %d sessions, t-0 cached by %d", rm.FetchSessions().Len(), h.replicas[0].FetchSessionCount())
	}
}

// TestParkedFetchReadsReuseNoAnswer: a full Fetch that parks leaves its reads' buffer for the
// next full Fetch or parked Fetch's answer; one answered at once keeps the buffer in its answer,
// so a Fetch parking after it reads into another and the answer sent stays as it was.
func TestParkedFetchReadsReuseNoAnswer(t *testing.T) {
	h, rm := leaderOfTwo(t)
	h.now = 100
	parked := fetchFrom(h, 0, protocol.InvalidSessionID, protocol.InitialEpoch, 2, 0, 1)
	rm.FetchMessages(h, parked)
	if _, _, ok := answered(h, parked); ok || cap(rm.parkedData) < 2 {
		t.Fatalf("a Fetch at the LEO: answered %v, buffer kept with room for %d; want parked, room for 2", ok, cap(rm.parkedData))
	}
	now := fetchFrom(h, 2, protocol.InvalidSessionID, protocol.InitialEpoch, 0, 0, 1)
	rm.FetchMessages(h, now)
	_, before, ok := answered(h, now)
	if !ok || rm.parkedData != nil {
		t.Fatalf("a Fetch with records to read: answered %v, buffer kept %v; want answered with the buffer", ok, rm.parkedData != nil)
	}
	rm.FetchMessages(h, fetchFrom(h, 0, protocol.InvalidSessionID, protocol.InitialEpoch, 2, 1, 0))
	if _, after, _ := answered(h, now); !slices.Equal(before, after) {
		t.Errorf("a Fetch parking after an answer changed it: %q, then %q", before, after)
	}
	// The first parked Fetch's answer, at its max wait, takes the buffer the last one left.
	ft := h.fetchTimeouts[0]
	rm.DelayedFetchExpired(h, ft.df, ft.seq)
	if _, parts, ok := answered(h, parked); !ok || len(parts) != 2 || rm.parkedData != nil {
		t.Errorf("the parked Fetch at its max wait: answered %v, %q, buffer kept %v; want both partitions, the buffer taken",
			ok, parts, rm.parkedData != nil)
	}
	if _, after, _ := answered(h, now); !slices.Equal(before, after) {
		t.Errorf("a parked Fetch's answer changed another: %q, then %q", before, after)
	}
}

// TestWatchListInline: the first two full fetches parked on a replica take one allocation (the
// list, holding them inline); a third grows it, and the order parked is kept.
func TestWatchListInline(t *testing.T) {
	df1, df2, df3 := &DelayedFetch{}, &DelayedFetch{}, &DelayedFetch{}
	p := NewPartition(1, 0)
	l := p.leadership()
	if n := testing.AllocsPerRun(100, func() { l.watchers = nil; p.watch(df1); p.watch(df2) }); n != 1 {
		t.Errorf("two fetches parked took %v allocations, want 1", n)
	}
	p.watch(df3)
	if got := p.watching(); !slices.Equal(got, []*DelayedFetch{df1, df2, df3}) {
		t.Errorf("parked %v, want the three in order", got)
	}
}
