package engine

import (
	"slices"
	"testing"
)

func mustApply(t *testing.T, e *Engine, a Action) {
	t.Helper()
	if err := e.Apply(a); err != nil {
		t.Fatal(err)
	}
}

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

// TestMaximalISR shows the anomaly KIP-497 fixed: with the HW computed
// over the committed ISR only, a leader whose ISR expansion is committed by the controller but
// not yet confirmed to it acknowledges a record the new ISR member lacks; when the leader dies
// that member is elected and the acknowledged record is lost. With the maximal ISR (Kafka's rule)
// the HW waits for the member being added, and nothing acknowledged is lost.
func TestMaximalISR(t *testing.T) {
	for _, unsafe := range []bool{true, false} {
		name := "maximal-isr"
		if unsafe {
			name = "committed-isr-only"
		}
		t.Run(name, func(t *testing.T) {
			sc2, err := ParseScenario([]byte(`{"name":"maximal ISR","brokers":3,"topics":[{"name":"t","assignment":[[1,2]]}],
				"config":{"auto.leader.rebalance.enable":false}}`))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(sc2)
			if err != nil {
				t.Fatal(err)
			}
			e.rules.HW.CommittedISROnly = unsafe
			p := e.partitions[0]
			leader := e.replicaOn(p.pid, 1)
			produce := func(acks Acks) { mustApply(t, e, Action{Do: "produce", Topic: "t", Partition: i32(0), Acks: &acks}) }
			link := func(from, to int32, down bool) {
				mustApply(t, e, Action{Do: "link", From: i32(from), To: i32(to), Down: down})
			}
			produce(-1)
			_ = e.RunUntil(1000)
			// The follower is cut off and falls out of the ISR.
			link(1, 2, true)
			link(2, 1, true)
			produce(1)
			runUntilTrue(t, e, 60000, "the ISR shrink to {1}", func() bool { return slices.Equal(e.ctrl.ISR(p.pid), []int32{1}) })
			// The controller's answers to the leader crawl; the follower comes back and catches up.
			mustApply(t, e, Action{Do: "link", From: i32(0), To: i32(1), LatencyMs: i64(20000)})
			link(1, 2, false)
			link(2, 1, false)
			runUntilTrue(t, e, 60000, "the controller's commit of ISR {1,2}", func() bool {
				return slices.Equal(e.ctrl.ISR(p.pid), []int32{1, 2}) && leader.State().IsInflight()
			})
			// The expansion is committed but the leader has not heard; the follower is cut again.
			link(1, 2, true)
			produce(-1)
			_ = e.RunUntil(e.Now() + 100)
			acked := e.clients.Produce(3).Result == "acked"
			if acked != unsafe {
				t.Fatalf("acks=all record acknowledged: %v; want %v", acked, unsafe)
			}
			mustApply(t, e, Action{Do: "kill", Broker: i32(1)})
			runUntilTrue(t, e, 30000, "the election of broker 2", func() bool { return e.ctrl.Leader(p.pid) == 2 })
			_ = e.RunUntil(e.Now() + 1000)
			lost := slices.Contains(e.ViolationNames(), "acked-write-lost")
			if lost != unsafe {
				t.Fatalf("acked-write-lost: %v, want %v (violations %v)", lost, unsafe, e.Violations())
			}
		})
	}
}

// TestEpochStartRule shows KAFKA-7128 at the ISR (PartitionTest T14): without the rule a
// follower joins the ISR as soon as it reaches the HW, although a re-elected leader's HW is only a
// lower bound and the follower lacks records of the previous epochs that may be committed; with
// the rule it must reach the current epoch's start offset first.
func TestEpochStartRule(t *testing.T) {
	for _, unsafe := range []bool{true, false} {
		name := "epoch-start-rule"
		if unsafe {
			name = "no-epoch-start-rule"
		}
		t.Run(name, func(t *testing.T) {
			e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, nil)
			e.rules.Isr.NoEpochStartRule = unsafe
			r := e.replicaOn(p.pid, 0)
			r.Log().AppendAsLeader(r.LeaderEpoch(), []int64{101, 102, 103, 104, 105})
			// A leader at a new epoch whose HW (1) lags its log end (5): epoch start 5.
			r.Log().SetHighWatermark(1)
			r.SetEpochStartOffset(5)
			r.State().Commit([]int32{0, 2})
			rr := r.Remote(1)
			rr.SetLogEndOffsetForTest(-1)
			followerFetch(e, p, 1, 1, -1) // Replica.updateFetchState at offset 1, then maybeExpandIsr
			joined := r.State().Expanding() && slices.Contains(r.State().PendingISR(), 1)
			if joined != unsafe {
				t.Fatalf("follower at offset 1 asked into the ISR: %v, want %v", joined, unsafe)
			}
		})
	}
}
