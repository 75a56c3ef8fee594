package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// Ports of FetchSessionTest's cache tests (FetchSessionCache: slots, staleness, privilege,
// eviction), and a session evicted while its Fetch waits in purgatory. The eviction time is
// Kafka's constant 120,000 ms; Kafka's tests use 100 or 1,000 ms, so their times are scaled.

// sendSessionFetch sends a Fetch by hand from broker from (replica id replicaID) to broker 0,
// with session metadata (id, epoch) and the given partitions of t at offset 0, and returns the
// leader's answer: maxWaitMs 0, so it is answered at once.
func sendSessionFetch(t *testing.T, e *Engine, from, replicaID, id, epoch int32, parts ...int32) *FetchResponse {
	t.Helper()
	req := &FetchRequest{ReplicaID: replicaID, BrokerEpoch: e.brokers[from].brokerEpoch, MinBytes: 1,
		SessionID: id, SessionEpoch: epoch, Partitions: []FetchPartition{}}
	for _, i := range parts {
		req.Partitions = append(req.Partitions, FetchPartition{TP: TP{Topic: ktTopic, Partition: i},
			CurrentLeaderEpoch: -1, LastFetchedEpoch: -1})
	}
	m := &Message{Type: MsgFetch, From: from, To: 0, Fetch: req}
	e.send(m)
	runFor(t, e, 5)
	ans := answerTo(e, m)
	if ans == nil {
		t.Fatalf("no answer to the Fetch (%d, %d)", id, epoch)
	}
	return ans.FetchResponse
}

// TestKafkaFetchSessionExpiration ports FetchSessionTest.testFetchSessionExpiration (times × 120,
// follower sessions): with 2 slots, a third session evicts the least recently used one, which
// is session 2 since session 1 was used by an incremental fetch (KAFKA-9137, Kafka 2.5). In 2.1,
// an incremental fetch does not touch its session: session 1 counts as unused since its
// creation, and is the one evicted.
func TestKafkaFetchSessionExpiration(t *testing.T) {
	for _, c := range []struct{ era, evicted string }{{"3.7", "session 2"}, {"2.1", "session 1"}} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["max.incremental.fetch.session.cache.slots"] = "2"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}, {0, 1}}, cfg)
			quiesce(t, e)
			cache := e.brokers[0].rm.FetchSessions()
			e.brokers[0].rm.LoseFetchSessions(e.brokers[0].Broker)
			t0 := e.now
			s1 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0, 1).SessionID
			runFor(t, e, t0+60_000-e.now)
			s2 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0, 1).SessionID
			if s1 == InvalidSessionID || s2 == InvalidSessionID || cache.Get(s1) == nil || cache.Get(s2) == nil {
				t.Fatalf("sessions %d and %d: both must be cached", s1, s2)
			}
			runFor(t, e, t0+120_000-e.now)
			if r := sendSessionFetch(t, e, 1, 1, s1, 1); r.Error != ErrNone || r.SessionID != s1 {
				t.Fatalf("incremental fetch of session 1: %+v", r)
			}
			runFor(t, e, t0+180_120-e.now)
			s3 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0, 1).SessionID
			evicted := "none"
			switch {
			case cache.Get(s1) == nil && cache.Get(s2) != nil:
				evicted = "session 1"
			case cache.Get(s2) == nil && cache.Get(s1) != nil:
				evicted = "session 2"
			}
			if evicted != c.evicted || cache.Get(s3) == nil {
				t.Errorf("evicted %s (session 3 cached: %v), want %s", evicted, cache.Get(s3) != nil, c.evicted)
			}
		})
	}
}

// TestKafkaFetchSessionPrivileged ports FetchSessionTest.testPrivilegedSessionHandling (times ×
// 120): a follower's session (privileged) evicts a consumer's that is not stale; then a
// privileged session unused for longer than the eviction time is evicted too. Consumers here
// fetch sessionless; the unprivileged session is a consumer's Fetch sent by hand at epoch 0.
func TestKafkaFetchSessionPrivileged(t *testing.T) {
	e, _ := newUnitEngine(t, 3, []int32{0, 1, 2}, map[string]string{"max.incremental.fetch.session.cache.slots": "2"})
	cache := e.brokers[0].rm.FetchSessions()
	e.brokers[0].rm.LoseFetchSessions(e.brokers[0].Broker)
	t0 := e.now
	s1 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0).SessionID
	runFor(t, e, t0+60_000-e.now)
	s2 := sendSessionFetch(t, e, 2, ClientNode, 0, InitialEpoch, 0).SessionID
	if s1 == InvalidSessionID || s2 == InvalidSessionID || !cache.Get(s1).Privileged() || cache.Get(s2).Privileged() {
		t.Fatalf("sessions %d (follower) and %d (consumer) not cached as privileged and not", s1, s2)
	}
	runFor(t, e, t0+120_000-e.now)
	s3 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0).SessionID
	if cache.Get(s1) == nil || cache.Get(s2) != nil || cache.Get(s3) == nil {
		t.Errorf("after the third session: 1 %v, 2 %v, 3 %v; want the consumer's (2) evicted",
			cache.Get(s1) != nil, cache.Get(s2) != nil, cache.Get(s3) != nil)
	}
	runFor(t, e, t0+180_120-e.now)
	s4 := sendSessionFetch(t, e, 1, 1, 0, InitialEpoch, 0).SessionID
	if cache.Get(s1) != nil || cache.Get(s3) == nil || cache.Get(s4) == nil {
		t.Errorf("after the fourth session: 1 %v, 3 %v, 4 %v; want session 1 evicted (stale though privileged)",
			cache.Get(s1) != nil, cache.Get(s3) != nil, cache.Get(s4) != nil)
	}
}

// TestKafkaFetchSessionEvictedWhileParked: with one cache slot, follower 1's session (3
// partitions) holds it, and follower 2's full Fetches (4 partitions) get no session, until
// follower 1's session is older than the eviction time: a larger session may then evict it
// (tryEvict). Here that happens while follower 1's incremental Fetch waits in purgatory: the
// Fetch is still answered as Kafka's DelayedFetch would be (by new records, with the evicted
// session's id); the next one gets FETCH_SESSION_ID_NOT_FOUND, and follower 1 fetches full from
// then on. The dirty reads match reading every partition all along.
func TestKafkaFetchSessionEvictedWhileParked(t *testing.T) {
	scenario := func(at int64) *Scenario {
		sc, err := ParseScenario([]byte(fmt.Sprintf(`{"name": "evicted while parked", "seed": 3, "brokers": 3,
			"topics": [{"name": "t", "assignment": [[0,1,2],[0,1,2],[0,1,2],[0,2]]}],
			"config": {"max.incremental.fetch.session.cache.slots": 1},
			"steps": [
				{"at": %d, "do": "produce", "topic": "t", "partition": 3, "count": 1},
				{"at": %d, "do": "produce", "topic": "t", "partition": 0, "count": 3},
				{"at": %d, "do": "expect", "violations": []}
			]}`, at, at+20, at+10_000)))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	// The first instant follower 1's session is old enough to be evicted and its Fetch waits:
	// records on t-3 then answer follower 2's parked full Fetch, whose new session evicts it.
	e, err := New(scenario(200_000))
	if err != nil {
		t.Fatal(err)
	}
	evictable := func() bool {
		for _, s := range e.brokers[0].rm.FetchSessions().Sessions() {
			if s.ReplicaID() == 1 && s.EvictableByAll() && s.Parked() != nil {
				return true
			}
		}
		return false
	}
	runUntilTrue(t, e, 200_000, "follower 1's old session with a parked Fetch", evictable)
	at := e.now
	var dirty []byte
	dirty, _ = runWith(t, scenario(at), func(e *Engine) { e.rules.LeaderFetch.Check = func(p string) { t.Error(p) } })
	var texts []string
	for _, line := range bytes.Split(dirty, []byte("\n")) {
		var ev Event
		if len(line) == 0 || json.Unmarshal(line, &ev) != nil || ev.Message == nil || ev.Message.FetchResponse == nil ||
			ev.Message.From != 0 || ev.Message.To != 1 || ev.T < at || ev.T > at+30 {
			continue
		}
		texts = append(texts, fmt.Sprintf("+%d %s", ev.T-at, ev.Text))
	}
	want := []string{
		"+21 broker 0 → broker 1: Fetch response (session 1): t-0 3 records, HW 0",
		"+23 broker 0 → broker 1: Fetch response FETCH_SESSION_ID_NOT_FOUND: the next Fetch is full",
	}
	if !slices.Equal(texts, want) {
		t.Errorf("answers to follower 1 after the eviction:\n%q\nwant\n%q", texts, want)
	}
	all, _ := runWith(t, scenario(at), func(e *Engine) { e.rules.LeaderFetch.ReadAll = true })
	if !bytes.Equal(all, dirty) {
		t.Errorf("the traces differ; %s", firstDiff(dirty, all))
	}
}
