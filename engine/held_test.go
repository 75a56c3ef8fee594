package engine

import (
	"fmt"
	"slices"
	"testing"
)

// cutLink cuts (or mends) both directions between brokers a and b.
func cutLink(t *testing.T, e *Engine, a, b int32, down bool) {
	t.Helper()
	for _, l := range [][2]int32{{a, b}, {b, a}} {
		apply(t, e, fmt.Sprintf(`{"do":"link","from":%d,"to":%d,"down":%v}`, l[0], l[1], down))
	}
}

// TestShortCutKeepsFollowerInISR: a follower cut off from its leader for 10 s (less than
// replica.lag.time.max.ms and the socket timeout) catches up after the link heals, because the
// leader's answer was held, not lost: TCP retransmits it at 200 ms, 600 ms, 1.4 s … after it was
// first sent (1.001 s), so the one after the heal (11 s) is at 13.601 s. The follower never leaves
// the ISR, and the acks=all write made during the cut is acknowledged then.
func TestShortCutKeepsFollowerInISR(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, nil)
	runFor(t, e, 1000)
	e.Drain()
	cutLink(t, e, 0, 2, true)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`)
	runFor(t, e, 10_000)
	if got := e.client(e.partitions[0]).Acked(); got != 0 {
		t.Fatalf("acked %d during the cut; want 0 (acks=all waits for broker 2)", got)
	}
	cutLink(t, e, 0, 2, false)
	runFor(t, e, 2_500) // 13.5 s: before the retransmission
	p := e.partitions[0]
	if leo := e.replicaOn(p.pid, 2).Log().LogEndOffset(); leo != 0 {
		t.Fatalf("broker 2 LEO %d at 13.5 s; want 0 until TCP's retransmission at 13.601 s", leo)
	}
	runFor(t, e, 1_000)
	if !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1, 2}) || e.tally.isrShrinks != 0 {
		t.Fatalf("ISR %v after %d shrinks; want [0 1 2] and none", e.ctrl.ISR(p.pid), e.tally.isrShrinks)
	}
	if leo := e.replicaOn(p.pid, 2).Log().LogEndOffset(); leo != 2 || e.client(p).Acked() != 2 {
		t.Fatalf("broker 2 LEO %d, acked %d; want 2 and 2", leo, e.client(p).Acked())
	}
	held, released := 0, 0
	for _, ev := range e.Drain() {
		switch ev.Type {
		case EvHeld:
			held++
		case EvReleased:
			released++
		}
	}
	if held == 0 || released != held {
		t.Fatalf("%d messages held, %d released; want every held one through", held, released)
	}
}

// TestLongCutDiscardsTimedOutRequests: cut for 50 s, the follower's fetch times out (30 s) and is
// given up on; when the link heals what was held of it early (the leader's answer) is discarded,
// not delivered stale, and only the follower's retry gets through. The follower, out of sync past
// replica.lag.time.max.ms, left the ISR meanwhile and rejoins after the heal.
func TestLongCutDiscardsTimedOutRequests(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, nil)
	runFor(t, e, 1000)
	e.Drain()
	cutLink(t, e, 0, 2, true)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
	runFor(t, e, 50_000) // the leader checks its ISR every 15 s: broker 2 is out at 45 s
	cutLink(t, e, 0, 2, false)
	runFor(t, e, 10_000)       // the retry fetch sent at 31.5 s is retransmitted at 56.9 s
	early := map[uint64]bool{} // held in the first 10 s of the cut: their request timed out
	released := map[uint64]bool{}
	for _, ev := range e.Drain() {
		switch {
		case ev.Type == EvHeld && ev.T < 11_000:
			early[ev.Message.ID] = true
		case ev.Type == EvReleased:
			released[ev.Message.ID] = true
		}
	}
	if len(early) == 0 || len(released) == 0 {
		t.Fatalf("%d messages held early in the cut, %d released after it; want some of each", len(early), len(released))
	}
	for _, id := range sortedKeys(early) {
		if released[id] {
			t.Errorf("message #%d, held early in the cut, was delivered after its request timed out", id)
		}
	}
	p := e.partitions[0]
	if e.tally.isrShrinks == 0 || e.tally.isrExpands == 0 || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1, 2}) {
		t.Fatalf("%d shrinks, %d expands, ISR %v; want broker 2 out during the cut and back after", e.tally.isrShrinks, e.tally.isrExpands, e.ctrl.ISR(p.pid))
	}
}

// TestControllerKeepsQueueWhileDisconnected: a controller that loses its ZooKeeper connection
// without losing its session is still the controller, and its queue to a broker survives. Here
// the LeaderAndIsr of the reassignment (broker 1 still leading, at leader epoch 1; the election's,
// which makes it a follower at leader epoch 2, waits behind it) is held while broker 1 is cut
// off, retransmitted into the controller's own isolation, and times out then; the controller
// retries after its heal, and broker 1 follows the new leader. (Sweep seed 2058 found it: the
// controller used to drop its queues whenever it was disconnected, and broker 1 stayed behind
// for ever.)
func TestControllerKeepsQueueWhileDisconnected(t *testing.T) {
	sc, err := ParseScenario([]byte(`{"name": "disconnected controller", "brokers": 3,
	  "topics": [{"name": "t", "assignment": [[1, 2]]}],
	  "steps": [
	    {"at": 1000, "do": "isolate", "broker": 1},
	    {"at": 2000, "do": "elect", "topic": "t", "partition": 0, "broker": 2},
	    {"at": 17000, "do": "heal", "broker": 1},
	    {"at": 18000, "do": "isolate", "broker": 0},
	    {"at": 35000, "do": "heal", "broker": 0},
	    {"at": 60000, "do": "expect", "topic": "t", "partition": 0, "leader": 2, "leaderEpoch": 2, "isr": [1, 2],
	      "replicas": {"1": {"epochs": []}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("broker 1 never followed the new leader: %v", res.Failures)
	}
	if r := e.replicaOn(0, 1); r.LeaderEpoch() != 2 || r.IsLeader() {
		t.Fatalf("broker 1 at leader epoch %d, leader in its own eyes %v; want a follower at 2", r.LeaderEpoch(), r.IsLeader())
	}
}
