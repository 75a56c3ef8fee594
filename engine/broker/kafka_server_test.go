package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The fake cluster's side of the process: each call noted, in order.

func (h *fakeHost) ProcessRules() ProcessRules     { return h.book.Process }
func (h *fakeHost) RegisterBroker()                { h.note("register") }
func (h *fakeHost) ScheduleShutdownRetry(at int64) { h.note("shutdown retry at %d", at) }
func (h *fakeHost) NotifyLogDirFailure()           { h.note("log dir failure notified") }
func (h *fakeHost) ProcessGone(clean bool)         { h.note("gone (clean %v)", clean) }

// TestBrokerProcess drives a whole Broker, start to stop, over the fake cluster through its
// entry points only (KafkaServer's and KafkaApis'), as the engine's actions, network and agenda
// do: its start (the isr-expiration task, the registration); leading both partitions and an
// append; a crash with a power loss dropping the unflushed records, the cluster hearing the
// truncation and forgetting the process; a restart recovering from the HW checkpoint; a
// controlled shutdown whose attempts fail (the controller's answer leaving a partition led, a
// timeout) and which stops anyway after the backoff that follows the last (before 3.1), with
// its logs flushed and HWs checkpointed and a late answer ignored; one answered by the
// controller in the broker's own process; a failed log directory taking the replicas offline
// (KIP-112), and before KIP-112 halting; and a thread's fatal error shutting it down once.
func TestBrokerProcess(t *testing.T) {
	h, b := brokerOfTwo(t, ReplicaRules{BrokerEpochs: true, CheckpointIntervalMs: 5000})
	h.book.Isr = IsrRules{AlterPartition: true, LagTimeMaxMs: 10000}
	h.book.Process = ProcessRules{ControlledShutdownMaxRetries: 2, ControlledShutdownRetryBackoffMs: 100,
		BackoffAfterLastShutdownAttempt: true, LogDirFailureHandling: true}
	r0 := b.Replica(0)
	calls := func(step string, want ...string) {
		t.Helper()
		if !slices.Equal(h.calls, want) {
			t.Fatalf("%s: calls %q, want %q", step, h.calls, want)
		}
		h.calls = nil
	}
	lead := func(controllerEpoch, leaderEpoch int32, records ...int64) {
		t.Helper()
		b.Handle(&protocol.Message{ID: 1, Type: protocol.MsgLeaderAndIsr, From: 0, To: 1, LeaderAndIsr: &protocol.LeaderAndIsrRequest{
			ControllerEpoch: controllerEpoch, BrokerEpoch: 42, LiveLeaders: []int32{1},
			Partitions: []protocol.LeaderAndIsrState{
				{TP: h.TP(0), Leader: 1, LeaderEpoch: leaderEpoch, ISR: []int32{1}, Replicas: []int32{0, 1, 2}},
				{TP: h.TP(1), Leader: 1, LeaderEpoch: leaderEpoch, ISR: []int32{1}, Replicas: []int32{1, 2, 0}}}}})
		b.Handle(&protocol.Message{ID: 2, Type: protocol.MsgProduce, From: protocol.ClientNode, To: 1,
			Produce: &protocol.ProduceRequest{TP: h.TP(0), Acks: 1, RecordIDs: records, TimeoutMs: 30000}})
		h.calls = nil
	}

	b.Startup(false)
	calls("the first start", "shrink task at 5000", "register")
	lead(1, 1, 5, 6)
	if r0.Log().LogEndOffset() != 2 || r0.Log().HighWatermark() != 2 || r0.Unflushed() != 2 || r0.HWCheckpoint() != 0 {
		t.Fatalf("after a produce: LEO %d, HW %d, unflushed %d, checkpoint %d; want 2, 2, 2, 0 (written at the first LeaderAndIsr)",
			r0.Log().LogEndOffset(), r0.Log().HighWatermark(), r0.Unflushed(), r0.HWCheckpoint())
	}

	h.now = 100
	b.Crash(true)
	calls("a crash with a power loss", "crashed (power loss: unflushed records dropped)",
		"truncated 0 from 2 to 0 (2 cut): power loss: the page cache is gone", "log cut 0 at 0", "gone (clean false)")
	if !b.Dead() || r0.Log().LogEndOffset() != 0 || r0.Unflushed() != 0 || len(*b.Fetchers()) != 0 {
		t.Fatalf("after a power loss: dead %v, LEO %d, unflushed %d", b.Dead(), r0.Log().LogEndOffset(), r0.Unflushed())
	}
	b.Startup(true)
	calls("a restart", "shrink task at 5100", "restarted", "register")
	if !b.Running() || r0.Known() || r0.IsLeader() || r0.Log().HighWatermark() != 0 || b.ReplicaManager().ControllerEpoch() != 0 {
		t.Fatalf("after the restart: running %v, known %v, leader %v, HW %d", b.Running(), r0.Known(), r0.IsLeader(),
			r0.Log().HighWatermark())
	}

	// A controlled shutdown whose two attempts fail.
	lead(2, 2, 7)
	n := len(h.sent)
	b.Shutdown()
	calls("the shutdown's start", "shutdown began")
	ask := h.sent[len(h.sent)-1]
	if !b.ShuttingDown() || len(h.sent) != n+1 || ask.Type != protocol.MsgControlledShutdown || ask.To != 0 ||
		ask.ControlledShutdown.BrokerEpoch != 42 {
		t.Fatalf("the first attempt: shutting down %v, sent %q", b.ShuttingDown(), sentSince(h, n))
	}
	b.Handle(&protocol.Message{ID: 3, Type: protocol.MsgControlledShutdownResp, From: 0, To: 1, ReplyTo: ask.ID,
		ControlledShutdownResp: &protocol.ControlledShutdownResponse{Remaining: []protocol.TP{h.TP(0)}}})
	calls("the controller's answer", "attempt 1 failed (error \"\"), 1 led, backoff 100, last 0 (retry)", "shutdown retry at 200")
	h.now = 200
	b.ControlledShutdownRetry()
	if len(h.sent) != n+2 || b.ShutdownAttempts() != 2 {
		t.Fatalf("the second attempt: sent %q, attempts %d", sentSince(h, n), b.ShutdownAttempts())
	}
	if !b.RequestFailed(h.sent[n+1]) {
		t.Fatal("the second attempt's timeout not handled")
	}
	calls("the second attempt's timeout", "attempt 2 failed (error \"REQUEST_TIMED_OUT\"), 0 led, backoff 100, last 1 (retry)", "shutdown retry at 300")
	h.now = 300
	b.ControlledShutdownRetry()
	calls("the backoff after the last", "stopped anyway after 2 (-1 led; retries exhausted)", "shut down (controlled shutdown)", "gone (clean true)")
	if !b.Dead() || r0.Unflushed() != 0 || r0.Log().RecoveryPoint() != 1 || r0.HWCheckpoint() != 1 {
		t.Fatalf("after a controlled shutdown: dead %v, unflushed %d, recovery point %d, checkpoint %d; want 0, 1, 1",
			b.Dead(), r0.Unflushed(), r0.Log().RecoveryPoint(), r0.HWCheckpoint())
	}
	b.Handle(&protocol.Message{ID: 4, Type: protocol.MsgControlledShutdownResp, From: 0, To: 1, ReplyTo: ask.ID,
		ControlledShutdownResp: &protocol.ControlledShutdownResponse{}})
	b.ControlledShutdownRetry()
	calls("a late answer and retry")

	b.Startup(true)
	h.calls = nil
	b.LogDirFailure()
	calls("a failed log directory", "log dir failed (\"\", 2 offline)", "log dir failure notified")
	if !b.DiskFailed() || !r0.Offline() || !b.Replica(1).Offline() || !b.Running() {
		t.Fatalf("a failed log directory: disk failed %v, offline %v, %v, running %v", b.DiskFailed(), r0.Offline(),
			b.Replica(1).Offline(), b.Running())
	}
	b.Startup(true)
	h.calls, h.book.Process.LogDirFailureHandling = nil, false
	if b.DiskFailed() {
		t.Fatal("the restart did not bring the disk back")
	}
	b.LogDirFailure()
	calls("a failed log directory before KIP-112", "log dir failed (\"halt\", 0 offline)", "crashed (process killed)",
		"gone (clean false)")

	b.Startup(true)
	h.calls, n = nil, len(h.sent)
	b.Exit(1, "fatal")
	b.Exit(0, "fatal too")
	calls("two fatal errors", "exiting on 1: fatal (fatal)", "shutdown began", "exiting on 0: fatal too (fatal)")
	if len(h.sent) != n+1 || !b.ShuttingDown() {
		t.Fatalf("two fatal errors sent %q, shutting down %v", sentSince(h, n), b.ShuttingDown())
	}
}
