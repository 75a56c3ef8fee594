package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// TestLeaderHWWithFakeBroker: the leader's HW is the smallest LEO of the replicas it waits for,
// and moves only up, with its event naming the follower whose fetch moved it; a caught-up
// follower outside the ISR holds it back too (it may join); 3.7's gate keeps it while the ISR is
// below min.insync.replicas, a setting capped at the replication factor.
func TestLeaderHWWithFakeBroker(t *testing.T) {
	rules := HWRules{LagTimeMaxMs: 10000, MinInsyncReplicas: 1}
	h, rm, p := leaderWithFollowers(t, []int32{0, 1, 2}, IsrRules{})
	h.book.HW = rules
	h.now = 10
	p.Remote(0).UpdateFetchState(h.now, 2, 0, 2, 42)
	p.Remote(2).UpdateFetchState(h.now, 1, 0, 2, 42)
	if !rm.MaybeIncrementLeaderHW(h, 0, p, 2) || p.Log().HighWatermark() != 1 ||
		!slices.Equal(h.calls, []string{"hw 0: 0 → 1 (leader, follower 2 at 1)"}) || !slices.Equal(h.facts, []string{"hw of 0 moved from 0"}) {
		t.Fatalf("HW %d, calls %q, facts %q; want 1, moved by follower 2's fetch", p.Log().HighWatermark(), h.calls, h.facts)
	}
	if rm.MaybeIncrementLeaderHW(h, 0, p, -1) {
		t.Error("the HW moved again with nothing new")
	}

	// Follower 2 out of the ISR but caught up within replica.lag.time.max.ms: it still holds the
	// HW back; past that, it no longer does.
	h, rm, p = leaderWithFollowers(t, []int32{0, 1}, IsrRules{})
	h.book.HW = rules
	h.now = 10
	p.Remote(0).UpdateFetchState(h.now, 2, 0, 2, 42)
	p.Remote(2).UpdateFetchState(h.now, 1, 0, 1, 42) // caught up with the LEO it saw: 1
	if rm.MaybeIncrementLeaderHW(h, 0, p, 0); p.Log().HighWatermark() != 1 {
		t.Errorf("a caught-up follower outside the ISR at 1: HW %d, want 1", p.Log().HighWatermark())
	}
	h.now = 20000
	if rm.MaybeIncrementLeaderHW(h, 0, p, 0); p.Log().HighWatermark() != 2 {
		t.Errorf("that follower lagging for 20 s: HW %d, want 2", p.Log().HighWatermark())
	}

	// 3.7's gate: min.insync.replicas 5, capped at the 3 replicas, and an ISR of 2.
	h, rm, p = leaderWithFollowers(t, []int32{0, 1}, IsrRules{})
	h.book.HW = HWRules{LagTimeMaxMs: 10000, MinInsyncReplicas: 5, MinIsrGatesHW: true, MinIsrCappedAtReplicas: true}
	p.Remote(0).UpdateFetchState(h.now, 2, 0, 2, 42)
	p.Remote(2).UpdateFetchState(h.now, 2, 0, 2, 42)
	if rm.MaybeIncrementLeaderHW(h, 0, p, 0) || p.Log().HighWatermark() != 0 {
		t.Errorf("ISR of 2 under an effective min.insync.replicas of 3: HW %d, want 0", p.Log().HighWatermark())
	}
	if got := h.book.HW.EffectiveMinIsr(3); got != 3 {
		t.Errorf("min.insync.replicas 5 over 3 replicas counts %d, want 3", got)
	}
}

// TestTruncationWithFakeBroker: a truncation tells the fetch sessions, the trace, a HW it moved
// and the checker, in that order; one below the log start puts the partition back on its
// fetcher thread's change list; a follower's HW takes the leader's, capped at its LEO, and is
// confirmed once.
func TestTruncationWithFakeBroker(t *testing.T) {
	h, rm, p := leaderWithFollowers(t, []int32{1}, IsrRules{})
	p.Log().SetHighWatermark(2)
	rm.Truncate(h, 0, p, 1, "test")
	want := []string{"truncated 0 from 2 to 1 (1 cut): test", "hw 0: 2 → 1 (truncation, follower -1 at 0)", "log cut 0 at 1"}
	if !slices.Equal(h.calls, want) || p.Log().LogEndOffset() != 1 {
		t.Errorf("truncate to 1: calls %q, LEO %d; want %q, 1", h.calls, p.Log().LogEndOffset(), want)
	}
	h.calls = nil
	rm.Truncate(h, 0, p, 1, "again")
	if len(h.calls) != 0 {
		t.Errorf("a truncation that cuts nothing told %q", h.calls)
	}

	f := newFakeFollower(0)
	h = &fakeHost{fakeFollower: f}
	var fetchers FetcherManager
	rm2 := NewReplicaManager(1, &fetchers)
	fp := h.replicas[0]
	fetchers.AddFetcher(h, 0, NewPartitionFetchState(0, 1, 0, -1, false), 1)
	th := fetchers.For(0, 0)
	th.Build(true, false, true, true, 0, 1, h, nil) // takes the change list
	h.calls = nil
	rm2.TruncateFullyAndStartAt(h, 0, fp, 5, "the leader's log starts past ours")
	if !slices.Equal(th.Changes(), []int32{0}) || fp.Log().LogStartOffset() != 5 {
		t.Errorf("starting the log at 5: change list %v, log start %d", th.Changes(), fp.Log().LogStartOffset())
	}
	h.calls = nil
	fp.Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 0}})
	rm2.SetFollowerHW(h, 0, fp, 9)
	rm2.SetFollowerHW(h, 0, fp, 9)
	if want := []string{"hw 0: 5 → 6 (follower, follower -1 at 0)", "confirmed 0"}; !slices.Equal(h.calls, want) {
		t.Errorf("the leader's HW 9 over a LEO of 6: calls %q, want %q", h.calls, want)
	}
}

// TestHeldByISRMeansNoRise: whenever heldByISR says a follower in the committed ISR holds the HW
// (MaybeIncrementLeaderHW's return without reading the rules), the whole computation, under
// either rule and with an expansion or a shrink in flight or none, finds no candidate above it.
func TestHeldByISRMeansNoRise(t *testing.T) {
	isrs := [][]int32{{1}, {0, 1}, {1, 2}, {0, 1, 2}}
	held := 0
	for _, isr := range isrs {
		for pending := range 3 { // none, expanding by 0 or 2 (whichever is out), shrinking to the leader
			for hw := range int64(2) {
				for leo0 := range int64(3) {
					for leo2 := range int64(3) {
						h, _, p := leaderWithFollowers(t, isr, IsrRules{})
						h.now = 10
						p.Log().SetHighWatermark(hw)
						p.Remote(0).UpdateFetchState(h.now, leo0, 0, 2, 42)
						p.Remote(2).UpdateFetchState(h.now, leo2, 0, 2, 42)
						switch {
						case pending == 1 && len(isr) < 3:
							out := int32(0)
							if slices.Contains(isr, 0) {
								out = 2
							}
							p.State().Prepare(true, []int32{out}, append(slices.Clone(isr), out))
						case pending == 2 && len(isr) > 1:
							p.State().Prepare(false, slices.DeleteFunc(slices.Clone(isr), func(b int32) bool { return b != 1 }), []int32{1})
						}
						if !p.heldByISR() {
							continue
						}
						held++
						for _, committedOnly := range []bool{false, true} {
							rules := HWRules{LagTimeMaxMs: 10000, CommittedISROnly: committedOnly}
							if cand := p.hwCandidate(h, &rules, h.now); cand > hw { // the whole computation, without the shortcut
								t.Errorf("ISR %v, pending %d, HW %d, follower LEOs %d %d, committed ISR only %v: held, but the candidate is %d",
									isr, pending, hw, leo0, leo2, committedOnly, cand)
							}
						}
					}
				}
			}
		}
	}
	if held == 0 {
		t.Fatal("no case held the HW")
	}
}
