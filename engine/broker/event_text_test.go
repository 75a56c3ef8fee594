package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestEventKindsTable: every kind has a name and a trace type, Kinds lists each once, and the
// kinds whose events only a recorded trace gets are made when read (a run without a trace builds
// none of their text).
func TestEventKindsTable(t *testing.T) {
	ks := Kinds()
	if len(ks) != int(numKinds)-1 || ks[0] != PartitionFailed || ks[len(ks)-1] != Truncated {
		t.Fatalf("Kinds() = %v", ks)
	}
	names := map[string]bool{}
	for _, k := range ks {
		if k.String() == "" || k.Type() == "" || names[k.String()] {
			t.Errorf("kind %d: name %q, type %q (a name once)", k, k.String(), k.Type())
		}
		names[k.String()] = true
		if k.TraceOnly() && !k.Lazy() {
			t.Errorf("%s goes only into a recorded trace but its text is made when emitted", k)
		}
	}
}

// TestEventText: each kind's text, as the trace has it (the engine's narration goldens hold
// them in context); a kind made when read gives the same text from the fields the trace keeps
// and Arg[0:2] alone, as the engine remakes it.
func TestEventText(t *testing.T) {
	cut := []commitlog.Record{{ID: 1}, {ID: 2}}
	cases := []struct {
		ev   Event
		want string
	}{
		{Event{Kind: PartitionFailed, Pid: protocol.Some[int32](3), Reason: "fenced"}, "broker 1 stopped fetching t-3: fenced"},
		{Event{Kind: FetcherAdded, Reason: "started", Arg: [4]int64{2, 0}}, "broker 1 started fetcher 2 for leader broker 0"},
		{Event{Kind: FetcherRemoved, Reason: "stopped", Arg: [4]int64{2, 0}}, "broker 1 stopped idle fetcher 2 for leader broker 0"},
		{Event{Kind: FetcherDied, Pid: protocol.Some[int32](3), Reason: "refused", Arg: [4]int64{0, 2, 1}},
			"broker 1's fetcher 0 for leader broker 2 died on t-3: refused; a KafkaException ends the thread before Kafka 2.3, and fetching of its 1 partition stops until the thread is replaced"},
		{Event{Kind: FatalExit, Pid: protocol.Some[int32](3), Reason: "fatal", Why: "out of range"}, "broker 1 exits: t-3: out of range"},
		{rejected(protocol.ErrStaleBrokerEpoch, 4, 5), "broker 1 rejected a LeaderAndIsr for broker epoch 4: it is at broker epoch 5 (STALE_BROKER_EPOCH)"},
		{rejected(protocol.ErrStaleControllerEpoch, 2, 3), "broker 1 rejected a LeaderAndIsr from controller epoch 2: it has seen controller epoch 3 (STALE_CONTROLLER_EPOCH)"},
		{Event{Kind: BecameLeader, Epoch: protocol.Some[int64](7), ISR: []int32{1, 2}, Reason: "leader", Arg: [4]int64{40}},
			"broker 1 became leader of t-3 in leader epoch 7 (epoch start offset 40, ISR [1 2])"},
		{Event{Kind: BecameFollower, Epoch: protocol.Some[int64](7), Reason: "follower", Arg: [4]int64{2, 7}},
			"broker 1 became follower of t-3 under leader 2 in leader epoch 7"},
		{Event{Kind: DuplicateBatch, From: protocol.Some[int64](0), To: protocol.Some[int64](2), Epoch: protocol.Some[int64](1)},
			"leader 1 found t-3's batch already at offsets 0..1 (idempotent producer, a retry): not appended again"},
		{Event{Kind: LeaderAppend, From: protocol.Some[int64](10), To: protocol.Some[int64](13), Epoch: protocol.Some[int64](7)},
			"leader 1 appended 3 records to t-3 at offsets 10..12 in epoch 7"},
		{Event{Kind: IsrChangeAsked, OldISR: []int32{0, 1, 2}, ISR: []int32{1, 2}, Reason: "shrink"}, "leader 1 asks to shrink the ISR of t-3: [0 1 2] → [1 2]"},
		{Event{Kind: IsrWriteSkipped, ISR: []int32{1}, Reason: "shrink", Name: "skipped", Arg: [4]int64{2, 3, 1}},
			"leader 1 could not shrink the ISR of t-3 to [1] in ZooKeeper (cached zkVersion 2, ZooKeeper has 3): skipped"},
		{Event{Kind: IsrWriteSkipped, ISR: []int32{1}, Reason: "shrink", Name: "skipped", Arg: [4]int64{2, 3, 0}},
			"leader 1 could not shrink the ISR of t-3 to [1] in ZooKeeper (no ZooKeeper connection): skipped"},
		{Event{Kind: IsrWritten, OldISR: []int32{1}, ISR: []int32{0, 1}, Reason: leaderVerb("expand"), Arg: [4]int64{4}},
			"leader 1 wrote the ISR of t-3 to ZooKeeper: [1] → [0 1] (zkVersion 4)"},
		{Event{Kind: Restarted}, "broker 1 started from its disk state"},
		{Event{Kind: Crashed, Reason: "process killed"}, "broker 1 is down (process killed)"},
		{Event{Kind: ShutdownBegan}, "broker 1 begins a controlled shutdown"},
		{Event{Kind: ShutdownAttemptFailed, Arg: [4]int64{1, 2, 5000, 0}}, "broker 1's controlled shutdown attempt 1: 2 partitions still led (no other ISR member to take them); retrying in 5000 ms"},
		{Event{Kind: ShutdownAttemptFailed, Arg: [4]int64{1, 0, 5000, 0}, Why: "REQUEST_TIMED_OUT"}, "broker 1's controlled shutdown attempt 1: REQUEST_TIMED_OUT; retrying in 5000 ms"},
		{Event{Kind: ShutdownAttemptFailed, Arg: [4]int64{3, 2, 5000, 1}}, "broker 1's controlled shutdown attempt 3 (the last): 2 partitions still led; it stops after 5000 ms"},
		{Event{Kind: ShutdownGaveUp, Arg: [4]int64{3, 2}}, "broker 1 stops anyway after 3 controlled-shutdown attempts (2 partitions still led)"},
		{Event{Kind: ShutdownGaveUp, Arg: [4]int64{3, -1}}, "broker 1 stops anyway after 3 controlled-shutdown attempts and the backoff after the last"},
		{Event{Kind: ShutdownCompleted}, "broker 1 stopped (controlled shutdown; logs flushed)"},
		{Event{Kind: LogDirFailed, Reason: "halt"}, "broker 1's log directory failed: before KIP-112 (inter.broker.protocol.version 1.0) the broker halts"},
		{Event{Kind: LogDirFailed, Arg: [4]int64{2}}, "broker 1's log directory failed: its 2 replicas are Offline"},
		{Event{Kind: HighWatermarkMoved, From: protocol.Some[int64](5), To: protocol.Some[int64](6), Reason: "leader",
			Follower: protocol.Some[int32](2), Arg: [4]int64{6}}, "t-3 on broker 1 (leader): high watermark 5 → 6 after follower 2's fetch at offset 6"},
		{Event{Kind: HighWatermarkMoved, From: protocol.Some[int64](5), To: protocol.Some[int64](4), Reason: "truncation"},
			"t-3 on broker 1 (truncation): high watermark 5 → 4"},
		{Event{Kind: Truncated, From: protocol.Some[int64](12), To: protocol.Some[int64](10), Records: cut, Reason: "diverged"},
			"broker 1 truncated t-3 from offset 12 to 10 (2 records dropped): diverged"},
	}
	seen := map[Kind]bool{}
	for _, c := range cases {
		seen[c.ev.Kind] = true
		if got := c.ev.Text(1, "t", 3); got != c.want {
			t.Errorf("%s: got  %q\nwant %q", c.ev.Kind, got, c.want)
		}
		if c.ev.Kind.Lazy() {
			kept := c.ev
			kept.Pid, kept.Arg[2], kept.Arg[3], kept.Why = protocol.Opt[int32]{}, 0, 0, ""
			if got := kept.Text(1, "t", 3); got != c.want {
				t.Errorf("%s is made when read, but from what the trace keeps it reads %q", c.ev.Kind, got)
			}
		}
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("no text tested for %s", k)
		}
	}
	if !slices.Equal([]string{leaderVerb("expand"), leaderVerb("shrink")}, []string{"leader expand", "leader shrink"}) {
		t.Error("leaderVerb")
	}
}
