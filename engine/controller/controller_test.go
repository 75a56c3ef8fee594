package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// fake is the cluster as the controller reaches it: three brokers hosting one partition, every
// send, timer, event and fact written down.
type fake struct {
	now      int64
	settings Settings
	dead     map[int32]bool
	nextID   uint64
	sent     []*protocol.Message
	timers   []string
	events   []Event
	facts    []string
}

func (f *fake) Now() int64         { return f.now }
func (f *fake) Settings() Settings { return f.settings }
func (f *fake) Send(m *protocol.Message) {
	f.nextID++
	m.ID = f.nextID
	f.sent = append(f.sent, m)
}
func (f *fake) SessionExpiryAt(at int64, b int32, gen uint64) {
	f.timers = append(f.timers, fmt.Sprintf("expire %d gen %d at %d", b, gen, at))
}
func (f *fake) AutoRebalanceAt(at int64, epoch int32) {
	f.timers = append(f.timers, fmt.Sprintf("rebalance epoch %d at %d", epoch, at))
}
func (f *fake) ReassignmentWatchAt(at int64, pid int32) {
	f.timers = append(f.timers, fmt.Sprintf("reassignment watch %d at %d", pid, at))
}
func (f *fake) IsrChangeWatchAt(at int64) {
	f.timers = append(f.timers, fmt.Sprintf("isr change watch at %d", at))
}
func (f *fake) RetryAt(at int64, b int32, epoch int32) {
	f.timers = append(f.timers, fmt.Sprintf("retry %d epoch %d at %d", b, epoch, at))
}
func (f *fake) Emit(ev Event) { f.events = append(f.events, ev) }
func (f *fake) PartitionWritten(pid, oldEpoch int32) {
	f.facts = append(f.facts, fmt.Sprintf("written %d (was epoch %d)", pid, oldEpoch))
}
func (f *fake) ISRChanged(pid int32, old, isr []int32) {
	f.facts = append(f.facts, fmt.Sprintf("isr %d %v → %v", pid, old, isr))
}
func (f *fake) Elected(pid int32)              { f.facts = append(f.facts, fmt.Sprintf("elected %d", pid)) }
func (f *fake) Hosted(int32) []int32           { return []int32{0} }
func (f *fake) Process(b int32) (uint64, bool) { return 1, !f.dead[b] }

// started is a cluster of three registered brokers and one partition t-0 with replicas 1, 0, 2:
// broker 1 leads, broker 0 is the controller.
func started(t *testing.T) (*Controller, *fake) {
	t.Helper()
	f := &fake{settings: Settings{ZookeeperSessionTimeoutMs: 18000}, dead: map[int32]bool{}}
	k := New(f, Era{KeepLastIsrMember: true, FailoverOfflinesDeadReplicas: true, BrokerEpochs: true}, 3,
		[]Topic{{Name: "t", Assignment: [][]int32{{1, 0, 2}}}})
	for b := range int32(3) {
		k.RegisterBroker(b)
		k.NotifyRegistered(b)
	}
	applied := 0
	k.Start(func(int32, *protocol.LeaderAndIsrRequest) { applied++ })
	if applied != 3 || k.Leader(0) != 1 || !slices.Equal(k.ISR(0), []int32{0, 1, 2}) || len(f.sent) != 0 {
		t.Fatalf("start: %d brokers told, leader %d ISR %v, %d sent; want 3, 1, [0 1 2], 0", applied, k.Leader(0), k.ISR(0), len(f.sent))
	}
	return k, f
}

// TestBrokerFailureMovesLeadership: the leader's session expires; the controller
// (onBrokerFailure → onReplicasBecomeOffline) elects the first live ISR member in assignment
// order with a new leader epoch, drops the dead broker from the ISR and tells the live brokers.
func TestBrokerFailureMovesLeadership(t *testing.T) {
	k, f := started(t)
	f.dead[1] = true
	k.Disconnect(1)
	if want := []string{"expire 1 gen 2 at 18000"}; !slices.Equal(f.timers, want) {
		t.Fatalf("timers %v, want %v", f.timers, want)
	}
	f.now = 18000
	if len(k.SessionExpired(1, 1)) != 0 {
		t.Fatal("an expiry of an older session generation expired the session")
	}
	if len(k.SessionExpired(1, 2)) != 1 {
		t.Fatal("the session did not expire")
	}
	if k.Leader(0) != 0 || k.LeaderEpoch(0) != 1 || !slices.Equal(k.ISR(0), []int32{0, 2}) || k.PartitionEpoch(0) != 1 {
		t.Fatalf("leader %d epoch %d ISR %v version %d; want 0, 1, [0 2], 1", k.Leader(0), k.LeaderEpoch(0), k.ISR(0), k.PartitionEpoch(0))
	}
	if want := []string{"written 0 (was epoch 0)", "isr 0 [0 1 2] → [0 2]", "elected 0"}; !slices.Equal(f.facts, want) {
		t.Fatalf("facts %v, want %v", f.facts, want)
	}
	var types []string
	for _, ev := range f.events {
		types = append(types, ev.Type)
	}
	if want := []string{EvZKRegister, EvZKRegister, EvZKRegister, EvZKSession, EvLeaderChange, EvISRChange}; !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	var to []int32
	for _, m := range f.sent {
		if m.LeaderAndIsr == nil || m.From != 0 || m.LeaderAndIsr.Partitions[0].Leader != 0 {
			t.Fatalf("sent %+v; want LeaderAndIsr from controller 0 naming leader 0", m)
		}
		to = append(to, m.To)
	}
	if !slices.Equal(to, []int32{0, 2}) {
		t.Fatalf("LeaderAndIsr to %v, want [0 2] (the live brokers)", to)
	}
}

// TestAlterPartitionFenced: AlterPartition reaching a broker that is not the controller is
// answered NOT_CONTROLLER; one with an old leader epoch FENCED_LEADER_EPOCH; neither changes the
// ISR, and a rejection is an event. A current one is written with the next partition epoch.
func TestAlterPartitionFenced(t *testing.T) {
	k, f := started(t)
	alter := func(at, leaderEpoch int32, isr []int32) *protocol.AlterPartitionResponse {
		t.Helper()
		n := len(f.sent)
		k.ProcessAlterPartition(at, &protocol.Message{ID: 99, Type: protocol.MsgAlterPartition, From: 1, To: at,
			AlterPartition: &protocol.AlterPartitionRequest{BrokerID: 1, BrokerEpoch: k.Session(1).Epoch,
				TP: protocol.TP{Topic: "t"}, LeaderEpoch: leaderEpoch, PartitionEpoch: k.PartitionEpoch(0), NewISR: isr}})
		// Past the controller and broker-epoch checks the controller also queues an UpdateMetadata
		// for the partition to every live broker (3.7.0 tryProcessAlterPartition); the answer is
		// the last message sent.
		last := len(f.sent) - 1
		if last < n || f.sent[last].ReplyTo != 99 || f.sent[last].To != 1 {
			t.Fatalf("no answer to the AlterPartition: %v", f.sent[n:])
		}
		for _, m := range f.sent[n:last] {
			if m.Type != protocol.MsgUpdateMetadata || m.UpdateMetadata.Partitions != 1 || at != 0 {
				t.Fatalf("sent %s to %d before the answer at broker %d; want only UpdateMetadata from the controller", m.Type, m.To, at)
			}
		}
		return f.sent[last].AlterPartitionResponse
	}
	if r := alter(2, 0, []int32{0, 1}); r.Error != protocol.ErrNotController {
		t.Fatalf("at broker 2: %s, want NOT_CONTROLLER", r.Error)
	}
	if r := alter(0, -1, []int32{0, 1}); r.Error != protocol.ErrFencedLeaderEpoch {
		t.Fatalf("old leader epoch: %s, want FENCED_LEADER_EPOCH", r.Error)
	}
	if !slices.Equal(k.ISR(0), []int32{0, 1, 2}) || len(f.facts) != 0 {
		t.Fatalf("ISR %v, facts %v after the rejections; want [0 1 2], none", k.ISR(0), f.facts)
	}
	if n := len(f.events); n < 2 || f.events[n-1].Type != EvAlterPartitionRejected || f.events[n-1].Name != "FENCED_LEADER_EPOCH" {
		t.Fatalf("events %+v; want the rejections", f.events)
	}
	r := alter(0, 0, []int32{0, 1})
	if r.Error != protocol.ErrNone || !slices.Equal(r.ISR, []int32{0, 1}) || r.PartitionEpoch != 1 || r.LeaderEpoch != 0 {
		t.Fatalf("answer %+v; want ISR [0 1], partition epoch 1, leader epoch 0", r)
	}
}

// TestLeaderIsrWriteNeedsCachedVersion: before AlterIsr the leader's ISR write succeeds only with
// the znode's version, and only while its session is connected.
func TestLeaderIsrWriteNeedsCachedVersion(t *testing.T) {
	k, _ := started(t)
	if w := k.UpdateIsr(1, 0, []int32{1, 0}, 1); !w.Connected || w.Written || w.Version != 0 {
		t.Fatalf("stale version: %+v; want connected, not written, version 0", w)
	}
	w := k.UpdateIsr(1, 0, []int32{1, 0}, 0)
	if !w.Written || w.Version != 1 || !slices.Equal(w.Old, []int32{0, 1, 2}) || !slices.Equal(w.ISR, []int32{0, 1}) {
		t.Fatalf("write: %+v; want written, version 1, [0 1 2] → [0 1]", w)
	}
	k.Disconnect(1)
	if w := k.UpdateIsr(1, 0, []int32{0, 1, 2}, 1); w.Connected || w.Written {
		t.Fatalf("disconnected: %+v; want not connected, not written", w)
	}
}

// TestControlledShutdownRefusals: a ControlledShutdown from an older registration of a live
// broker is refused STALE_BROKER_EPOCH (KIP-380, 2.2); from a broker that is not live, BROKER_NOT_AVAILABLE
// before 2.2 ("Broker id %d does not exist"), and from 2.2 UNKNOWN_SERVER_ERROR, since the epoch
// check's lookup among the live brokers fails first (doControlledShutdown, 2.2.0 and 3.7.0).
func TestControlledShutdownRefusals(t *testing.T) {
	ask := func(t *testing.T, k *Controller, f *fake, b int32, epoch int64) protocol.KafkaError {
		t.Helper()
		n := len(f.sent)
		k.ProcessControlledShutdown(0, &protocol.Message{ID: 77, Type: protocol.MsgControlledShutdown, From: b, To: 0,
			ControlledShutdown: &protocol.ControlledShutdownRequest{BrokerID: b, BrokerEpoch: epoch}})
		last := f.sent[len(f.sent)-1]
		if len(f.sent) == n || last.ReplyTo != 77 || last.ControlledShutdownResp == nil {
			t.Fatalf("no answer to broker %d's ControlledShutdown: %v", b, f.sent[n:])
		}
		return last.ControlledShutdownResp.Error
	}
	k, f := started(t)
	if err := ask(t, k, f, 1, k.Session(1).Epoch-1); err != protocol.ErrStaleBrokerEpoch {
		t.Errorf("an older registration of broker 1: %s, want STALE_BROKER_EPOCH", err)
	}
	k.CloseSession(2)
	if err := ask(t, k, f, 2, 5); err != protocol.ErrUnknownServerError {
		t.Errorf("broker 2, not live, from 2.2: %s, want UNKNOWN_SERVER_ERROR", err)
	}

	f = &fake{settings: Settings{ZookeeperSessionTimeoutMs: 6000}, dead: map[int32]bool{}}
	k = New(f, Era{}, 3, []Topic{{Name: "t", Assignment: [][]int32{{1, 0, 2}}}})
	for b := range int32(3) {
		k.RegisterBroker(b)
		k.NotifyRegistered(b)
	}
	k.Start(func(int32, *protocol.LeaderAndIsrRequest) {})
	k.CloseSession(2)
	if err := ask(t, k, f, 2, -1); err != protocol.ErrBrokerNotAvailable {
		t.Errorf("broker 2, not live, before 2.2: %s, want BROKER_NOT_AVAILABLE", err)
	}
}
