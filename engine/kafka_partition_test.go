package engine

import (
	"fmt"
	"slices"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
)

// Ports of Kafka's leader-side Partition tests, T12–T22 (PartitionTest.scala, and
// IsrExpirationTest.scala for T17), with replica.lag.time.max.ms 30000 unless stated. Broker 0
// leads t-0; "fetch at o" is PartitionTest.fetchFollower, here readPartition with a follower's
// request; "maybeShrinkIsr" is the periodic isrShrinkTask; "complete" lets the AlterPartition
// round trip through the controller (broker 0) happen. The controller's state is written to match
// each makeLeader, so AlterPartition succeeds with partition epoch + 1.

// alterPartitions returns the AlterPartition requests sent so far.
func alterPartitions(e *Engine) []*AlterPartitionRequest {
	var out []*AlterPartitionRequest
	for _, ev := range eventsOf(e.events, MsgAlterPartition, nil) {
		out = append(out, ev.Message.AlterPartition)
	}
	return out
}

// complete delivers the AlterPartition in flight and its answer.
func complete(t *testing.T, e *Engine) { t.Helper(); runFor(t, e, 10) }

func wantHW(t *testing.T, r *replica, want int64, when string) {
	t.Helper()
	if got := r.Log().HighWatermark(); got != want {
		t.Errorf("%s: HW %d, want %d", when, got, want)
	}
}

func wantISR(t *testing.T, r *replica, committed, maximal []int32, when string) {
	t.Helper()
	if !slices.Equal(r.State().ISR(), committed) || !slices.Equal(r.State().MaximalISR(), maximal) {
		t.Errorf("%s: committed ISR %v, maximal %v; want %v, %v", when, r.State().ISR(), r.State().MaximalISR(), committed, maximal)
	}
}

// TestKafkaT12LastFetchedOffsetValidation ports PartitionTest.testLastFetchedOffsetValidation:
// the leader's divergence and range checks on (lastFetchedEpoch, fetchOffset).
func TestKafkaT12LastFetchedOffsetValidation(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "0-1/e0 2-7/e3 8-12/e4 13/e7 14-16/e9")
	ktLead(e, p, 0, 10, []int32{0, 1}, 1)
	if got := cacheString(r.Log().Cache()); got != "(0,0) (3,2) (4,8) (7,13) (9,14) (10,17)" {
		t.Fatalf("leader epoch cache [%s]", got)
	}
	type fetch struct {
		lastFetchedEpoch int32
		offset           int64
		want             string // "diverge (e,o)", "ok" or an error
	}
	steps := []struct {
		logStart int64 // raise the log start first (0: leave it)
		fetches  []fetch
	}{
		{0, []fetch{
			{2, 5, "diverge (0,2)"}, {0, 4, "diverge (0,2)"}, {6, 6, "diverge (4,13)"}, {5, 9, "diverge (4,13)"},
			{10, 18, "diverge (10,17)"},
			{0, 2, "ok"}, {7, 14, "ok"}, {9, 17, "ok"}, {10, 17, "ok"},
			{11, 5, ErrOffsetOutOfRange.String()},
		}},
		{5, []fetch{{2, 8, "diverge (2,5)"}, {0, 5, "ok"}, {3, 5, "ok"}, {0, 0, ErrOffsetOutOfRange.String()}}},
		{10, []fetch{{5, 6, ErrOffsetOutOfRange.String()}, {3, 6, ErrOffsetOutOfRange.String()}}},
	}
	for _, st := range steps {
		if st.logStart > 0 {
			r.Log().SetLogStartOffset(st.logStart)
		}
		for _, f := range st.fetches {
			d := followerFetch(e, p, 1, f.offset, f.lastFetchedEpoch)
			got := "ok"
			switch {
			case d.Error != ErrNone:
				got = d.Error.String()
			case d.DivergingEpoch != nil:
				got = fmt.Sprintf("diverge (%d,%d)", d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
			}
			if got != f.want {
				t.Errorf("logStart %d: fetch (lastFetchedEpoch %d, offset %d) → %s, want %s",
					r.Log().LogStartOffset(), f.lastFetchedEpoch, f.offset, got, f.want)
			}
		}
	}
}

// TestKafkaT13MakeLeaderUpdatesEpochCache ports PartitionTest.testMakeLeaderUpdatesEpochCache.
func TestKafkaT13MakeLeaderUpdatesEpochCache(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "0-1/e0 2-3/e5")
	ktLead(e, p, 0, 8, []int32{0, 1}, 1)
	if ep, o := e.era.answerOffsetsForEpoch(r.Log(), 8); ep != 8 || o != 4 {
		t.Errorf("lastOffsetForLeaderEpoch(8) = (%d,%d), want (8,4)", ep, o)
	}
}

// TestKafkaT14FollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch ports
// PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch
// (KAFKA-7128).
func TestKafkaT14FollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch(t *testing.T) {
	e, p, r := leaderAtEpoch8WithFiveRecords(t)
	if r.Log().LogEndOffset() != 5 {
		t.Fatalf("LEO %d, want 5", r.Log().LogEndOffset())
	}
	wantHW(t, r, 0, "after the appends")
	followerFetch(e, p, 2, 0, -1)
	followerFetch(e, p, 2, 1, -1)
	wantHW(t, r, 1, "after follower 2 fetched at 1")

	ktFollow(e, p, 0, 2, 9, 2)
	ktLead(e, p, 0, 10, []int32{0, 2}, 3)
	if r.EpochStartOffset() != 5 {
		t.Fatalf("epoch start offset %d, want 5", r.EpochStartOffset())
	}
	appendLeader(e, r, 2)
	if r.Log().LogEndOffset() != 7 {
		t.Fatalf("LEO %d, want 7", r.Log().LogEndOffset())
	}
	followerFetch(e, p, 1, 0, -1)
	followerFetch(e, p, 1, 1, -1)
	wantISR(t, r, []int32{0, 2}, []int32{0, 2}, "after follower 1 fetched at 1 (below the epoch start 5)")
	if n := len(alterPartitions(e)); n != 0 {
		t.Errorf("%d AlterPartition requests before follower 1 reached the epoch start, want 0", n)
	}
	followerFetch(e, p, 1, 5, -1)
	wantISR(t, r, []int32{0, 2}, []int32{0, 1, 2}, "after follower 1 fetched at 5")
	if ap := alterPartitions(e); len(ap) != 1 || !slices.Equal(ap[0].NewISR, []int32{0, 1, 2}) {
		t.Errorf("AlterPartition requests %+v, want one with ISR [0 1 2]", ap)
	}
}

// TestKafkaT15IsrExpansion ports PartitionTest.testIsrExpansion.
func TestKafkaT15IsrExpansion(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	seedLog(e, r, 10, 4)
	ktLead(e, p, 0, 5, []int32{0}, 1)
	rr := r.Remote(1)
	if rr.LastCaughtUpTime() != brk.Never || rr.LogEndOffset() != -1 {
		t.Fatalf("follower 1 after makeLeader: lastCaughtUp %d, LEO %d; want never (Kafka: 0), -1", rr.LastCaughtUpTime(), rr.LogEndOffset())
	}
	wantHW(t, r, 10, "a sole-member ISR")

	followerFetch(e, p, 1, 3, -1)
	wantISR(t, r, []int32{0}, []int32{0}, "after a fetch at 3")
	if rr.LogEndOffset() != 3 {
		t.Errorf("follower LEO %d, want 3", rr.LogEndOffset())
	}
	runFor(t, e, 1)
	followerFetch(e, p, 1, 10, -1)
	wantISR(t, r, []int32{0}, []int32{0, 1}, "after a fetch at 10")
	if ap := alterPartitions(e); len(ap) != 1 || !slices.Equal(ap[0].NewISR, []int32{0, 1}) {
		t.Errorf("AlterPartition requests %+v, want one with ISR [0 1]", ap)
	}
	if rr.LastCaughtUpTime() != e.now {
		t.Errorf("lastCaughtUp %d, want now (%d)", rr.LastCaughtUpTime(), e.now)
	}
	complete(t, e)
	wantISR(t, r, []int32{0, 1}, []int32{0, 1}, "after the AlterPartition completed")
	if r.PartitionEpoch() != 2 {
		t.Errorf("partition epoch %d, want 2", r.PartitionEpoch())
	}
	expands := eventsOf(e.events, EvISRChange, nil)
	if len(expands) != 1 || len(eventsOf(e.events, EvISRPending, func(ev Event) bool { return ev.Reason == "shrink" })) != 0 {
		t.Errorf("ISR changes %d (want 1 expand, 0 shrinks)", len(expands))
	}
}

// TestKafkaT16MaybeShrinkIsr ports PartitionTest.testMaybeShrinkIsr.
func TestKafkaT16MaybeShrinkIsr(t *testing.T) {
	e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	seedLog(e, r, 10, 4)
	ktLead(e, p, 0, 5, []int32{0, 1, 2}, 1)
	wantHW(t, r, 0, "after makeLeader")
	t0 := e.now
	followerFetch(e, p, 1, 10, -1)
	wantHW(t, r, 0, "follower 2's LEO is unknown")
	e.isrShrinkTask(e.brokers[0])
	if n := len(alterPartitions(e)); n != 0 {
		t.Fatalf("maybeShrinkIsr at t0 sent %d AlterPartition requests, want 0", n)
	}
	runFor(t, e, t0+30001-e.now)
	e.isrShrinkTask(e.brokers[0])
	if ap := alterPartitions(e); len(ap) != 1 || !slices.Equal(ap[0].NewISR, []int32{0, 1}) {
		t.Fatalf("AlterPartition requests %+v, want one with ISR [0 1]", ap)
	}
	wantISR(t, r, []int32{0, 1, 2}, []int32{0, 1, 2}, "while the shrink is pending")
	wantHW(t, r, 0, "while the shrink is pending")
	complete(t, e)
	wantISR(t, r, []int32{0, 1}, []int32{0, 1}, "after the shrink completed")
	wantHW(t, r, 10, "after the shrink completed")
	if r.PartitionEpoch() != 2 {
		t.Errorf("partition epoch %d, want 2", r.PartitionEpoch())
	}
}

// TestKafkaT17ShouldNotShrinkIsr ports PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp,
// testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd and IsrExpirationTest's four cases.
func TestKafkaT17ShouldNotShrinkIsr(t *testing.T) {
	leader2 := func(t *testing.T, cfg map[string]string, records int) (*Engine, *partition, *replica) {
		e, p := newUnitEngine(t, 2, []int32{0, 1}, cfg)
		r := e.replicaOn(p.pid, 0)
		*r.Log() = logOf(t, "")
		seedLog(e, r, records, 4)
		ktLead(e, p, 0, 5, []int32{0, 1}, 1)
		return e, p, r
	}
	t.Run("testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp", func(t *testing.T) {
		e, p, r := leader2(t, nil, 10)
		t0 := e.now
		rr := r.Remote(1)
		runFor(t, e, 5000)
		followerFetch(e, p, 1, 5, -1)
		if rr.LastCaughtUpTime() != t0 {
			t.Errorf("after the first fetch lastCaughtUp = t0%+d, want t0", rr.LastCaughtUpTime()-t0)
		}
		wantHW(t, r, 5, "after the fetch at 5")
		appendLeader(e, r, 5)
		runFor(t, e, 5001)
		followerFetch(e, p, 1, 10, -1)
		if rr.LastCaughtUpTime() != t0+5000 {
			t.Errorf("after the second fetch lastCaughtUp = t0%+d, want t0+5000", rr.LastCaughtUpTime()-t0)
		}
		wantHW(t, r, 10, "after the fetch at 10")
		e.isrShrinkTask(e.brokers[0])
		if n := len(alterPartitions(e)); n != 0 {
			t.Errorf("%d AlterPartition requests, want 0", n)
		}
	})
	t.Run("testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd", func(t *testing.T) {
		e, p, r := leader2(t, nil, 10)
		followerFetch(e, p, 1, 10, -1)
		wantHW(t, r, 10, "after the fetch at 10")
		runFor(t, e, 30001)
		e.isrShrinkTask(e.brokers[0])
		if n := len(alterPartitions(e)); n != 0 {
			t.Errorf("%d AlterPartition requests, want 0", n)
		}
	})
	// IsrExpirationTest: lag.max 100 ms, leader LEO 20; "out" means the shrink task drops the follower.
	type fetchAt struct{ after, offset int64 }
	for _, tc := range []struct {
		name    string
		fetches []fetchAt
		checkAt int64 // ms after the start
		out     bool
	}{
		{"testIsrExpirationForStuckFollowers", []fetchAt{{0, 19}}, 150, true},
		{"testIsrExpirationIfNoFetchRequestMade", nil, 150, true},
		{"testIsrExpirationForSlowFollowers", []fetchAt{{0, 18}, {75, 19}}, 150, true},
		{"testIsrExpirationForCaughtUpFollowers", []fetchAt{{0, 20}}, 150, false},
	} {
		t.Run("IsrExpirationTest."+tc.name, func(t *testing.T) {
			e, p, r := leader2(t, map[string]string{"replica.lag.time.max.ms": "100"}, 20)
			start := e.now
			for _, f := range tc.fetches {
				runFor(t, e, start+f.after-e.now)
				followerFetch(e, p, 1, f.offset, -1)
			}
			runFor(t, e, start+tc.checkAt-e.now)
			e.isrShrinkTask(e.brokers[0])
			out := r.State().Shrinking() && slices.Equal(r.State().Changing(), []int32{1})
			if out != tc.out {
				t.Fatalf("follower out of sync = %v, want %v (ISR state %+v)", out, tc.out, r.State())
			}
			if tc.name == "testIsrExpirationForSlowFollowers" {
				// Then it catches up to the log end: back in sync.
				r.State().Revert()
				followerFetch(e, p, 1, 20, -1)
				e.isrShrinkTask(e.brokers[0])
				if r.State().IsInflight() {
					t.Errorf("after a fetch at the log end the follower is still out of sync")
				}
			}
		})
	}
}

// TestKafkaT18UpdateFollowerFetchState ports PartitionTest.testUpdateFollowerFetchState.
func TestKafkaT18UpdateFollowerFetchState(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	seedLog(e, r, 6, 4)
	t0 := e.now
	ktLead(e, p, 0, 5, []int32{0, 1}, 1)
	rr := r.Remote(1)
	if rr.LastCaughtUpTime() != t0 || rr.LogEndOffset() != -1 || rr.LogStartOffset() != -1 {
		t.Fatalf("after makeLeader: lastCaughtUp t0%+d, LEO %d, logStart %d; want t0, -1, -1", rr.LastCaughtUpTime()-t0, rr.LogEndOffset(), rr.LogStartOffset())
	}
	runFor(t, e, 500)
	followerFetch(e, p, 1, 3, -1)
	if rr.LogEndOffset() != 3 || rr.LogStartOffset() != 0 || rr.LastCaughtUpTime() != t0 {
		t.Errorf("after a fetch at 3: LEO %d, logStart %d, lastCaughtUp t0%+d; want 3, 0, t0", rr.LogEndOffset(), rr.LogStartOffset(), rr.LastCaughtUpTime()-t0)
	}
	runFor(t, e, 500)
	followerFetch(e, p, 1, 6, -1)
	if rr.LogEndOffset() != 6 || rr.LastCaughtUpTime() != t0+1000 {
		t.Errorf("after a fetch at 6: LEO %d, lastCaughtUp t0%+d; want 6, t0+1000", rr.LogEndOffset(), rr.LastCaughtUpTime()-t0)
	}
}

// TestKafkaT19HighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR ports
// PartitionTest.testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR (era 3.7,
// KAFKA-15583: the committed ISR, not the maximal one, gates the HW).
func TestKafkaT19HighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR(t *testing.T) {
	e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, map[string]string{"min.insync.replicas": "3"})
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	seedLog(e, r, 10, 4)
	ktLead(e, p, 0, 5, []int32{0, 1}, 1)
	wantHW(t, r, 0, "after makeLeader")
	followerFetch(e, p, 1, 10, -1)
	wantHW(t, r, 0, "after follower 1 fetched at 10 (ISR 2 < min.isr 3)")
	followerFetch(e, p, 2, 10, -1)
	wantISR(t, r, []int32{0, 1}, []int32{0, 1, 2}, "after follower 2 fetched at 10")
	if n := len(alterPartitions(e)); n != 1 {
		t.Errorf("%d AlterPartition requests, want 1", n)
	}
	wantHW(t, r, 0, "while the expansion is pending")
	complete(t, e)
	wantHW(t, r, 10, "after the expansion completed")
}

// TestKafkaT20HighWatermarkIncreasesWithFencedOrShutdownFollower ports
// PartitionTest.testHighWatermarkIncreasesWithFencedOrShutdownFollower (KRaft),
// adapted to ZooKeeper mode. In ZK mode Partition.isReplicaIsrEligible only asks whether the
// broker is alive in the leader's metadata cache (ZkMetadataCache.hasAliveBroker, filled by the
// controller's UpdateMetadata); it does not look at controlled shutdown (the controller keeps
// shutting-down brokers out of the ISR instead). So:
//   - "fenced" becomes "dead in the leader's metadata cache" (an UpdateMetadata without it): HW 20;
//   - "shutting down" (in controlled shutdown, still registered) is ISR-eligible in ZK mode, so
//     the HW waits for it: 10, where KRaft gives 20;
//   - neither: 10.
//
// The makeLeader at the same leader epoch with a smaller ISR is a KRaft-only update (ZK mode
// bumps the leader epoch when the controller drops a replica); the port calls makeLeader directly.
func TestKafkaT20HighWatermarkIncreasesWithFencedOrShutdownFollower(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mark   func(e *Engine)
		wantHW int64
	}{
		{"dead in the leader's metadata cache (KRaft: fenced)", func(e *Engine) { e.brokers[0].rm.Metadata().SetAliveBrokers([]int32{0}) }, 20},
		{"in controlled shutdown (ZK: still eligible)", func(e *Engine) {
			e.brokers[1].SetShuttingDownForTest()
			e.ctrl.SetShuttingDownForTest(1)
		}, 10},
		{"neither", func(*Engine) {}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
			r := e.replicaOn(p.pid, 0)
			*r.Log() = logOf(t, "")
			seedLog(e, r, 10, 4)
			ktLead(e, p, 0, 5, []int32{0, 1}, 1)
			followerFetch(e, p, 1, 10, -1)
			wantHW(t, r, 10, "after the fetch at 10")
			tc.mark(e)
			appendLeader(e, r, 10)
			if r.Log().LogEndOffset() != 20 {
				t.Fatalf("LEO %d, want 20", r.Log().LogEndOffset())
			}
			wasLeader := r.IsLeader() && r.LeaderEpoch() == 5
			ktLead(e, p, 0, 5, []int32{0}, 2)
			if !wasLeader || r.EpochStartOffset() != 10 {
				t.Errorf("makeLeader at the same epoch reset the leader state (epoch start %d, want 10)", r.EpochStartOffset())
			}
			wantHW(t, r, tc.wantHW, "after makeLeader with ISR [0]")
		})
	}
}

// TestKafkaT21MonotonicOffsetsAfterLeaderChange ports the HW and epoch-start parts of
// PartitionTest.testMonotonicOffsetsAfterLeaderChange. Not ported: the
// ListOffsets answers (latest 5 without isolation, 2 READ_UNCOMMITTED, OFFSET_NOT_AVAILABLE while
// HW < epoch start, earliest 0): the engine models no client ListOffsets (KIP-207). The port checks
// the condition that answer depends on, epoch start 5 > HW 2.
func TestKafkaT21MonotonicOffsetsAfterLeaderChange(t *testing.T) {
	e, p, r := leaderAtEpoch8WithFiveRecords(t)
	for _, f := range []int32{1, 2} {
		followerFetch(e, p, f, 0, -1)
	}
	for _, f := range []int32{1, 2} {
		followerFetch(e, p, f, 2, -1)
	}
	complete(t, e)
	wantISR(t, r, []int32{0, 1, 2}, []int32{0, 1, 2}, "after the expansion")
	wantHW(t, r, 2, "after both followers fetched at 2")

	ktFollow(e, p, 0, 1, 9, r.PartitionEpoch()+1)
	ktLead(e, p, 0, 10, []int32{0, 1, 2}, r.PartitionEpoch()+1)
	if r.EpochStartOffset() != 5 || r.Log().HighWatermark() != 2 {
		t.Errorf("after the re-election: epoch start %d, HW %d; want 5 > 2 (ListOffsets latest would be OFFSET_NOT_AVAILABLE)",
			r.EpochStartOffset(), r.Log().HighWatermark())
	}
	for _, f := range []int32{1, 2} {
		followerFetch(e, p, f, 5, -1)
	}
	complete(t, e)
	wantHW(t, r, 5, "after both followers fetched at 5")
}

// TestKafkaT22DoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped ports
// PartitionTest.testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped.
func TestKafkaT22DoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	ktLead(e, p, 0, 8, []int32{0, 1}, 1)
	check := func(when string) {
		t.Helper()
		en := r.Log().Cache().Entries()
		if r.EpochStartOffset() != 0 || len(en) == 0 || en[len(en)-1].Epoch != 8 || en[len(en)-1].StartOffset != 0 {
			t.Errorf("%s: epoch start %d, cache [%s]; want 0 and latest (8,0)", when, r.EpochStartOffset(), cacheString(r.Log().Cache()))
		}
	}
	check("after makeLeader(e8, partition epoch 1)")
	appendLeader(e, r, 2)
	ktLead(e, p, 0, 8, []int32{0, 1}, 2)
	check("after makeLeader(e8, partition epoch 2)")
	if r.PartitionEpoch() != 2 {
		t.Errorf("partition epoch %d, want 2", r.PartitionEpoch())
	}
}

// leaderAtEpoch8WithFiveRecords is the setup PartitionTest's T14 and T21 share: replicas
// [0, 1, 2], broker 0 leader at epoch 8 with ISR {0, 2}, and two appends of 2 and 3 records.
func leaderAtEpoch8WithFiveRecords(t *testing.T) (*Engine, *partition, *replica) {
	t.Helper()
	e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, nil)
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	ktLead(e, p, 0, 8, []int32{0, 2}, 1)
	appendLeader(e, r, 2)
	appendLeader(e, r, 3)
	return e, p, r
}

// TestTruncateEmptyLogBelowItsStart: UnifiedLog.truncateTo with a target below the first segment
// calls truncateFullyAndStartAt even when the log holds no record. An empty follower log that
// started at 10 (after an OFFSET_OUT_OF_RANGE) and is truncated to 4 ends at 4, and the trace
// says so: a truncate event with no record dropped, and the high watermark moving down with it.
func TestTruncateEmptyLogBelowItsStart(t *testing.T) {
	e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, nil)
	r := e.replicaOn(p.pid, 1)
	r.Log().TruncateFullyAndStartAt(10)
	e.Drain()
	e.truncate(r, 4, "test")
	if leo, start, hw := r.Log().LogEndOffset(), r.Log().LogStartOffset(), r.Log().HighWatermark(); leo != 4 || start != 4 || hw != 4 {
		t.Fatalf("log end %d, start %d, HW %d; want 4, 4, 4", leo, start, hw)
	}
	evs := e.Drain()
	if got := truncations(evs, 1, p); len(got) != 1 || got[0] != 4 {
		t.Fatalf("truncations to %v, want [4]", got)
	}
	hws := eventsOf(evs, EvHighWatermark, onBroker(1))
	if len(hws) != 1 || hws[0].From.V != 10 || hws[0].To.V != 4 {
		t.Fatalf("high-watermark events %+v, want one from 10 to 4", hws)
	}
}
