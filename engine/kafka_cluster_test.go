package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Ports of Kafka's multi-broker tests: integration and system tests, driven here
// by scenario actions (produce, shutdown, kill, restart, consume) and simulated time, and checked
// against the engine's state. Broker ids are 0..n-1 (Kafka's tests use 100/101 or 1/2).

// apply runs a scenario action given as JSON at the current time.
func apply(t testing.TB, e *Engine, action string) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(action), &fields); err != nil {
		t.Fatalf("bad action %s: %v", action, err)
	}
	a, err := ParseAction(fields)
	if err != nil {
		t.Fatalf("action %s: %v", action, err)
	}
	if err := e.Apply(a); err != nil {
		t.Fatalf("action %s: %v", action, err)
	}
}

// runUntilTrue runs the engine in steps of 10 ms until cond holds, failing after limit ms.
func runUntilTrue(t testing.TB, e *Engine, limit int64, what string, cond func() bool) {
	t.Helper()
	end := e.now + limit
	for !cond() {
		if e.now >= end {
			t.Fatalf("after %d ms: %s never happened", limit, what)
		}
		runFor(t, e, 10)
	}
}

func epochsOf(r *replica) string { return cacheString(r.Log().Cache()) }

// lastBatchEpoch is the epoch of the last record of r's log, or -1.
func lastBatchEpoch(r *replica) int32 {
	recs := r.Log().Records()
	if len(recs) == 0 {
		return -1
	}
	return recs[len(recs)-1].Epoch
}

func produceOp(e *Engine, n int) *ProduceOp { return e.clients.Produce(int64(n)) }

// TestKafkaT25ShouldFollowLeaderEpochBasicWorkflow ports
// EpochDrivenReplicationProtocolAcceptanceTest.shouldFollowLeaderEpochBasicWorkflow
// (ZooKeeper mode, read at 7c429f3^). Brokers 0 (leader) and 1, RF 2, acks=all. A bounce is a
// clean (controlled) shutdown and a start.
func TestKafkaT25ShouldFollowLeaderEpochBasicWorkflow(t *testing.T) {
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, nil)
	p := e.partitionOf(ktTopic, 0)
	r0, r1 := e.replicaOn(p.pid, 0), e.replicaOn(p.pid, 1)
	write := func(n int) {
		t.Helper()
		apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
		op := produceOp(e, n)
		runUntilTrue(t, e, 10000, fmt.Sprintf("write %d acknowledged and replicated", n), func() bool {
			return op.Done && r0.Log().LogEndOffset() == r1.Log().LogEndOffset()
		})
		if op.Result != "acked" {
			t.Fatalf("write %d: %s", n, op.Result)
		}
	}
	bounce := func(b int32) {
		t.Helper()
		apply(t, e, fmt.Sprintf(`{"do":"shutdown","broker":%d}`, b))
		runUntilTrue(t, e, 10000, fmt.Sprintf("broker %d stopped", b), func() bool { return e.brokers[b].Dead() })
		apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, b))
		runUntilTrue(t, e, 60000, fmt.Sprintf("broker %d back in the ISR", b), func() bool { return slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) })
	}
	caches := func(step string, leader *replica, wantLeader string, follower *replica, wantFollower string) {
		t.Helper()
		if got := epochsOf(leader); got != wantLeader {
			t.Errorf("%s: leader %d epoch cache [%s], want [%s]", step, leader.Broker(), got, wantLeader)
		}
		if got := epochsOf(follower); got != wantFollower {
			t.Errorf("%s: follower %d epoch cache [%s], want [%s]", step, follower.Broker(), got, wantFollower)
		}
	}

	runFor(t, e, 100)
	write(1)
	caches("1. one write", r0, "(0,0)", r1, "(0,0)")

	bounce(1)
	caches("2. follower bounced", r0, "(0,0) (1,1)", r1, "(0,0)")

	write(2)
	caches("3. write", r0, "(0,0) (1,1)", r1, "(0,0) (1,1)")
	if lastBatchEpoch(r0) != 1 || lastBatchEpoch(r1) != 1 {
		t.Errorf("3. last batch epochs %d and %d, want 1", lastBatchEpoch(r0), lastBatchEpoch(r1))
	}

	bounce(0)
	if e.ctrl.Leader(p.pid) != 1 {
		t.Fatalf("4. leader %d after the leader bounce, want 1", e.ctrl.Leader(p.pid))
	}
	caches("4. leader bounced", r1, "(0,0) (1,1) (2,2)", r0, "(0,0) (1,1)")
	write(3)
	caches("4. write", r1, "(0,0) (1,1) (2,2)", r0, "(0,0) (1,1) (2,2)")
	if lastBatchEpoch(r0) != 2 || lastBatchEpoch(r1) != 2 || logString(r0.Log()) != logString(r1.Log()) {
		t.Errorf("4. logs %q and %q, want equal with last batch epoch 2", logString(r0.Log()), logString(r1.Log()))
	}
	if v := e.ViolationNames(); len(v) != 0 {
		t.Errorf("violations %v", v)
	}
}

// uncleanElections counts the controller's unclean elections (Kafka's UncleanLeaderElectionsPerSec).
func uncleanElections(e *Engine) int {
	return len(eventsOf(e.events, EvLeaderChange, func(ev Event) bool { return strings.HasPrefix(ev.Reason, "unclean") }))
}

// consumeAll reads t-0 from the consumer's position up to the HW and returns the record ids read
// by every consume so far.
func consumeAll(t *testing.T, e *Engine, p *partition) []int64 {
	t.Helper()
	apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
	runFor(t, e, 10)
	var ids []int64
	for _, r := range e.client(p).Consumed() {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestKafkaT26UncleanLeaderElection ports UncleanLeaderElectionTest:
// testUncleanLeaderElectionEnabled and testUncleanLeaderElectionDisabled. Brokers 0 (leader) and
// 1, RF 2, min.insync.replicas 1; "stop" is a clean shutdown as in the Kafka test.
func TestKafkaT26UncleanLeaderElection(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("unclean.leader.election.enable=%v", enabled), func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, map[string]string{"unclean.leader.election.enable": fmt.Sprint(enabled)})
			p := e.partitionOf(ktTopic, 0)
			produce := func(n int, want string) *ProduceOp {
				t.Helper()
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
				op := produceOp(e, n)
				runUntilTrue(t, e, 10000, fmt.Sprintf("produce %d done", n), func() bool { return op.Done })
				if op.Result != want {
					t.Fatalf("produce %d: %s, want %s", n, op.Result, want)
				}
				return op
			}
			stop := func(b int32) {
				t.Helper()
				apply(t, e, fmt.Sprintf(`{"do":"shutdown","broker":%d}`, b))
				// The last replica standing runs every attempt: 10 s of backoff, each attempt a round trip.
				runUntilTrue(t, e, 11000, fmt.Sprintf("broker %d stopped", b), func() bool { return e.brokers[b].Dead() })
			}
			runFor(t, e, 100)
			first := produce(1, "acked")
			runUntilTrue(t, e, 5000, "first replicated", func() bool { return e.replicaOn(p.pid, 1).Log().HighWatermark() == 1 })
			stop(1)
			if !slices.Equal(e.ctrl.ISR(p.pid), []int32{0}) {
				t.Fatalf("ISR %v after the follower stopped, want [0]", e.ctrl.ISR(p.pid))
			}
			second := produce(2, "acked")
			stop(0)
			// Both brokers are down, so no controller runs (ZooKeeper mode with two brokers): the
			// restarted follower becomes controller and handles the dead leader on failover.
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 1000)

			if enabled {
				if e.ctrl.Leader(p.pid) != 1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{1}) || !e.ctrl.Recovering(p.pid) {
					t.Fatalf("leader %d, ISR %v, recovering %v; want 1, [1], true", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid), e.ctrl.Recovering(p.pid))
				}
				if n := uncleanElections(e); n != 1 {
					t.Errorf("%d unclean elections, want 1", n)
				}
				third := produce(3, "acked")
				if third.BaseOffset != 1 {
					t.Errorf("third written at offset %d, want 1", third.BaseOffset)
				}
				if got, want := consumeAll(t, e, p), []int64{first.RecordIDs[0], third.RecordIDs[0]}; !slices.Equal(got, want) {
					t.Errorf("consumed %v, want [first third] = %v", got, want)
				}
				apply(t, e, `{"do":"restart","broker":0}`)
				r0, r1 := e.replicaOn(p.pid, 0), e.replicaOn(p.pid, 1)
				runUntilTrue(t, e, 30000, "broker 0 reconciled with leader 1", func() bool { return logString(r0.Log()) == logString(r1.Log()) })
				for _, rec := range r0.Log().Records() {
					if rec.ID == second.RecordIDs[0] {
						t.Errorf("broker 0 still holds second")
					}
				}
				if !slices.Contains(e.ViolationNames(), "acked-write-lost") {
					t.Errorf("violations %v, want acked-write-lost among them", e.ViolationNames())
				}
				return
			}

			if e.ctrl.Leader(p.pid) != -1 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0}) {
				t.Fatalf("with unclean election disabled: leader %d, ISR %v; want -1, [0]", e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid))
			}
			apply(t, e, `{"do":"config","set":{"delivery.timeout.ms":1000,"request.timeout.ms":1000}}`)
			produce(3, ErrDeliveryTimeout.String())
			if got := consumeAll(t, e, p); len(got) != 0 {
				t.Errorf("consumed %v while offline, want nothing", got)
			}
			apply(t, e, `{"do":"config","set":{"delivery.timeout.ms":120000,"request.timeout.ms":30000}}`)
			apply(t, e, `{"do":"restart","broker":0}`)
			runUntilTrue(t, e, 10000, "broker 0 leader again", func() bool { return e.ctrl.Leader(p.pid) == 0 })
			third := produce(4, "acked")
			runUntilTrue(t, e, 10000, "third committed", func() bool { return e.replicaOn(p.pid, 0).Log().HighWatermark() == 3 })
			want := []int64{first.RecordIDs[0], second.RecordIDs[0], third.RecordIDs[0]}
			if got := consumeAll(t, e, p); !slices.Equal(got, want) {
				t.Errorf("consumed %v, want [first second third] = %v", got, want)
			}
			if v := e.ViolationNames(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}

// TestKafkaT27HWCheckpointWithFailuresMultipleLogSegments ports
// LogRecoveryTest.testHWCheckpointWithFailuresMultipleLogSegments: RF 2,
// replica.lag.time.max.ms 5000, replica.fetch.wait.max.ms 1000, replica.fetch.min.bytes 20.
// Kafka's server1 and server2 are brokers 0 and 1; the checkpoint file is hwCheckpoint.
func TestKafkaT27HWCheckpointWithFailuresMultipleLogSegments(t *testing.T) {
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, map[string]string{
		"replica.lag.time.max.ms": "5000", "replica.fetch.wait.max.ms": "1000", "replica.fetch.min.bytes": "20"})
	p := e.partitionOf(ktTopic, 0)
	r0, r1 := e.replicaOn(p.pid, 0), e.replicaOn(p.pid, 1)
	ops := 0
	send := func(n int) {
		t.Helper()
		for range n {
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			ops++
			op := produceOp(e, ops)
			runUntilTrue(t, e, 10000, "produce acknowledged", func() bool { return op.Done })
			if op.Result != "acked" {
				t.Fatalf("produce %d: %s", ops, op.Result)
			}
		}
	}
	stop := func(b int32) {
		t.Helper()
		apply(t, e, fmt.Sprintf(`{"do":"shutdown","broker":%d}`, b))
		// The last replica standing runs every attempt: 10 s of backoff, each attempt a round trip.
		runUntilTrue(t, e, 11000, fmt.Sprintf("broker %d stopped", b), func() bool { return e.brokers[b].Dead() })
	}
	checkpoints := func(when string, want int64) {
		t.Helper()
		if r0.HWCheckpoint() != want || r1.HWCheckpoint() != want {
			t.Errorf("%s: checkpoints %d and %d, want %d", when, r0.HWCheckpoint(), r1.HWCheckpoint(), want)
		}
	}

	runFor(t, e, 100)
	send(2)
	runUntilTrue(t, e, 10000, "follower HW 2", func() bool { return r1.Log().HighWatermark() == 2 })
	stop(0)
	stop(1)
	checkpoints("after both shut down", 2)

	apply(t, e, `{"do":"restart","broker":1}`)
	runUntilTrue(t, e, 10000, "broker 1 leader", func() bool { return e.ctrl.Leader(p.pid) == 1 })
	checkpoints("after broker 1 started alone", 2)
	apply(t, e, `{"do":"restart","broker":0}`)
	runFor(t, e, 100)
	checkpoints("after broker 0 started", 2)
	send(2)
	runUntilTrue(t, e, 20000, "both HW 4", func() bool { return r0.Log().HighWatermark() == 4 && r1.Log().HighWatermark() == 4 })
	stop(0)
	stop(1)
	checkpoints("after both shut down again", 4)
}

// TestKafkaT28ReplicationWithBrokerFailure ports tests/kafkatest/tests/core/replication_test.py
// test_replication_with_broker_failure for its four failure modes: 3 brokers, 3
// partitions, RF 3, min.insync.replicas 2, a background acks=all producer (one record per
// partition every 50 ms) and a consumer. The leader of partition 0 is shut down once (clean or
// hard), or bounced 5 times (clean, or hard with a wait for its ZooKeeper session to expire).
// Every acknowledged record must be consumed.
func TestKafkaT28ReplicationWithBrokerFailure(t *testing.T) {
	for _, mode := range []string{"clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce"} {
		t.Run(mode, func(t *testing.T) {
			sc := &Scenario{Name: t.Name(), Seed: 7, Brokers: 3,
				Topics: []Topic{{Name: ktTopic, Partitions: 3, ReplicationFactor: 3}},
				Config: map[string]json.RawMessage{"min.insync.replicas": json.RawMessage("2")}}
			e, err := New(sc)
			if err != nil {
				t.Fatal(err)
			}
			producing := true
			steps := 0
			tick := func() {
				runFor(t, e, 50)
				steps++
				for i := range 3 {
					if producing {
						apply(t, e, fmt.Sprintf(`{"do":"produce","topic":"t","partition":%d,"count":1}`, i))
					}
					if steps%10 == i {
						apply(t, e, fmt.Sprintf(`{"do":"consume","topic":"t","partition":%d}`, i))
					}
				}
			}
			waitFor := func(limit int64, what string, cond func() bool) {
				t.Helper()
				end := e.now + limit
				for !cond() {
					if e.now >= end {
						t.Fatalf("after %d ms: %s never happened", limit, what)
					}
					tick()
				}
			}
			p0 := e.partitionOf(ktTopic, 0)
			for range 20 {
				tick()
			}
			fail := func(hard, restart bool) {
				t.Helper()
				waitFor(60000, "partition 0 has a leader", func() bool { return e.ctrl.Leader(p0.pid) >= 0 })
				b := e.ctrl.Leader(p0.pid)
				if hard {
					apply(t, e, fmt.Sprintf(`{"do":"kill","broker":%d}`, b))
					waitFor(60000, "the session expired", func() bool { return !e.ctrl.Registered(b) })
				} else {
					apply(t, e, fmt.Sprintf(`{"do":"shutdown","broker":%d}`, b))
					waitFor(60000, "the broker stopped", func() bool { return e.brokers[b].Dead() })
				}
				if restart {
					apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, b))
				}
				for range 20 {
					tick()
				}
			}
			switch mode {
			case "clean_shutdown":
				fail(false, false)
			case "hard_shutdown":
				fail(true, false)
			case "clean_bounce", "hard_bounce":
				for range 5 {
					fail(mode == "hard_bounce", true)
				}
			}
			for range 20 {
				tick()
			}
			producing = false
			// Let the producer's retries end, then read everything committed.
			waitFor(180000, "every produce answered", func() bool {
				for _, op := range e.clients.ProduceOps() {
					if !op.Done {
						return false
					}
				}
				return true
			})
			for _, p := range e.partitions {
				waitFor(60000, fmt.Sprintf("%s consumed up to its HW", p.name()), func() bool {
					return e.ctrl.Leader(p.pid) >= 0 && e.client(p).NextRead() >= e.replicaOn(p.pid, e.ctrl.Leader(p.pid)).Log().HighWatermark()
				})
				consumed := map[int64]bool{}
				for _, r := range e.client(p).Consumed() {
					consumed[r.ID] = true
				}
				lost := 0
				for _, r := range e.client(p).AckedAll() {
					if !consumed[r.ID] {
						lost++
					}
				}
				if lost > 0 || len(e.client(p).AckedAll()) < 50 {
					t.Errorf("%s: %d of %d acknowledged records not consumed (want 0 of at least 50)", p.name(), lost, len(e.client(p).AckedAll()))
				}
			}
			if v := e.ViolationNames(); len(v) != 0 {
				for _, x := range e.Violations() {
					t.Logf("violation at %d: %s", x.T, x.Text)
				}
				t.Errorf("violations %v", v)
			}
		})
	}
}
