package engine

import (
	"fmt"
	"slices"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
)

// Ports of Kafka's fetch session tests (KIP-227): FetchSessionTest (the leader's FetchManager and
// FetchSessionCache) and FetchSessionHandlerTest (the follower's FetchSessionHandler), at 3.7.0.
// Kafka's tests build requests and responses by hand against the classes; here a follower's
// fetcher thread sends them (sessionSetup), or a test sends a Fetch by hand (sendSessionFetch)
// to a leader, and reads its answer. The cache's tests are in kafka_fetch_session_cache_test.go.

// sessionSetup is leader broker 0 and follower broker 1 of t-0..t-(n-1), quiesced, with the
// follower's fetcher thread for all of them and the leader's fetch session cache empty.
type sessionSetup struct {
	e     *Engine
	parts []*partition
	b     *broker  // the follower
	f     *fetcher // its thread
}

func newSessionSetup(t *testing.T, era string, n int, cfg map[string]string) *sessionSetup {
	t.Helper()
	assignment := make([][]int32, n)
	for i := range assignment {
		assignment[i] = []int32{0, 1}
	}
	all := map[string]string{"inter.broker.protocol.version": `"` + era + `"`}
	for k, v := range cfg {
		all[k] = v
	}
	e := newKafkaEngine(t, 2, assignment, all)
	quiesce(t, e)
	e.brokers[0].rm.LoseFetchSessions(e.brokers[0].Broker) // the start-up's sessions: begin from an empty cache
	s := &sessionSetup{e: e, b: e.brokers[1]}
	for i := range n {
		p := e.partitionOf(ktTopic, int32(i))
		s.parts = append(s.parts, p)
		r := e.replicaOn(p.pid, 1)
		st := e.era.initialFetchState(r.Log(), p.pid, r.LeaderEpoch())
		e.addFetcher(s.b, 0, st)
	}
	s.f = s.b.fetchers.For(0, 0)
	if s.f == nil || s.f.Len() != n {
		t.Fatalf("want one fetcher thread for the %d partitions", n)
	}
	return s
}

func (s *sessionSetup) doWork(t *testing.T) { t.Helper(); doWorkOnce(t, s.e, s.b, s.f) }

// last returns the last message of type typ that broker from sent, or fails.
func lastMessage(t *testing.T, e *Engine, typ string, from int32) *Message {
	t.Helper()
	for i := len(e.events) - 1; i >= 0; i-- {
		if m := e.events[i].Message; m != nil && m.Type == typ && m.From == from {
			return m
		}
	}
	t.Fatalf("no %s from broker %d", typ, from)
	return nil
}

// lastExchange is the follower's last answered Fetch and the leader's answer to it. The thread
// loops by itself: when the answer has been handled, its next Fetch is already built and in
// flight, so what a test changes after a doWork shows in the Fetch after next.
func (s *sessionSetup) lastExchange(t *testing.T) (*FetchRequest, *FetchResponse) {
	t.Helper()
	resp := lastMessage(t, s.e, MsgFetchResponse, 0)
	for _, ev := range s.e.events {
		if m := ev.Message; m != nil && m.ID == resp.ReplyTo {
			return m.Fetch, resp.FetchResponse
		}
	}
	t.Fatalf("no Fetch #%d", resp.ReplyTo)
	return nil, nil
}

// names lists the partitions of a Fetch or answer as "t-0@5" (request) or "t-0" (answer).
func reqNames(parts []FetchPartition) []string {
	out := []string{}
	for _, p := range parts {
		out = append(out, fmt.Sprintf("%s-%d@%d", p.Topic, p.Partition, p.FetchOffset))
	}
	return out
}

func respNames(parts []FetchPartitionData) []string {
	out := []string{}
	for _, d := range parts {
		out = append(out, fmt.Sprintf("%s-%d", d.Topic, d.Partition))
	}
	return out
}

func tpNames(tps []TP) []string {
	out := []string{}
	for _, tp := range tps {
		out = append(out, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	return out
}

func wantNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestKafkaFetchSessionFullThenIncremental ports FetchSessionTest.testIncrementalFetchSession and
// FetchSessionHandlerTest.testIncrementals, through a follower's thread, in both eras with
// sessions: the first Fetch is full and creates the session; the next ones list only what
// changed, and the answers carry only partitions with records or a new HW.
func TestKafkaFetchSessionFullThenIncremental(t *testing.T) {
	for _, era := range []string{"3.7", "2.1"} {
		t.Run(era, func(t *testing.T) {
			s := newSessionSetup(t, era, 3, nil)
			s.doWork(t)
			req, resp := s.lastExchange(t)
			if req.SessionID != InvalidSessionID || req.SessionEpoch != InitialEpoch {
				t.Fatalf("first Fetch: session %d epoch %d, want a full fetch (0, 0)", req.SessionID, req.SessionEpoch)
			}
			wantNames(t, "first Fetch", reqNames(req.Partitions), "t-0@0", "t-1@0", "t-2@0")
			wantNames(t, "its answer", respNames(resp.Partitions), "t-0", "t-1", "t-2")
			id := resp.SessionID
			if id == InvalidSessionID || s.e.brokers[0].rm.FetchSessions().Get(id) == nil {
				t.Fatalf("the full answer names session %d; the leader's cache must hold it", id)
			}

			// New records on t-1: the next Fetch lists nothing (no fetch data changed), and is
			// answered at once with t-1 only.
			appendLeader(s.e, s.e.replicaOn(s.parts[1].pid, 0), 2)
			s.e.brokers[0].rm.TryCompleteWatchers(s.e.brokers[0].Broker, s.e.replicaOn(s.parts[1].pid, 0))
			s.doWork(t)
			req, resp = s.lastExchange(t)
			if req.SessionID != id || req.SessionEpoch != 1 {
				t.Errorf("second Fetch: session %d epoch %d, want (%d, 1)", req.SessionID, req.SessionEpoch, id)
			}
			wantNames(t, "second Fetch", reqNames(req.Partitions))
			wantNames(t, "its answer", respNames(resp.Partitions), "t-1")
			if len(resp.Partitions) == 1 && len(resp.Partitions[0].Records) != 2 {
				t.Errorf("the answer carries %d records of t-1, want 2", len(resp.Partitions[0].Records))
			}

			// t-1's fetch offset moved: the next Fetch lists it alone. Its fetch moves the
			// leader's HW; the answer (at replica.fetch.wait.max.ms: a HW does not complete a
			// DelayedFetch) carries t-1's new HW, and only it.
			s.doWork(t)
			req, resp = s.lastExchange(t)
			if req.SessionEpoch != 2 {
				t.Errorf("third Fetch: epoch %d, want 2", req.SessionEpoch)
			}
			wantNames(t, "third Fetch", reqNames(req.Partitions), "t-1@2")
			wantNames(t, "its answer", respNames(resp.Partitions), "t-1")
			if len(resp.Partitions) == 1 && (resp.Partitions[0].HighWatermark != 2 || len(resp.Partitions[0].Records) != 0) {
				t.Errorf("the answer for t-1: %s, want HW 2 and no records", brk.DescribeFetchPartition(resp.Partitions[0]))
			}
			if hw := s.e.replicaOn(s.parts[1].pid, 1).Log().HighWatermark(); hw != 2 {
				t.Errorf("follower HW of t-1 %d, want 2", hw)
			}

			// Nothing changed: an empty incremental Fetch, an empty answer.
			s.doWork(t)
			req, resp = s.lastExchange(t)
			wantNames(t, "fourth Fetch", reqNames(req.Partitions))
			wantNames(t, "its answer", respNames(resp.Partitions))
			if resp.SessionID != id || req.SessionEpoch != 3 {
				t.Errorf("fourth exchange: epoch %d, answer's session %d; want 3 and %d", req.SessionEpoch, resp.SessionID, id)
			}
		})
	}
}

// TestKafkaFetchSessionIncrementalBuilder ports FetchSessionHandlerTest.testIncrementals'
// comparison: a partition is sent again when its fetch offset, log start offset, current leader
// epoch or last fetched epoch changed (PartitionData.equals), and only then.
func TestKafkaFetchSessionIncrementalBuilder(t *testing.T) {
	s := newSessionSetup(t, "3.7", 5, nil)
	s.doWork(t)
	// Each change is noted, as the engine's code notes it (noteChange); partition 1's is not a
	// change of its fetch data.
	st := func(i int) *fetchState { s.f.NoteChange(s.f.State(s.parts[i].pid)); return s.f.State(s.parts[i].pid) }
	st(0).SetFetchOffset(7)
	s.e.replicaOn(s.parts[1].pid, 1).Log().SetLogStartOffset(0) // unchanged: not sent
	st(1)
	st(2).SetEpochForTest(st(2).Epoch() + 1)
	st(3).SetLastFetchedEpoch(9)
	req, _, _ := s.f.BuildFetch(s.b.Broker, nil)
	wantNames(t, "incremental Fetch", reqNames(req.Partitions), "t-0@7", "t-2@0", "t-3@0")
	if req.SessionEpoch != 1 || s.f.SentCount() != 5 {
		t.Errorf("epoch %d and %d session partitions, want 1 and 5", req.SessionEpoch, s.f.SentCount())
	}
	// Built again with nothing changed (testDoubleBuild): nothing to send.
	req, _, _ = s.f.BuildFetch(s.b.Broker, nil)
	wantNames(t, "the same Fetch built again", reqNames(req.Partitions))
}

// TestKafkaFetchSessionForgottenPartitions ports FetchSessionHandlerTest
// .testIncrementalPartitionRemoval, FetchSessionTest.testToForgetPartitions and
// testZeroSizeFetchSession: partitions leaving the thread are forgotten by the next Fetch; one
// removed and added back before it stays in the session; the session whose last partition is
// forgotten is closed, and the thread's next Fetch is full and creates another.
func TestKafkaFetchSessionForgottenPartitions(t *testing.T) {
	s := newSessionSetup(t, "3.7", 3, nil)
	s.doWork(t)
	_, resp := s.lastExchange(t)
	id := resp.SessionID
	leader := s.e.brokers[0]

	s.e.removeFetcherForPartitions(s.b, []int32{s.parts[0].pid})
	// t-1 leaves and comes back (makeFollowers restarting it) before the next Fetch is built:
	// still in the session, with the same fetch data, so neither sent nor forgotten.
	s.e.removeFetcherForPartitions(s.b, []int32{s.parts[1].pid})
	r1 := s.e.replicaOn(s.parts[1].pid, 1)
	st := s.e.era.initialFetchState(r1.Log(), s.parts[1].pid, r1.LeaderEpoch())
	s.e.addFetcher(s.b, 0, st)
	s.doWork(t) // the Fetch built before the changes
	s.doWork(t)
	req, _ := s.lastExchange(t)
	wantNames(t, "forgotten", tpNames(req.ForgottenTopicsData), "t-0")
	wantNames(t, "listed", reqNames(req.Partitions))
	sess := leader.rm.FetchSessions().Get(id)
	if sess == nil || sess.Size() != 2 || sess.Caches(s.parts[0].pid) {
		t.Fatalf("the leader's session after the forget: %+v, want t-1 and t-2", sess)
	}
	if s.e.replicaOn(s.parts[0].pid, 0).FetchSessionCount() != 0 {
		t.Error("t-0's leader replica still lists the session")
	}

	s.e.removeFetcherForPartitions(s.b, []int32{s.parts[1].pid, s.parts[2].pid})
	s.doWork(t)
	s.doWork(t)
	req, resp = s.lastExchange(t)
	wantNames(t, "forgotten", tpNames(req.ForgottenTopicsData), "t-1", "t-2")
	if resp.SessionID != InvalidSessionID || len(resp.Partitions) != 0 || leader.rm.FetchSessions().Get(id) != nil {
		t.Fatalf("answer to forgetting the last partitions: session %d, %d partitions; want the session closed", resp.SessionID, len(resp.Partitions))
	}
	if s.f.Session().SessionID() != InvalidSessionID || !s.f.Session().Full() || s.f.InFlight() != 0 {
		t.Errorf("the handler after the session closed: %+v (request in flight %d), want INITIAL and no Fetch", *s.f.Session(), s.f.InFlight())
	}

	r0 := s.e.replicaOn(s.parts[0].pid, 1)
	st = s.e.era.initialFetchState(r0.Log(), s.parts[0].pid, r0.LeaderEpoch())
	s.e.addFetcher(s.b, 0, st)
	s.doWork(t)
	req, resp = s.lastExchange(t)
	if req.SessionEpoch != InitialEpoch || req.SessionID != InvalidSessionID || resp.SessionID == id || resp.SessionID == InvalidSessionID {
		t.Errorf("after the close: Fetch (%d, %d), answer session %d; want a full Fetch and a new session", req.SessionID, req.SessionEpoch, resp.SessionID)
	}
}

// TestKafkaFetchSessionEpochMismatch ports FetchSessionTest's epoch check (newContext): an
// incremental Fetch with an epoch the session does not expect gets INVALID_FETCH_SESSION_EPOCH,
// no partitions, and leaves the session as it was; the follower (FetchSessionHandler
// .handleResponse) drops the answer without backing off, and its next Fetch is full, closing the
// session and creating another.
func TestKafkaFetchSessionEpochMismatch(t *testing.T) {
	s := newSessionSetup(t, "3.7", 2, nil)
	s.doWork(t)
	s.doWork(t)
	_, resp := s.lastExchange(t)
	id := resp.SessionID
	leader := s.e.brokers[0]
	runFor(t, s.e, 2) // the thread's next Fetch waits in the leader's purgatory
	expected := leader.rm.FetchSessions().Get(id).Epoch()

	// A duplicate of an older Fetch, by hand, reaches the leader.
	bad := sendSessionFetch(t, s.e, 1, 1, id, expected-1)
	if bad.Error != ErrInvalidFetchSessionEpoch || bad.SessionID != InvalidSessionID || len(bad.Partitions) != 0 {
		t.Fatalf("answer to epoch %d (session expects %d): %+v", expected-1, expected, bad)
	}
	if sess := leader.rm.FetchSessions().Get(id); sess == nil || sess.Epoch() != expected {
		t.Fatalf("the session after the bad epoch: %+v, want it at epoch %d", sess, expected)
	}

	// The thread's own Fetch carries a wrong epoch.
	s.doWork(t) // the parked Fetch; the next one is built
	s.f.Session().SetForTest(s.f.Session().SessionID(), s.f.Session().Epoch()+5)
	s.doWork(t) // the Fetch built before; the next one carries the wrong epoch
	before := s.f.At(0).DelayUntil()
	s.doWork(t)
	req, resp := s.lastExchange(t)
	if resp.Error != ErrInvalidFetchSessionEpoch {
		t.Fatalf("answer to the thread's Fetch at epoch %d: %+v", req.SessionEpoch, resp)
	}
	if s.f.At(0).DelayUntil() != before {
		t.Error("the partitions backed off after a session error; Kafka fetches again at once")
	}
	s.doWork(t)
	req, resp = s.lastExchange(t)
	if req.SessionID != id || req.SessionEpoch != InitialEpoch || len(req.Partitions) != 2 {
		t.Errorf("the Fetch after the error: (%d, %d) with %d partitions, want a full Fetch naming session %d", req.SessionID, req.SessionEpoch, len(req.Partitions), id)
	}
	if leader.rm.FetchSessions().Get(id) != nil || resp.SessionID == id || resp.SessionID == InvalidSessionID {
		t.Errorf("after the full Fetch: old session cached %v, new session %d; want the old one closed and a new one", leader.rm.FetchSessions().Get(id) != nil, resp.SessionID)
	}
}

// TestKafkaFetchSessionLeaderLosesCache: a leader whose process restarted has lost its cache
// (FetchSessionTest.testFetchSessionWithUnknownId): the follower's next incremental Fetch gets
// FETCH_SESSION_ID_NOT_FOUND, and its Fetch after that is full with no session id
// (FetchMetadata.INITIAL) and creates a session with a new id.
func TestKafkaFetchSessionLeaderLosesCache(t *testing.T) {
	s := newSessionSetup(t, "3.7", 2, nil)
	s.doWork(t)
	_, resp := s.lastExchange(t)
	id := resp.SessionID
	// The restart's effect on the cache (startBroker); the rest of a restart is not this test's.
	s.e.brokers[0].rm.LoseFetchSessions(s.e.brokers[0].Broker)
	s.doWork(t)
	req, resp := s.lastExchange(t)
	if req.SessionID != id || req.SessionEpoch != 1 || resp.Error != ErrFetchSessionIDNotFound || len(resp.Partitions) != 0 {
		t.Fatalf("incremental Fetch (%d, %d) to the restarted leader: %+v; want FETCH_SESSION_ID_NOT_FOUND", req.SessionID, req.SessionEpoch, resp)
	}
	s.doWork(t)
	req, resp = s.lastExchange(t)
	if req.SessionID != InvalidSessionID || req.SessionEpoch != InitialEpoch || len(req.Partitions) != 2 {
		t.Fatalf("the next Fetch: (%d, %d), %d partitions; want a full one with no session id", req.SessionID, req.SessionEpoch, len(req.Partitions))
	}
	if resp.SessionID == InvalidSessionID || resp.SessionID == id || len(resp.Partitions) != 2 {
		t.Errorf("its answer: session %d with %d partitions; want a new session (not %d) and both partitions", resp.SessionID, len(resp.Partitions), id)
	}
}

// TestKafkaFetchSessionLeaderRestart: in a running cluster, the leader's restart resets the
// follower's Fetch (handleError); after the restart the follower's first Fetch to it is full and
// gets a session id the restarted leader never gave before.
func TestKafkaFetchSessionLeaderRestart(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 2, 0}}, nil)
	runFor(t, e, 2000)
	old := map[int32]bool{}
	for _, s := range e.brokers[0].rm.FetchSessions().Sessions() {
		old[s.ID()] = true
	}
	apply(t, e, `{"do":"kill","broker":0}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"restart","broker":0}`)
	runUntilTrue(t, e, 60_000, "a follower session on the restarted broker", func() bool {
		return len(e.brokers[0].rm.FetchSessions().Sessions()) > 0
	})
	for _, s := range e.brokers[0].rm.FetchSessions().Sessions() {
		if old[s.ID()] {
			t.Errorf("session id %d given again after the restart", s.ID())
		}
	}
	for _, ev := range e.events {
		if m := ev.Message; m != nil && m.FetchResponse != nil && m.FetchResponse.Error != ErrNone {
			t.Errorf("session error %s at %d; the follower's Fetch was reset, so its next is full", m.FetchResponse.Error, ev.T)
		}
	}
}

// TestKafkaFetchSessionFailedFetch: a Fetch that fails (a timeout or a reset:
// FetchSessionHandler.handleError) backs the partitions off, and the next Fetch is full and
// names the session, which the leader closes before creating another.
func TestKafkaFetchSessionFailedFetch(t *testing.T) {
	s := newSessionSetup(t, "3.7", 2, nil)
	s.doWork(t)
	_, resp := s.lastExchange(t)
	id := resp.SessionID
	inflight := s.e.pending.get(s.f.InFlight())
	s.e.requestFailed(inflight, true)
	if s.f.At(0).DelayUntil() <= s.e.now {
		t.Error("the partitions did not back off after the failed Fetch")
	}
	runFor(t, s.e, s.e.cfg.ReplicaFetchBackoffMs+10)
	req := lastMessage(t, s.e, MsgFetch, 1).Fetch
	if req.SessionID != id || req.SessionEpoch != InitialEpoch || len(req.Partitions) != 2 {
		t.Fatalf("the Fetch after the failure: (%d, %d) with %d partitions; want full, naming session %d", req.SessionID, req.SessionEpoch, len(req.Partitions), id)
	}
	if s.e.brokers[0].rm.FetchSessions().Get(id) != nil {
		t.Error("the leader kept the session the full Fetch closed")
	}
}

// TestKafkaFetchSessionBackoffLeavesSession: a partition backing off after an error is not ready
// to fetch, so it leaves the session (RemoteLeaderEndPoint.buildFetch adds only ready
// partitions); when ready again it is added back and listed.
func TestKafkaFetchSessionBackoffLeavesSession(t *testing.T) {
	s := newSessionSetup(t, "3.7", 2, nil)
	s.doWork(t)
	backing := s.f.State(s.parts[1].pid) // as the thread backs a partition off after an error
	backing.SetDelayUntil(s.e.now + max(1, s.e.cfg.ReplicaFetchBackoffMs))
	s.f.NoteChange(backing)
	runFor(t, s.e, s.e.cfg.ReplicaFetchBackoffMs+1500)
	var seq []string
	for _, ev := range s.e.events {
		if m := ev.Message; m != nil && m.Fetch != nil && m.From == 1 && ev.T >= kafkaT0 {
			seq = append(seq, fmt.Sprintf("%v forgets %v", reqNames(m.Fetch.Partitions), tpNames(m.Fetch.ForgottenTopicsData)))
		}
	}
	want := []string{
		"[t-0@0 t-1@0] forgets []", // full
		"[] forgets []",            // built before the backoff
		"[] forgets [t-1]",         // t-1 backs off: it leaves the session
		"[t-1@0] forgets []",       // ready again: added
		"[] forgets []",
	}
	if len(seq) < len(want) || !slices.Equal(seq[:len(want)], want) {
		t.Errorf("the follower's Fetches: %q, want them to begin %q", seq, want)
	}
}

// TestKafkaFetchSessionParkedIncremental: an incremental Fetch that lists nothing waits in
// purgatory on its whole session, and new records on any session partition answer it at once
// (DelayedFetch over the session's partitions).
func TestKafkaFetchSessionParkedIncremental(t *testing.T) {
	s := newSessionSetup(t, "3.7", 3, nil)
	s.doWork(t)
	runFor(t, s.e, 10) // the next, empty Fetch is parked on the leader
	fetches, _ := s.e.Purgatory()
	if len(fetches) != 1 || fetches[0].SessionPartitions != 3 || len(fetches[0].Request.Fetch.Partitions) != 0 {
		t.Fatalf("purgatory: %+v; want the empty incremental Fetch waiting on its 3 partitions", fetches)
	}
	r := s.e.replicaOn(s.parts[2].pid, 0)
	appendLeader(s.e, r, 1)
	s.e.brokers[0].rm.TryCompleteWatchers(s.e.brokers[0].Broker, r)
	sent := s.e.now
	runFor(t, s.e, 5)
	_, resp := s.lastExchange(t)
	ans := lastMessage(t, s.e, MsgFetchResponse, 0)
	wantNames(t, "answer", respNames(resp.Partitions), "t-2")
	if ans.Sent != sent {
		t.Errorf("answered at %d, want at once (%d)", ans.Sent, sent)
	}
}

// TestKafkaFetchSessionNewThread: a fetcher thread removed (its last partition left) and started
// again has a new FetchSessionHandler: its first Fetch is full and creates a new session.
func TestKafkaFetchSessionNewThread(t *testing.T) {
	s := newSessionSetup(t, "3.7", 1, nil)
	s.doWork(t)
	_, resp := s.lastExchange(t)
	id := resp.SessionID
	s.e.removeFetcherForPartitions(s.b, []int32{s.parts[0].pid})
	s.e.shutdownIdleFetchers(s.b)
	runFor(t, s.e, 600) // the old thread's last Fetch is answered
	r := s.e.replicaOn(s.parts[0].pid, 1)
	st := s.e.era.initialFetchState(r.Log(), s.parts[0].pid, r.LeaderEpoch())
	mark := len(s.e.events)
	s.e.addFetcher(s.b, 0, st)
	if s.b.fetchers.For(0, 0) == s.f {
		t.Fatal("the thread was not replaced")
	}
	runFor(t, s.e, 20)
	var first *FetchRequest
	for _, ev := range s.e.events[mark:] {
		if m := ev.Message; m != nil && m.Fetch != nil && m.From == 1 {
			first = m.Fetch
			break
		}
	}
	if first == nil || first.SessionID != InvalidSessionID || first.SessionEpoch != InitialEpoch {
		t.Fatalf("the new thread's first Fetch: %+v; want full with no session id", first)
	}
	if s.e.brokers[0].rm.FetchSessions().Get(id) == nil {
		t.Error("the old thread's session left the leader's cache; Kafka keeps it until evicted")
	}
}

// TestKafkaFetchSessionHandlerResponses ports FetchSessionHandlerTest
// .testTopLevelErrorResetsMetadata and .testVerifyFullFetchResponsePartitions: a session error
// drops the answer (INITIAL after FETCH_SESSION_ID_NOT_FOUND, else the same id at epoch 0); a
// full answer missing a partition is invalid (INITIAL); a full answer with a session id starts
// the session at epoch 1, without one stays full.
func TestKafkaFetchSessionHandlerResponses(t *testing.T) {
	// What the Fetch carried (partitions 0 and 1), stamped on a thread's fetch states and, as
	// FetcherRules.WalkAll has it, listed.
	in := brk.InSession(0, 0, 0, 0)
	f := &fetcher{}
	for i := range int32(2) {
		f.Add(brk.NewPartitionFetchState(i, 0, 0, -1, false), nil)
		f.State(i).SetSession(in)
	}
	f.SetSentCount(2)
	listed := &fetcher{}
	for i := range int32(2) {
		listed.AddSent(f.State(i), 0)
	}
	sents := []brk.FetchSent{f.TakeFetchSent(false), listed.TakeFetchSent(true)}
	pidOf := func(tp TP) int32 { return tp.Partition }
	two := []FetchPartitionData{{TP: TP{Partition: 0}}, {TP: TP{Partition: 1}}}
	for _, c := range []struct {
		name      string
		h         brk.FetchSessionHandler
		resp      FetchResponse
		ok        bool
		id, epoch int32
	}{
		{"not found", handlerAt(7, 3), FetchResponse{Error: ErrFetchSessionIDNotFound}, false, 0, 0},
		{"bad epoch", handlerAt(7, 3), FetchResponse{Error: ErrInvalidFetchSessionEpoch}, false, 7, 0},
		{"full, new session", handlerAt(0, 0), FetchResponse{SessionID: 9, Partitions: two}, true, 9, 1},
		{"full, no session", handlerAt(0, 0), FetchResponse{Partitions: two}, true, 0, 0},
		{"full, a partition missing", handlerAt(0, 0), FetchResponse{SessionID: 9, Partitions: two[:1]}, false, 0, 0},
		{"incremental", handlerAt(9, 4), FetchResponse{SessionID: 9, Partitions: two[1:]}, true, 9, 5},
		{"incremental, session closed", handlerAt(9, 4), FetchResponse{}, true, 0, 0},
		{"incremental, a partition not in the session", handlerAt(9, 4),
			FetchResponse{SessionID: 9, Partitions: []FetchPartitionData{{TP: TP{Partition: 5}}}}, false, 9, 0},
	} {
		for _, sent := range sents {
			h := c.h
			if ok := h.HandleResponse(&c.resp, carriedByPid{sent, pidOf}); ok != c.ok || h.SessionID() != c.id || h.Epoch() != c.epoch {
				t.Errorf("%s (listed: %v): handleResponse %v, next (%d, %d); want %v, (%d, %d)", c.name, sent.Listed(), ok, h.SessionID(), h.Epoch(), c.ok, c.id, c.epoch)
			}
		}
	}
	h := handlerAt(9, 4)
	h.HandleError()
	if h.SessionID() != 9 || h.Epoch() != InitialEpoch {
		t.Errorf("handleError: next (%d, %d), want (9, 0)", h.SessionID(), h.Epoch())
	}
}

// carriedByPid is what a Fetch carried, asked by partition name, with pids named by pidOf.
type carriedByPid struct {
	brk.FetchSent
	pidOf func(TP) int32
}

func (s carriedByPid) Carried(tp TP) bool { return s.Has(s.pidOf(tp)) }

// handlerAt is a session handler whose next Fetch names sessionID at epoch.
func handlerAt(sessionID, epoch int32) brk.FetchSessionHandler {
	var h brk.FetchSessionHandler
	h.SetForTest(sessionID, epoch)
	return h
}

// TestKafkaFetchSessionBefore11: before fetch sessions (0.10.2, 0.11.0: Fetch older than v7)
// every Fetch lists every ready partition with no session (epoch -1), and every answer carries
// every partition, quiet ones included; the leader caches nothing.
func TestKafkaFetchSessionBefore11(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0"} {
		t.Run(era, func(t *testing.T) {
			s := newSessionSetup(t, era, 3, nil)
			for range 4 {
				s.doWork(t)
			}
			n := 0
			for _, ev := range s.e.events {
				m := ev.Message
				switch {
				case m == nil || ev.T < kafkaT0:
				case m.Fetch != nil && m.From == 1:
					n++
					if m.Fetch.SessionID != InvalidSessionID || m.Fetch.SessionEpoch != FinalEpoch || len(m.Fetch.Partitions) != 3 {
						t.Errorf("Fetch (%d, %d) listing %v; want sessionless with all 3", m.Fetch.SessionID, m.Fetch.SessionEpoch, reqNames(m.Fetch.Partitions))
					}
				case m.FetchResponse != nil && m.From == 0:
					if m.FetchResponse.SessionID != InvalidSessionID || len(m.FetchResponse.Partitions) != 3 {
						t.Errorf("answer (session %d) with %v; want all 3", m.FetchResponse.SessionID, respNames(m.FetchResponse.Partitions))
					}
				}
			}
			if n < 4 || len(s.e.brokers[0].rm.FetchSessions().Sessions()) != 0 {
				t.Errorf("%d Fetches, %d sessions cached; want 4 or more and none", n, len(s.e.brokers[0].rm.FetchSessions().Sessions()))
			}
		})
	}
}

// TestKafkaFetchSessionConsumerSessionless: a consumer's Fetch is a sessionless full fetch
// (session 0, epoch -1: FetchMetadata.LEGACY/FINAL), and the leader creates no session for it.
func TestKafkaFetchSessionConsumerSessionless(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	e.brokers[0].rm.LoseFetchSessions(e.brokers[0].Broker)
	e.consume(p, 10)
	runFor(t, e, 5)
	m := lastMessage(t, e, MsgFetch, ClientNode)
	if m.Fetch.SessionID != InvalidSessionID || m.Fetch.SessionEpoch != FinalEpoch {
		t.Errorf("consumer Fetch (%d, %d), want (0, -1)", m.Fetch.SessionID, m.Fetch.SessionEpoch)
	}
	if n := len(e.brokers[0].rm.FetchSessions().Sessions()); n != 0 {
		t.Errorf("%d sessions after a consumer's Fetch, want none", n)
	}
}
