package broker

import (
	"fmt"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// fakeFollower is a broker's side of its fetcher threads with nothing of an engine behind it:
// its replicas, a clock the test moves, and a record of what the thread asked of it.
type fakeFollower struct {
	now      int64
	dead     bool
	rules    FetcherRules
	replicas map[int32]*Partition
	sent     []*protocol.Message
	wakes    []int64
	calls    []string // the replica manager's changes asked for and the events, in order
	events   []Event  // the events emitted, in order
	nextID   uint64
}

func newFakeFollower(pids ...int32) *fakeFollower {
	h := &fakeFollower{replicas: map[int32]*Partition{},
		rules: FetcherRules{EpochRequests: true, Fencing: true, TruncateOnFetch: true, Sessions: true,
			BackoffMs: 1000, MaxWaitMs: 500, MinBytes: 1}}
	for _, pid := range pids {
		p := NewPartition(1, pid)
		h.replicas[pid] = &p
	}
	return h
}

func (h *fakeFollower) Now() int64                   { return h.now }
func (h *fakeFollower) Clock() *int64                { return &h.now }
func (h *fakeFollower) Rules() FetcherRules          { return h.rules }
func (h *fakeFollower) Dead() bool                   { return h.dead }
func (h *fakeFollower) BrokerEpoch() int64           { return 42 }
func (h *fakeFollower) PidOf(tp protocol.TP) int32   { return tp.Partition }
func (h *fakeFollower) TP(pid int32) protocol.TP     { return protocol.TP{Topic: "t", Partition: pid} }
func (h *fakeFollower) Replica(pid int32) *Partition { return h.replicas[pid] }
func (h *fakeFollower) Send(m *protocol.Message) {
	h.nextID++
	m.ID = h.nextID
	h.sent = append(h.sent, m)
}
func (h *fakeFollower) NewFetch() *FetchMessage                 { return &FetchMessage{} }
func (h *fakeFollower) KeepFetch(*FetchMessage)                 {}
func (h *fakeFollower) ScheduleWake(_ *FetcherThread, at int64) { h.wakes = append(h.wakes, at) }
func (h *fakeFollower) Truncate(pid int32, p *Partition, offset int64, why string) {
	p.Log().TruncateTo(offset)
	h.calls = append(h.calls, fmt.Sprintf("truncate %d to %d: %s", pid, offset, why))
}
func (h *fakeFollower) TruncateFullyAndStartAt(p *Partition, offset int64, why string) {
	p.Log().TruncateFullyAndStartAt(offset)
	h.calls = append(h.calls, fmt.Sprintf("start %d at %d: %s", p.Pid(), offset, why))
}
func (h *fakeFollower) Appended(p *Partition, n int) {
	h.calls = append(h.calls, fmt.Sprintf("appended %d to %d", n, p.Pid()))
}
func (h *fakeFollower) LogStartMoved(pid int32) {
	h.calls = append(h.calls, fmt.Sprintf("log start of %d moved", pid))
}
func (h *fakeFollower) SetHighWatermark(p *Partition, hw int64) {
	h.calls = append(h.calls, fmt.Sprintf("HW of %d: %d", p.Pid(), hw))
}
func (h *fakeFollower) HWMoved(pid int32, old int64) {
	h.calls = append(h.calls, fmt.Sprintf("records of %d below its HW from %d", pid, old))
}
func (h *fakeFollower) BrokerID() int32 { return 1 }
func (h *fakeFollower) Exit(pid int32, why string) {
	h.calls = append(h.calls, fmt.Sprintf("exit on %d: %s", pid, why))
}

// Emit records the event, and notes it among the calls as what it says, read from its kind and
// fields (eventCall), in order with the rest.
func (h *fakeFollower) Emit(ev Event) {
	h.events = append(h.events, ev)
	h.calls = append(h.calls, eventCall(&ev))
}

// last is the last message sent, and the changes asked for since the last call.
func (h *fakeFollower) last(t *testing.T, wantSent int) (*protocol.Message, []string) {
	t.Helper()
	if len(h.sent) != wantSent {
		t.Fatalf("%d messages sent, want %d", len(h.sent), wantSent)
	}
	calls := h.calls
	h.calls = nil
	return h.sent[len(h.sent)-1], calls
}

// TestFetcherThreadWithFakeBroker drives a thread's loop and answers through a fake broker, as
// etcd raft's tests drive a node through Ready: a full Fetch that opens a session; records that
// are appended and a HW taken; an incremental Fetch; a diverging epoch that truncates; a fenced
// answer that fails the partition, which the next Fetch forgets; a thread that sent at this
// millisecond waiting for the next; and a dead broker's thread doing nothing.
func TestFetcherThreadWithFakeBroker(t *testing.T) {
	h := newFakeFollower(0)
	th0 := NewFetcherThread(1, 0, 0)
	th := &th0
	th.Add(NewPartitionFetchState(0, 3, 0, -1, false), h.replicas[0])

	h.now = 10
	th.DoWork(h)
	m, _ := h.last(t, 1)
	f := m.Fetch
	if m.Type != protocol.MsgFetch || m.From != 1 || m.To != 0 || th.InFlight() != m.ID ||
		f.SessionID != 0 || f.SessionEpoch != protocol.InitialEpoch || f.BrokerEpoch != 42 || f.MaxWaitMs != 500 ||
		len(f.Partitions) != 1 || f.Partitions[0].FetchOffset != 0 || f.Partitions[0].CurrentLeaderEpoch != 3 {
		t.Fatalf("the first Fetch: %+v %+v", m, f)
	}
	th.DoWork(h)
	if len(h.sent) != 1 {
		t.Fatal("a thread with a request in flight sent another")
	}

	h.now = 11
	recs := []commitlog.Record{{ID: 1, Epoch: 3}, {ID: 2, Epoch: 3}}
	th.HandleFetchResponse(h, &protocol.Message{Type: protocol.MsgFetchResponse, ReplyTo: m.ID,
		FetchResponse: &protocol.FetchResponse{SessionID: 7, Partitions: []protocol.FetchPartitionData{
			{TP: h.TP(0), HighWatermark: 1, Records: recs}}}})
	m, calls := h.last(t, 2)
	if want := []string{"appended 2 to 0", "HW of 0: 1"}; !slices.Equal(calls, want) {
		t.Errorf("records answered: %q, want %q", calls, want)
	}
	if got := h.replicas[0].Log().LogEndOffset(); got != 2 {
		t.Errorf("log end %d after two records, want 2", got)
	}
	if f := m.Fetch; f.SessionID != 7 || f.SessionEpoch != 1 || len(f.Partitions) != 1 || f.Partitions[0].FetchOffset != 2 ||
		f.Partitions[0].LastFetchedEpoch != 3 {
		t.Fatalf("the incremental Fetch: %+v", f)
	}

	h.now = 12
	th.HandleFetchResponse(h, &protocol.Message{Type: protocol.MsgFetchResponse, ReplyTo: m.ID,
		FetchResponse: &protocol.FetchResponse{SessionID: 7, Partitions: []protocol.FetchPartitionData{
			{TP: h.TP(0), HighWatermark: 1, DivergingEpoch: &protocol.EpochEndOffset{Epoch: 3, EndOffset: 1}}}}})
	m, calls = h.last(t, 3)
	if want := []string{"truncate 0 to 1: diverging epoch 3 ends at offset 1"}; !slices.Equal(calls, want) {
		t.Errorf("a divergence answered: %q, want %q (its HW is not applied)", calls, want)
	}
	if f := m.Fetch; f.SessionEpoch != 2 || len(f.Partitions) != 1 || f.Partitions[0].FetchOffset != 1 {
		t.Fatalf("the Fetch after truncating: %+v", f)
	}

	h.now = 13
	th.HandleFetchResponse(h, &protocol.Message{Type: protocol.MsgFetchResponse, ReplyTo: m.ID,
		FetchResponse: &protocol.FetchResponse{SessionID: 7, Partitions: []protocol.FetchPartitionData{
			{TP: h.TP(0), Error: protocol.ErrFencedLeaderEpoch}}}})
	m, calls = h.last(t, 4)
	if want := []string{"failed 0: fenced: the leader is at a newer leader epoch"}; !slices.Equal(calls, want) || th.Len() != 0 {
		t.Errorf("fenced at the epoch it sent: %q and %d partitions, want %q and none", calls, th.Len(), want)
	}
	if f := m.Fetch; len(f.Partitions) != 0 || len(f.ForgottenTopicsData) != 1 || f.ForgottenTopicsData[0] != h.TP(0) {
		t.Errorf("the Fetch after the failure lists %v and forgets %v, want none and t-0", f.Partitions, f.ForgottenTopicsData)
	}

	// The answer comes in the millisecond the thread sent: it waits for the next one.
	th.Add(NewPartitionFetchState(0, 4, 1, 3, false), h.replicas[0])
	th.HandleFetchResponse(h, &protocol.Message{Type: protocol.MsgFetchResponse, ReplyTo: m.ID,
		FetchResponse: &protocol.FetchResponse{SessionID: 7}})
	if len(h.sent) != 4 || !slices.Equal(h.wakes, []int64{14}) {
		t.Errorf("answered in the millisecond it sent: %d sent, wake-ups %v; want none sent and a wake-up at 14", len(h.sent), h.wakes)
	}
	h.now, h.dead = 14, true
	if th.Woken(14) {
		th.DoWork(h)
	}
	if len(h.sent) != 4 {
		t.Error("a dead broker's thread sent a request")
	}
}

// TestFetcherThreadTruncationPhase: before truncate-on-fetch a Truncating partition is asked
// about with OffsetsForLeaderEpoch, and the answer truncates it and lets it fetch; before KIP-101
// (no epoch requests) it truncates to its fetch offset, the high watermark, without asking.
func TestFetcherThreadTruncationPhase(t *testing.T) {
	h := newFakeFollower(0)
	h.rules.TruncateOnFetch = false
	h.replicas[0].Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 1}, {ID: 2, Epoch: 2}, {ID: 3, Epoch: 2}})
	th0 := NewFetcherThread(1, 0, 0)
	th := &th0
	th.Add(NewPartitionFetchState(0, 5, 1, -1, true), h.replicas[0])
	h.now = 1
	th.DoWork(h)
	m, _ := h.last(t, 1)
	if m.Type != protocol.MsgOffsetsForEpoch || len(m.OffsetsForEpoch.Partitions) != 1 ||
		m.OffsetsForEpoch.Partitions[0].LeaderEpoch != 2 || m.OffsetsForEpoch.Partitions[0].CurrentLeaderEpoch != 5 {
		t.Fatalf("the truncation phase sent %+v", m)
	}
	h.now = 2
	th.HandleOffsetsForEpochResponse(h, &protocol.Message{ReplyTo: m.ID, OffsetsForEpochResp: &protocol.OffsetsForEpochResponse{
		Partitions: []protocol.OffsetsForEpochResult{{TP: h.TP(0), LeaderEpoch: 1, EndOffset: 1}}}})
	m, calls := h.last(t, 2)
	if want := []string{"truncate 0 to 1: OffsetsForLeaderEpoch(2) answered (epoch 1, offset 1)"}; !slices.Equal(calls, want) {
		t.Errorf("the answer: %q, want %q", calls, want)
	}
	if m.Type != protocol.MsgFetch || th.TruncatingCount() != 0 || m.Fetch.Partitions[0].FetchOffset != 1 {
		t.Errorf("after truncating: sent %s, %d Truncating, %+v", m.Type, th.TruncatingCount(), m.Fetch)
	}

	h = newFakeFollower(0)
	h.rules = FetcherRules{BackoffMs: 1000}
	h.replicas[0].Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 0}, {ID: 2, Epoch: 0}})
	th1 := NewFetcherThread(1, 0, 0)
	th = &th1
	th.Add(NewPartitionFetchState(0, 5, 1, -1, true), h.replicas[0])
	h.now = 1
	th.DoWork(h)
	m, calls = h.last(t, 1)
	if want := []string{"truncate 0 to 1: truncate to the high watermark (no leader epoch to ask about)"}; !slices.Equal(calls, want) {
		t.Errorf("before KIP-101: %q, want %q", calls, want)
	}
	if m.Type != protocol.MsgFetch || m.Fetch.SessionEpoch != protocol.FinalEpoch || m.Fetch.Partitions[0].CurrentLeaderEpoch != -1 {
		t.Errorf("before KIP-101 the next request is a sessionless Fetch without the leader epoch: %+v", m.Fetch)
	}
}

// TestFetcherThreadOutOfRange: OFFSET_OUT_OF_RANGE asks the leader for its offsets. A leader whose
// log ends below the follower's makes it truncate, unless, before 2.1 (KAFKA-7414), unclean
// leader election is off: then the broker exits and the thread stops, even when woken.
func TestFetcherThreadOutOfRange(t *testing.T) {
	for _, c := range []struct {
		name         string
		fatal, clean bool
		want         string
	}{
		{"2.1 and later", false, false, "truncate 0 to 1: offset out of range: the leader's log ends at 1"},
		{"before 2.1, unclean election on", true, true, "truncate 0 to 1: offset out of range: the leader's log ends at 1"},
		{"before 2.1, unclean election off", true, false,
			"exit on 0: log truncation is not allowed (unclean.leader.election.enable is false): leader broker 0's log ends at 1, below this replica's 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeFollower(0)
			h.rules.OutOfRangeFatal, h.rules.UncleanElection = c.fatal, c.clean
			h.replicas[0].Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 0}, {ID: 2, Epoch: 0}, {ID: 3, Epoch: 0}})
			th0 := NewFetcherThread(1, 0, 0)
			th := &th0
			th.Add(NewPartitionFetchState(0, 1, 3, 0, false), h.replicas[0])
			h.now = 1
			th.DoWork(h)
			m, _ := h.last(t, 1)
			h.now = 2
			th.HandleFetchResponse(h, &protocol.Message{ReplyTo: m.ID, FetchResponse: &protocol.FetchResponse{SessionID: 3,
				Partitions: []protocol.FetchPartitionData{{TP: h.TP(0), Error: protocol.ErrOffsetOutOfRange}}}})
			m, _ = h.last(t, 2)
			if m.Type != protocol.MsgListOffsets || m.ListOffsets.TP != h.TP(0) {
				t.Fatalf("out of range: sent %+v, want ListOffsets for t-0", m)
			}
			h.now = 3
			th.HandleListOffsetsResponse(h, &protocol.Message{ReplyTo: m.ID, ListOffsetsResponse: &protocol.ListOffsetsResponse{
				TP: h.TP(0), LogEndOffset: 1}})
			calls := h.calls
			if len(calls) != 1 || calls[0] != c.want {
				t.Fatalf("the leader's log ends at 1, the follower's at 3: %q, want %q", calls, c.want)
			}
			h.now = 10
			th.WakeUp(h, 10)
			if th.Woken(10) {
				th.DoWork(h)
			}
			exited := c.fatal && !c.clean
			if fetched := len(h.sent) > 2 && h.sent[2].Type == protocol.MsgFetch; fetched == exited {
				t.Errorf("after the answer: %d requests in all (the thread exited: %v)", len(h.sent), exited)
			}
		})
	}
}
