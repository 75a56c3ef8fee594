package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// fakeHost is a fake broker for the replica manager: the fake follower's replicas and record,
// with the leader's side reduced to a record of the calls.
type fakeHost struct {
	*fakeFollower
	// book is the replica manager's rules (its Fetcher part is the fake follower's: RuleBook).
	book         Rules
	shuttingDown bool
	checkpoints  []int64
	lastProduce  *DelayedProduce
	zk           IsrWrite
	controller   int32
	// fetchTimeouts are the parked fetches' timeouts set, in order.
	fetchTimeouts []fetchTimeout
	// facts are the observers' facts stated (HWMoved, IsrChanged), in order.
	facts []string
}

// RuleBook lends a Broker made over the fake its rules, the fetcher's copied from the fake
// follower's as they are then (no test of a Broker changes those later).
func (h *fakeHost) RuleBook() *Rules {
	h.book.Fetcher = h.fakeFollower.rules
	return &h.book
}

type fetchTimeout struct {
	df  *DelayedFetch
	seq uint64
	at  int64
}

func (h *fakeHost) ReplicaRules() ReplicaRules { return h.book.Replica }
func (h *fakeHost) ShuttingDown() bool         { return h.shuttingDown }
func (h *fakeHost) ReplicaNamed(tp protocol.TP) (int32, *Partition) {
	return tp.Partition, h.replicas[tp.Partition]
}
func (h *fakeHost) Assignment(int32) []int32 { return []int32{0, 1, 2} }
func (h *fakeHost) Hosted() []int32 {
	var pids []int32
	for pid := range h.replicas {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}
func (h *fakeHost) note(format string, args ...any) {
	h.calls = append(h.calls, fmt.Sprintf(format, args...))
}
func (h *fakeHost) HWConfirmed(p *Partition) { h.note("confirmed %d", p.Pid()) }

func (h *fakeHost) LeaderFetchRules() LeaderFetchRules { return h.book.LeaderFetch }
func (h *fakeHost) FlushIntervalMessages() int64       { return 1 << 62 }

// SendFetchResponse and SendSessionAnswer send the answer as the engine does, from the leader
// (broker 1) to the fetch's sender; a session answer's partitions are copied out of the replica
// manager's buffer.
func (h *fakeHost) SendFetchResponse(req *protocol.Message, resp protocol.FetchResponse) {
	h.Send(&protocol.Message{Type: protocol.MsgFetchResponse, From: 1, To: req.From, ReplyTo: req.ID, FetchResponse: &resp})
}
func (h *fakeHost) SendSessionAnswer(req *protocol.Message, resp protocol.FetchResponse) {
	resp.Partitions = slices.Clone(resp.Partitions)
	h.SendFetchResponse(req, resp)
}
func (h *fakeHost) RecordHeader(int64) (int16, int32, bool) { return 0, 0, false }

func (h *fakeHost) SendProduceAnswer(req *protocol.Message, resp protocol.ProduceResponse) {
	h.Send(&protocol.Message{Type: protocol.MsgProduceResponse, From: 1, To: req.From, ReplyTo: req.ID, ProduceResponse: &resp})
}
func (h *fakeHost) ScheduleFetchTimeout(df *DelayedFetch, at int64) {
	h.fetchTimeouts = append(h.fetchTimeouts, fetchTimeout{df, df.Seq(), at})
}
func (h *fakeHost) ScheduleCheckpoint(at int64)           { h.checkpoints = append(h.checkpoints, at) }
func (h *fakeHost) ScheduleRecoveryPointCheckpoint(int64) {}
func (h *fakeHost) IsrRules() IsrRules                    { return h.book.Isr }
func (h *fakeHost) HWRules() HWRules                      { return h.book.HW }
func (h *fakeHost) LogCut(pid int32, to int64)            { h.note("log cut %d at %d", pid, to) }
func (h *fakeHost) NewDelayedProduce(m *protocol.Message, base int64, n int) *DelayedProduce {
	h.lastProduce = NewDelayedProduce(m, base, n)
	return h.lastProduce
}
func (h *fakeHost) ScheduleProduceTimeout(_ *DelayedProduce, at int64) {
	h.note("produce timeout at %d", at)
}

// HWChanged is the Broker's (a fake broker has no fetch sessions to tell): the event and the fact.
func (h *fakeHost) HWChanged(p *Partition, old int64, role string, follower int32) {
	emitHWMoved(h, p.Pid(), p, old, role, follower)
}

// HWMoved and IsrChanged are the observers' facts, noted apart from the calls.
func (h *fakeHost) HWMoved(pid int32, old int64) {
	h.facts = append(h.facts, fmt.Sprintf("hw of %d moved from %d", pid, old))
}
func (h *fakeHost) IsrChanged(pid int32, old, isr []int32) {
	h.facts = append(h.facts, fmt.Sprintf("isr of %d: %v → %v", pid, old, isr))
}
func (h *fakeHost) IsrEligible(int32) bool     { return true }
func (h *fakeHost) ZooKeeperConnected() bool   { return true }
func (h *fakeHost) ActiveController() int32    { return h.controller }
func (h *fakeHost) ScheduleIsrShrink(at int64) { h.note("shrink task at %d", at) }
func (h *fakeHost) ScheduleIsrChangePropagation(at int64) {
	h.note("isr change propagation at %d", at)
}
func (h *fakeHost) PropagateIsrChanges(pids []int32) bool {
	h.note("isr change notification %v at %d", pids, h.now)
	return true
}
func (h *fakeHost) UpdateIsr(pid int32, isr []int32, zkVersion int32) IsrWrite {
	h.note("zookeeper %d to %v at version %d", pid, isr, zkVersion)
	return h.zk
}
func (h *fakeHost) ScheduleAlterPartitionResend(pid int32, at int64) {
	h.note("resend %d at %d", pid, at)
}

// TestReplicaManagerWithFakeBroker drives broker 1's replica manager through a fake broker: a
// LeaderAndIsr making it leader of t-0 and follower of t-1 (each role change with its calls into
// the leader's side, in Kafka's order), its fetcher, the checkpoint task started at once; an older
// leader epoch ignored; stale controller and broker epochs refused; StopReplica stopping the
// fetcher; and before KIP-101 a new follower truncating to its HW first.
func TestReplicaManagerWithFakeBroker(t *testing.T) {
	h := &fakeHost{fakeFollower: newFakeFollower(0, 1), book: Rules{Replica: ReplicaRules{BrokerEpochs: true,
		AssignEpochOnElection: true, FollowerRestartsOnNewEpoch: true, TruncateOnFetch: true, NumReplicaFetchers: 1,
		CheckpointIntervalMs: 5000}}}
	h.replicas[1].Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 0}, {ID: 2, Epoch: 0}})
	h.replicas[1].Log().SetHighWatermark(1)
	var fetchers FetcherManager
	rm := NewReplicaManager(1, &fetchers)
	h.now = 7
	state := func(pid, leader, epoch int32) protocol.LeaderAndIsrState {
		return protocol.LeaderAndIsrState{TP: h.TP(pid), Leader: leader, LeaderEpoch: epoch, ISR: []int32{0, 1, 2}, Replicas: []int32{0, 1, 2}}
	}
	resp := rm.BecomeLeaderOrFollower(h, &protocol.LeaderAndIsrRequest{ControllerEpoch: 3, BrokerEpoch: 42,
		Partitions: []protocol.LeaderAndIsrState{state(0, 1, 1), state(1, 0, 1)}, LiveLeaders: []int32{0, 1}})
	want := []string{"confirmed 0", "leader 0 in 1 from 0, ISR [0 1 2]", "follower 1 of 0 at 1", "started fetcher 0 for 0 (started)"}
	if resp.Error != protocol.ErrNone || len(resp.Partitions) != 2 || !slices.Equal(h.calls, want) {
		t.Fatalf("LeaderAndIsr: %+v, calls %q; want %q", resp, h.calls, want)
	}
	leader := h.replicas[0]
	if !leader.IsLeader() || leader.LeaderEpoch() != 1 || leader.EpochStartOffset() != 0 || len(leader.Remotes()) != 2 ||
		leader.Log().Cache().Latest() != 1 || !slices.Equal(leader.State().ISR(), []int32{0, 1, 2}) {
		t.Errorf("t-0 after becoming leader: leader %v, epoch %d, start %d, %d followers, cache latest %d",
			leader.IsLeader(), leader.LeaderEpoch(), leader.EpochStartOffset(), len(leader.Remotes()), leader.Log().Cache().Latest())
	}
	f := fetchers.For(0, 0)
	if f == nil || f.State(1) == nil || f.State(1).FetchOffset() != 2 || f.State(1).Truncating() {
		t.Fatalf("t-1's fetch state: %+v; want Fetching at its LEO, 2 (truncate on fetch)", f)
	}
	if !slices.Equal(h.checkpoints, []int64{5007}) || h.replicas[1].HWCheckpoint() != 1 || rm.ControllerEpoch() != 3 {
		t.Errorf("checkpoints %v, t-1's checkpoint %d, controller epoch %d; want the task at 5007 after writing one at once, 1, 3",
			h.checkpoints, h.replicas[1].HWCheckpoint(), rm.ControllerEpoch())
	}

	h.calls = nil
	resp = rm.BecomeLeaderOrFollower(h, &protocol.LeaderAndIsrRequest{ControllerEpoch: 3, BrokerEpoch: 42,
		Partitions: []protocol.LeaderAndIsrState{state(0, 1, 1)}, LiveLeaders: []int32{0, 1}})
	if resp.Partitions[0].Error != protocol.ErrStaleControllerEpoch || len(h.calls) != 0 {
		t.Errorf("the same leader epoch again: %+v, calls %q; want it ignored", resp.Partitions, h.calls)
	}
	for _, c := range []struct {
		req  protocol.LeaderAndIsrRequest
		want string
	}{
		{protocol.LeaderAndIsrRequest{ControllerEpoch: 2, BrokerEpoch: 42}, "rejected STALE_CONTROLLER_EPOCH: 2 < 3"},
		{protocol.LeaderAndIsrRequest{ControllerEpoch: 3, BrokerEpoch: 41}, "rejected STALE_BROKER_EPOCH: 41 < 42"},
	} {
		h.calls = nil
		if resp := rm.BecomeLeaderOrFollower(h, &c.req); resp.Error == protocol.ErrNone || !slices.Equal(h.calls, []string{c.want}) {
			t.Errorf("%+v: %+v, calls %q; want %q", c.req, resp, h.calls, c.want)
		}
	}

	// KafkaApis.handleStopReplicaRequest (3.7.0): an older registration is answered
	// STALE_BROKER_EPOCH before stopReplicas looks at the controller epoch, which answers an older
	// controller STALE_CONTROLLER_EPOCH; neither stops anything nor names a partition.
	for _, c := range []struct {
		req  protocol.StopReplicaRequest
		want protocol.KafkaError
	}{
		{protocol.StopReplicaRequest{ControllerEpoch: 2, BrokerEpoch: 42, Partitions: []protocol.TP{h.TP(1)}}, protocol.ErrStaleControllerEpoch},
		{protocol.StopReplicaRequest{ControllerEpoch: 2, BrokerEpoch: 41, Partitions: []protocol.TP{h.TP(1)}}, protocol.ErrStaleBrokerEpoch},
	} {
		h.calls = nil
		if resp := rm.HandleStopReplica(h, &c.req); resp.Error != c.want || resp.Partitions != nil || len(h.calls) != 0 {
			t.Errorf("StopReplica %+v: %+v, calls %q; want %s and nothing stopped", c.req, resp, h.calls, c.want)
		}
	}
	h.calls = nil
	rm.HandleStopReplica(h, &protocol.StopReplicaRequest{ControllerEpoch: 3, BrokerEpoch: 42, Partitions: []protocol.TP{h.TP(1)}})
	if len(fetchers) != 0 || !slices.Equal(h.calls, []string{"stopped fetcher 0 for 0 (stopped)"}) {
		t.Errorf("StopReplica: %d threads, calls %q; want the thread stopped", len(fetchers), h.calls)
	}

	// Before KIP-101 the new follower truncates to its HW before its parked requests complete,
	// and that HW is final (confirmed) from then on: no later round truncates below it.
	h.book.Replica.TruncateToHW, h.book.Replica.TruncateOnFetch = true, false
	h.calls = nil
	rm.BecomeLeaderOrFollower(h, &protocol.LeaderAndIsrRequest{ControllerEpoch: 3, BrokerEpoch: 42,
		Partitions: []protocol.LeaderAndIsrState{state(1, 0, 2)}, LiveLeaders: []int32{0, 1}})
	want = []string{"follower 1 of 0 at 2",
		"truncate 1 to 1: becoming follower: truncate to the own high watermark (pre-KIP-101)", "confirmed 1",
		"started fetcher 0 for 0 (started)"}
	if !slices.Equal(h.calls, want) {
		t.Errorf("before KIP-101: calls %q, want %q", h.calls, want)
	}
}
