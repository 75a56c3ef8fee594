package engine

import (
	"slices"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
)

// Ports of Kafka's follower fetcher tests: AbstractFetcherThreadTest (truncate-on-
// fetch mode, era "3.7"), its rerun AbstractFetcherThreadWithIbp26Test (OffsetsForLeaderEpoch mode,
// era "2.1" here), and ReplicaFetcherThreadTest.
//
// Differences from Kafka's mock fetcher, and how the ports bridge them:
//   - the mock leader returns one batch per fetch; the engine's leader returns everything up to
//     replica.fetch.max.bytes. The ports assert the end states, not the number of rounds;
//   - the mock leader's HW never moves. The engine's leader raises its HW when the follower
//     catches up, so where Kafka's test's end state has a HW below the leader's LEO a third replica
//     (broker 2, in the ISR, never fetching) pins the leader's HW ("pin");
//   - one Kafka doWork (maybeTruncate, then maybeFetch) is doWorkOnce: the engine's thread loops
//     by itself, so the agenda runs until that much has been answered.

// fetchSetup is leader broker 0 and follower broker 1 of t-0, built to the literal state of a
// Kafka fetcher test.
type fetchSetup struct {
	e                *Engine
	p                *partition
	leader, follower *replica
	b                *broker  // the follower's broker
	f                *fetcher // the follower's fetcher, once started
}

type fetchCase struct {
	era           string
	leaderLog     string
	leaderEpoch   int32
	leaderHW      int64
	followerLog   string
	followerEpoch int32
	followerHW    int64
	pin           int64 // ≥ 0: a third ISR replica holds the leader's HW here; -1: two replicas
	// sessionless: no fetch sessions (max.incremental.fetch.session.cache.slots 0), so every
	// Fetch is full and fenced in 2.1 as Kafka's mock leader fences it (before 2.5, KAFKA-9338,
	// an incremental fetch's leader epoch is not checked).
	sessionless bool
}

func newFetchSetup(t *testing.T, c fetchCase) *fetchSetup {
	t.Helper()
	replicas := []int32{0, 1}
	if c.pin >= 0 {
		replicas = []int32{0, 1, 2}
	}
	cfg := eraCfg(c.era)
	if c.sessionless {
		cfg["max.incremental.fetch.session.cache.slots"] = "0"
	}
	e := newKafkaEngine(t, len(replicas), [][]int32{replicas}, cfg)
	quiesce(t, e)
	p := e.partitionOf(ktTopic, 0)
	s := &fetchSetup{e: e, p: p, leader: e.replicaOn(p.pid, 0), follower: e.replicaOn(p.pid, 1), b: e.brokers[1]}
	*s.leader.Log() = logOf(t, c.leaderLog)
	ktLead(e, p, 0, c.leaderEpoch, replicas, 1)
	s.leader.Log().SetHighWatermark(c.leaderHW)
	if c.pin >= 0 {
		s.leader.Remote(2).SetLogEndOffsetForTest(c.pin)
	}
	*s.follower.Log() = logOf(t, c.followerLog)
	s.follower.Log().SetHighWatermark(c.followerHW)
	ktFollow(e, p, 1, 0, c.followerEpoch, 1)
	return s
}

// start gives the partition to the follower's fetcher with the state a Kafka test passes to
// addPartitions: Fetching at fetchOffset with lastFetchedEpoch in truncate-on-fetch mode,
// Truncating otherwise (InitialFetchState).
func (s *fetchSetup) start(t *testing.T, fetchOffset int64, lastFetchedEpoch int32) {
	t.Helper()
	last, truncating := int32(-1), true
	if s.e.era.truncateOnFetch {
		last, truncating = lastFetchedEpoch, false
	}
	st := brk.NewPartitionFetchState(s.p.pid, s.follower.LeaderEpoch(), fetchOffset, last, truncating)
	s.e.addFetcher(s.b, 0, st)
	s.f = fetcherOfPartition(s.b, s.p)
	if s.f == nil {
		t.Fatal("the follower has no fetcher for t-0")
	}
}

func (s *fetchSetup) doWork(t *testing.T) { t.Helper(); doWorkOnce(t, s.e, s.b, s.f) }

// state returns the follower's fetch state, or nil once the partition left the fetcher.
func (s *fetchSetup) state() *fetchState { return s.f.State(s.p.pid) }

// converge runs doWork until the follower's log equals the leader's (at most 20 turns).
func (s *fetchSetup) converge(t *testing.T) {
	t.Helper()
	for range 20 {
		s.doWork(t)
		if logString(s.follower.Log()) == logString(s.leader.Log()) {
			return
		}
	}
	t.Fatalf("logs never reconciled: follower %q, leader %q", logString(s.follower.Log()), logString(s.leader.Log()))
}

func (s *fetchSetup) check(t *testing.T, when string, logStart, leo, hw int64) {
	t.Helper()
	l := s.follower.Log()
	if l.LogStartOffset() != logStart || l.LogEndOffset() != leo || l.HighWatermark() != hw {
		t.Errorf("%s: follower logStart %d, LEO %d, HW %d; want %d, %d, %d (log %q)", when,
			l.LogStartOffset(), l.LogEndOffset(), l.HighWatermark(), logStart, leo, hw, logString(l))
	}
}

func (s *fetchSetup) truncations() []int64 { return truncations(s.e.events, 1, s.p) }

// TestKafkaT4Truncation ports AbstractFetcherThreadTest.testTruncation in both modes. The follower
// walks back one epoch per round (KIP-279): to 2, to 1, then to 0.
func TestKafkaT4Truncation(t *testing.T) {
	for _, era := range []string{"3.7", "2.1"} {
		t.Run(era, func(t *testing.T) {
			s := newFetchSetup(t, fetchCase{era: era,
				leaderLog: "0/e1 1/e3 2/e5", leaderEpoch: 5, leaderHW: 2,
				followerLog: "0/e0 1/e2 2/e4", followerEpoch: 5, followerHW: 0, pin: 2})
			s.start(t, 3, 4)
			s.converge(t)
			s.check(t, "at convergence", 0, 3, 2)
			if got := logString(s.follower.Log()); got != "0/e1 1/e3 2/e5" {
				t.Errorf("follower log %q, want the leader's", got)
			}
			if got := s.truncations(); !slices.Equal(got, []int64{2, 1, 0}) {
				t.Errorf("truncated to %v, want [2 1 0] (ask e4 → (e3,2); ask e2 → (e1,1); ask e0 → (e0,0))", got)
			}
			wantAsks := 0 // truncate-on-fetch: the walk-back rides on fetches (divergingEpoch)
			if !s.e.era.truncateOnFetch {
				wantAsks = 3
			}
			if n := len(eventsOf(s.e.events, MsgOffsetsForEpoch, onBroker(1))); n != wantAsks {
				t.Errorf("%d OffsetsForLeaderEpoch requests, want %d", n, wantAsks)
			}
		})
	}
}

// TestKafkaT5DivergingEpochs ports AbstractFetcherThreadTest.testDivergingEpochs
// (truncate-on-fetch mode only: divergingEpoch exists from IBP 2.7).
func TestKafkaT5DivergingEpochs(t *testing.T) {
	s := newFetchSetup(t, fetchCase{era: "3.7",
		leaderLog: "0/e0 1/e2 2/e5", leaderEpoch: 5, leaderHW: 2,
		followerLog: "0/e0 1/e2 2/e4", followerEpoch: 5, pin: -1})
	s.start(t, 3, 4)
	s.doWork(t)
	if st := s.state(); st == nil || st.LastFetchedEpoch() != 2 || s.follower.Log().LogEndOffset() != 2 {
		t.Fatalf("after one doWork: state %+v, LEO %d; want lastFetchedEpoch 2, truncated to 2", st, s.follower.Log().LogEndOffset())
	}
	s.converge(t)
	if st := s.state(); st.LastFetchedEpoch() != 5 {
		t.Errorf("at convergence lastFetchedEpoch = %d, want 5", st.LastFetchedEpoch())
	}
}

// TestKafkaT6TruncateOnFetchDoesNotProcessPartitionData ports
// AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData
// (truncate-on-fetch mode: a divergingEpoch answer carries no records and its HW is not applied).
func TestKafkaT6TruncateOnFetchDoesNotProcessPartitionData(t *testing.T) {
	s := newFetchSetup(t, fetchCase{era: "3.7",
		leaderLog: "0/e0 1/e0 2/e2 3/e5 4/e5", leaderEpoch: 5, leaderHW: 4,
		followerLog: "0/e0 1/e0 2/e2 3/e4 4/e4 5/e4", followerEpoch: 5, followerHW: 1, pin: 4})
	s.start(t, 6, 4)
	s.doWork(t)
	s.check(t, "after the first doWork", 0, 3, 1)
	if got := logString(s.follower.Log()); got != "0-1/e0 2/e2" {
		t.Errorf("after the first doWork the follower log is %q: records were appended", got)
	}
	if n := len(s.truncations()); n != 1 {
		t.Errorf("after the first doWork: %d truncations, want 1", n)
	}
	s.converge(t)
	s.check(t, "at convergence", 0, 5, 4)
	if st := s.state(); st.LastFetchedEpoch() != 5 {
		t.Errorf("at convergence lastFetchedEpoch = %d, want 5", st.LastFetchedEpoch())
	}
	if n := len(s.truncations()); n != 1 {
		t.Errorf("at convergence: %d truncations, want still 1", n)
	}
}

// failedOn reports whether broker b marked p failed (AbstractFetcherThread's failedPartitions).
func failedOn(e *Engine, b int32, p *partition) bool {
	return len(eventsOf(e.events, EvFailed, func(ev Event) bool {
		return ev.Broker.V == b && ev.Partition.V == p.index
	})) > 0
}

// TestKafkaT7FencedFetch ports AbstractFetcherThreadTest.testFencedFetch and
// testFencedTruncation in both modes.
func TestKafkaT7FencedFetch(t *testing.T) {
	for _, era := range []string{"3.7", "2.1"} {
		t.Run("testFencedFetch/"+era, func(t *testing.T) {
			s := newFetchSetup(t, fetchCase{era: era, leaderLog: "0-1/e0", leaderEpoch: 0, leaderHW: 2,
				followerLog: "", followerEpoch: 0, pin: -1, sessionless: era == "2.1"})
			s.start(t, 0, -1)
			s.doWork(t)
			s.check(t, "after the first doWork", 0, 2, 2)
			// Raise the leader's epoch (a LeaderAndIsr the follower has not seen yet).
			ktLead(s.e, s.p, 0, 1, []int32{0, 1}, 2)
			s.doWork(t)
			if s.state() != nil || !failedOn(s.e, 1, s.p) {
				t.Errorf("after FENCED_LEADER_EPOCH: fetch state %+v, failed %v; want the partition removed and marked failed",
					s.state(), failedOn(s.e, 1, s.p))
			}
		})
		t.Run("testFencedTruncation/"+era, func(t *testing.T) {
			s := newFetchSetup(t, fetchCase{era: era, leaderLog: "0-1/e1", leaderEpoch: 1, leaderHW: 2,
				followerLog: "", followerEpoch: 0, pin: -1})
			s.start(t, 0, -1)
			s.doWork(t)
			s.check(t, "after doWork", 0, 0, 0)
			if s.state() != nil || !failedOn(s.e, 1, s.p) {
				t.Errorf("fetch state %+v, failed %v; want the partition removed and marked failed", s.state(), failedOn(s.e, 1, s.p))
			}
		})
	}
}

// TestKafkaT8UnknownLeaderEpochInTruncation ports
// AbstractFetcherThreadWithIbp26Test.testUnknownLeaderEpochInTruncation, in
// OffsetsForLeaderEpoch mode (era 2.1), where a partition can be Truncating.
//
// Adapted: Kafka's mock asks OffsetsForLeaderEpoch even for an empty log (its latestEpoch
// answers UNDEFINED_EPOCH); the real ReplicaFetcherThread, like the engine, has no epoch to ask
// about and truncates to the HW instead. So the follower's empty log carries the epoch-cache
// entry (1,0) a leader of epoch 1 leaves before writing. The leader's HW 2 is clamped to its LEO 1.
func TestKafkaT8UnknownLeaderEpochInTruncation(t *testing.T) {
	s := newFetchSetup(t, fetchCase{era: "2.1", leaderLog: "0/e0", leaderEpoch: 0, leaderHW: 2,
		followerLog: "", followerEpoch: 1, pin: -1})
	s.follower.Log().Cache().Assign(1, 0)
	s.start(t, 0, -1)
	s.doWork(t)
	if st := s.state(); st == nil || !st.Truncating() || s.follower.Log().LogEndOffset() != 0 {
		t.Fatalf("after UNKNOWN_LEADER_EPOCH: state %+v, LEO %d; want still Truncating at LEO 0", st, s.follower.Log().LogEndOffset())
	}
	if n := len(eventsOf(s.e.events, MsgOffsetsForEpochResponse, func(ev Event) bool {
		return ev.Message.OffsetsForEpochResp.Partitions[0].Error == ErrUnknownLeaderEpoch
	})); n != 1 {
		t.Errorf("%d UNKNOWN_LEADER_EPOCH answers, want 1", n)
	}
	ktLead(s.e, s.p, 0, 1, []int32{0, 1}, 2) // bump the leader's epoch
	s.doWork(t)
	if st := s.state(); st == nil || st.Truncating() || s.follower.Log().LogEndOffset() != 1 {
		t.Errorf("after the leader reached epoch 1: state %+v, LEO %d; want Fetching at LEO 1", st, s.follower.Log().LogEndOffset())
	}
}

// TestKafkaT9FollowerFetchOutOfRangeHigh ports AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh
// in both modes.
func TestKafkaT9FollowerFetchOutOfRangeHigh(t *testing.T) {
	for _, era := range []string{"3.7", "2.1"} {
		t.Run(era, func(t *testing.T) {
			s := newFetchSetup(t, fetchCase{era: era, leaderLog: "0/e0 1/e2 2/e4", leaderEpoch: 4, leaderHW: 2,
				followerLog: "0/e0 1/e2 2/e4", followerEpoch: 4, pin: -1})
			s.start(t, 3, 4)
			s.doWork(t)
			if st := s.state(); st == nil || st.Truncating() || s.follower.Log().LogEndOffset() != 3 {
				t.Fatalf("after the first doWork: state %+v, LEO %d; want Fetching at LEO 3", st, s.follower.Log().LogEndOffset())
			}
			// The leader's log is emptied without an epoch change (set directly: the leader's fetch
			// session is told, as a truncation would tell it).
			*s.leader.Log() = logOf(t, "")
			s.leader.SessionsChanged()
			s.doWork(t)
			if n := len(eventsOf(s.e.events, MsgFetchResponse, func(ev Event) bool {
				ps := ev.Message.FetchResponse.Partitions
				return len(ps) > 0 && ps[0].Error == ErrOffsetOutOfRange
			})); n != 1 {
				t.Errorf("%d OFFSET_OUT_OF_RANGE answers, want 1", n)
			}
			// Before 2.4 the truncation left the follower's HW (Replica.highWatermark) as it was,
			// above the new LEO, until the next fetch answer (2.1.1 Partition.truncateTo).
			hw := int64(0)
			if era == "2.1" {
				hw = 3
			}
			s.check(t, "after OFFSET_OUT_OF_RANGE", 0, 0, hw)
			if st := s.state(); st == nil || st.Truncating() {
				t.Errorf("state %+v, want Fetching", st)
			}
		})
	}
}

// TestKafkaT10FollowerFetchOutOfRangeLow ports AbstractFetcherThreadTest.testFollowerFetchOutOfRangeLow
// in both modes. In truncate-on-fetch mode the first doWork only truncates on the
// diverging epoch; the second gets OFFSET_OUT_OF_RANGE, as in Kafka's test.
func TestKafkaT10FollowerFetchOutOfRangeLow(t *testing.T) {
	for _, era := range []string{"3.7", "2.1"} {
		t.Run(era, func(t *testing.T) {
			s := newFetchSetup(t, fetchCase{era: era, leaderLog: "2/e4", leaderEpoch: 0, leaderHW: 2,
				followerLog: "0/e0", followerEpoch: 0, followerHW: 0, pin: 2})
			s.start(t, 3, 0)
			if s.e.era.truncateOnFetch {
				s.doWork(t)
			}
			leo, hw := s.follower.Log().LogEndOffset(), s.follower.Log().HighWatermark()
			s.e.Drain()
			s.doWork(t)
			// The trace tells the jump as it was: the log end from where it was to the leader's
			// start, and the high watermark with it (truncateFullyAndStartAt).
			evs := s.e.Drain()
			tr := eventsOf(evs, EvTruncate, onBroker(1))
			if len(tr) != 1 || tr[0].From.V != leo || tr[0].To.V != 2 {
				t.Fatalf("truncate events %+v; want one from %d to 2", tr, leo)
			}
			hws := eventsOf(evs, EvHighWatermark, onBroker(1))
			if len(hws) != 1 || hws[0].From.V != hw || hws[0].To.V != 2 {
				t.Fatalf("high-watermark events %+v; want one from %d to 2", hws, hw)
			}
			if st := s.state(); st == nil || st.Truncating() || s.follower.Log().LogStartOffset() != 2 || s.follower.Log().LogEndOffset() != 2 {
				t.Fatalf("after the initial truncation: state %+v, log %q from %d; want Fetching with logStart 2 and an empty log",
					st, logString(s.follower.Log()), s.follower.Log().LogStartOffset())
			}
			s.converge(t)
			s.check(t, "at convergence", 2, 3, 2)
		})
	}
}

// TestKafkaT11ReplicaFetcherThread ports three ReplicaFetcherThreadTest cases.
func TestKafkaT11ReplicaFetcherThread(t *testing.T) {
	// twoPartitions builds t-0 and t-1, both led by broker 0 at epoch 6 and followed by broker 1
	// through one fetcher thread, with the given logs.
	twoPartitions := func(t *testing.T, era string, leaderLogs [2]string, followerLog string, followerHW int64) (*Engine, [2]*partition) {
		e := newKafkaEngine(t, 2, [][]int32{{0, 1}, {0, 1}}, map[string]string{"inter.broker.protocol.version": `"` + era + `"`})
		quiesce(t, e)
		var ps [2]*partition
		for i := range ps {
			p := e.partitionOf(ktTopic, int32(i))
			ps[i] = p
			*e.replicaOn(p.pid, 0).Log() = logOf(t, leaderLogs[i])
			ktLead(e, p, 0, 6, []int32{0, 1}, 1)
			e.replicaOn(p.pid, 0).Log().SetHighWatermark(160)
			r := e.replicaOn(p.pid, 1)
			*r.Log() = logOf(t, followerLog)
			r.Log().SetHighWatermark(followerHW)
			ktFollow(e, p, 1, 0, 6, 1)
			st := e.era.initialFetchState(r.Log(), p.pid, 6)
			e.addFetcher(e.brokers[1], 0, st)
		}
		if len(*e.brokers[1].fetchers) != 1 {
			t.Fatalf("want one fetcher thread for both partitions, got %d", len(*e.brokers[1].fetchers))
		}
		return e, ps
	}
	epochRequests := func(e *Engine) int {
		return len(eventsOf(e.events, MsgOffsetsForEpoch, onBroker(1)))
	}

	t.Run("shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower", func(t *testing.T) {
		// The follower's end for epoch 4 and for epoch 3 is (e3, 120); the leaders answer (4,155)
		// and (4,143) for epoch 5, then (3,101) and (3,102) for epoch 3.
		e, ps := twoPartitions(t, "2.1", [2]string{
			"0-100/e3 101-154/e4 155-209/e6",
			"0-101/e3 102-142/e4 143-209/e6",
		}, "0-119/e3 120-199/e5", 0)
		if ee, o := e.replicaOn(ps[0].pid, 1).Log().Cache().EndOffsetFor(4, 200); ee != 3 || o != 120 {
			t.Fatalf("follower endOffsetFor(4) = (%d,%d), want (3,120)", ee, o)
		}
		runFor(t, e, 3000)
		for i, want := range [][]int64{{120, 101}, {120, 102}} {
			if got := truncations(e.events, 1, ps[i]); !slices.Equal(got, want) {
				t.Errorf("t-%d: truncated to %v, want %v", i, got, want)
			}
		}
		if n := epochRequests(e); n != 2 {
			t.Errorf("%d OffsetsForLeaderEpoch requests, want exactly 2", n)
		}
	})
	t.Run("shouldTruncateToOffsetSpecifiedInEpochOffsetResponse", func(t *testing.T) {
		e, ps := twoPartitions(t, "2.1", [2]string{
			"0-119/e3 120-155/e5 156-209/e6",
			"0-119/e3 120-171/e5 172-209/e6",
		}, "0-119/e3 120-199/e5", 0)
		runFor(t, e, 3000)
		for i, want := range [][]int64{{156}, {172}} {
			if got := truncations(e.events, 1, ps[i]); !slices.Equal(got, want) {
				t.Errorf("t-%d: truncated to %v, want %v", i, got, want)
			}
		}
		if n := epochRequests(e); n != 1 {
			t.Errorf("%d OffsetsForLeaderEpoch requests, want 1", n)
		}
	})
	t.Run("testTruncateOnFetchDoesNotUpdateHighWatermark", func(t *testing.T) {
		// LEO 150, lastFetchedEpoch 5; the leader (no epoch 5) answers divergingEpoch (4,140)
		// with HW 160.
		e, ps := twoPartitions(t, "3.7", [2]string{
			"0-139/e4 140-169/e6", "0-139/e4 140-169/e6",
		}, "0-139/e4 140-149/e5", 100)
		b := e.brokers[1]
		f := (*b.fetchers)[0]
		f.RemovePartition(ps[1].pid)
		doWorkOnce(t, e, b, f)
		r := e.replicaOn(ps[0].pid, 1)
		if got := truncations(e.events, 1, ps[0]); !slices.Equal(got, []int64{140}) {
			t.Errorf("truncated to %v, want [140] once", got)
		}
		if hw := r.Log().HighWatermark(); hw != 100 {
			t.Errorf("follower HW %d after the divergingEpoch answer, want 100 (not updated from the leader's 160)", hw)
		}
	})
}
