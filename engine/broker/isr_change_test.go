package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// leaderWithFollowers is broker 1 leading t-0 (assignment 0, 1, 2) with ISR isr and two records,
// through the replica manager and a fake broker.
func leaderWithFollowers(t *testing.T, isr []int32, rules IsrRules) (*fakeHost, *ReplicaManager, *Partition) {
	t.Helper()
	h := &fakeHost{fakeFollower: newFakeFollower(0), book: Rules{Isr: rules, Replica: ReplicaRules{CheckpointIntervalMs: 5000}}}
	var fetchers FetcherManager
	rm := NewReplicaManager(1, &fetchers)
	p := h.replicas[0]
	p.Log().AppendAsLeader(0, []int64{1, 2})
	rm.MakeLeader(h, 0, p, protocol.LeaderAndIsrState{TP: h.TP(0), Leader: 1, LeaderEpoch: 1, ISR: isr, Replicas: []int32{0, 1, 2}}, nil)
	h.calls = nil
	return h, &rm, p
}

// TestIsrChangesWithFakeBroker: a follower that reached the HW and the epoch start is asked into
// the ISR through AlterPartition, which the answer commits; before 2.7 the leader writes
// ZooKeeper instead; with no controller the request waits for a retry; and the shrink task takes
// out a follower not caught up for replica.lag.time.max.ms, and before 2.1 one that is level
// with the leader but stopped fetching.
func TestIsrChangesWithFakeBroker(t *testing.T) {
	rules := IsrRules{AlterPartition: true, ExpandNeedsEpochStart: true, LevelFollowerStaysInIsr: true, LagTimeMaxMs: 10000}
	h, rm, p := leaderWithFollowers(t, []int32{1}, rules)
	rr := p.Remote(2)
	h.now = 50
	rr.UpdateFetchState(h.now, 2, 0, 2, 42)
	rm.MaybeExpandIsr(h, 0, p, rr)
	m, calls := h.last(t, 1)
	if want := []string{"ask expand 0 [1] → [1 2]"}; !slices.Equal(calls, want) || m.Type != protocol.MsgAlterPartition ||
		!slices.Equal(m.AlterPartition.NewISR, []int32{1, 2}) || m.To != 0 || !p.State().Expanding() {
		t.Fatalf("expansion: calls %q, sent %+v", calls, m)
	}
	rm.MaybeExpandIsr(h, 0, p, rr)
	if len(h.sent) != 1 {
		t.Error("a second expansion while one is in flight")
	}
	rm.HandleAlterPartitionResponse(h, &protocol.Message{ReplyTo: m.ID, AlterPartitionResponse: &protocol.AlterPartitionResponse{
		TP: h.TP(0), LeaderEpoch: 1, PartitionEpoch: 4, ISR: []int32{1, 2}}})
	if want := []string(nil); !slices.Equal(h.calls, want) || !slices.Equal(p.State().ISR(), []int32{1, 2}) ||
		p.PartitionEpoch() != 4 || p.State().IsInflight() {
		t.Fatalf("the answer: calls %q, ISR %v, partition epoch %d", h.calls, p.State().ISR(), p.PartitionEpoch())
	}

	// Before 2.7 the leader writes ZooKeeper itself, conditional on its cached zkVersion: a stale
	// version skips the change; a write commits it at once, with the znode's new version.
	rules.AlterPartition = false
	h, rm, p = leaderWithFollowers(t, []int32{1}, rules)
	rr = p.Remote(0)
	rr.UpdateFetchState(h.now, 2, 0, 2, 42)
	h.zk = IsrWrite{Connected: true, Version: 3}
	rm.MaybeExpandIsr(h, 0, p, rr)
	if want := []string{"zookeeper 0 to [0 1] at version 0", "skipped expand 0: [1] → [0 1], cached 0, ZooKeeper 3, connected 1 (skipped)"}; !slices.Equal(h.calls, want) ||
		len(h.sent) != 0 || !slices.Equal(p.State().ISR(), []int32{1}) {
		t.Errorf("before 2.7, a stale version: calls %q, %d sent, ISR %v", h.calls, len(h.sent), p.State().ISR())
	}
	h.calls, h.facts = nil, nil
	h.zk = IsrWrite{Connected: true, Written: true, Version: 1, LeaderEpoch: 1, Old: []int32{1}, ISR: []int32{0, 1}}
	rm.MaybeExpandIsr(h, 0, p, rr)
	// (The HW is at the LEO already: makeLeader advanced it over the ISR of the leader alone.)
	if want := []string{"zookeeper 0 to [0 1] at version 0", "written leader expand 0: [1] → [0 1] in 1 at version 1"}; !slices.Equal(h.calls, want) ||
		!slices.Equal(p.State().ISR(), []int32{0, 1}) || p.PartitionEpoch() != 1 || p.State().IsInflight() {
		t.Errorf("before 2.7, written: calls %q, ISR %v, version %d", h.calls, p.State().ISR(), p.PartitionEpoch())
	}
	if !slices.Equal(h.facts, []string{"isr of 0: [1] → [0 1]"}) {
		t.Errorf("before 2.7, written: facts %q, want the committed ISR's change", h.facts)
	}

	// No controller: a retry after retry.backoff.ms.
	rules.AlterPartition = true
	h, rm, p = leaderWithFollowers(t, []int32{1}, rules)
	h.controller = -1
	rr = p.Remote(2)
	rr.UpdateFetchState(h.now, 2, 0, 2, 42)
	rm.MaybeExpandIsr(h, 0, p, rr)
	if want := []string{"ask expand 0 [1] → [1 2]", "resend 0 at 100"}; !slices.Equal(h.calls, want) || len(h.sent) != 0 {
		t.Errorf("no controller: calls %q, %d sent", h.calls, len(h.sent))
	}

	// The shrink task: follower 0 fell behind, follower 2 is level but has not fetched for 20 s.
	for _, level := range []bool{true, false} {
		rules.LevelFollowerStaysInIsr = level
		h, rm, p = leaderWithFollowers(t, []int32{0, 1, 2}, rules)
		p.Log().AppendAsLeader(1, []int64{3})
		p.Remote(0).UpdateFetchState(0, 2, 0, 3, 42)
		p.Remote(2).UpdateFetchState(0, 3, 0, 3, 42)
		h.now = 20000
		rm.IsrShrinkTask(h)
		want := []string{"ask shrink 0 [0 1 2] → [1 2]", "shrink task at 25000"}
		if !level {
			want[0] = "ask shrink 0 [0 1 2] → [1]"
		}
		if !slices.Equal(h.calls, want) {
			t.Errorf("shrink task, level follower stays %v: calls %q, want %q", level, h.calls, want)
		}
	}
}
