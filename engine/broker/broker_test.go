package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestFetcherID: the fetcher-id hash spreads partitions as Kafka's getFetcherId does
// (abs(31·"topic".hashCode + partition) mod n, with Java's String.hashCode over UTF-16).
func TestFetcherID(t *testing.T) {
	// "a".hashCode is 97; 31·97 + 3 = 3010.
	if got := FetcherID("a", 3, 4); got != 3010%4 {
		t.Errorf("FetcherID(a, 3, 4) = %d, want %d", got, 3010%4)
	}
	// "topic".hashCode is 110546223 in Java.
	if h := protocol.JavaStringHash("topic"); h != 110546223 {
		t.Errorf("hash(topic) = %d, want 110546223", h)
	}
	// A character outside the BMP hashes as its two UTF-16 code units.
	if h, want := protocol.JavaStringHash("\U0001F600"), int32(31*0xD83D+0xDE00); h != want {
		t.Errorf("hash(U+1F600) = %d, want %d", h, want)
	}
	for p := int32(0); p < 50; p++ {
		if id := FetcherID("orders", p, 3); id < 0 || id >= 3 {
			t.Fatalf("FetcherID(orders, %d, 3) = %d, out of range", p, id)
		}
	}
}

// sentFetch is a fake of what a fetcher thread's Fetch carried: its partitions by index.
type sentFetch map[int32]bool

func (s sentFetch) Count() int                  { return len(s) }
func (s sentFetch) Carried(tp protocol.TP) bool { return s[tp.Partition] }

// TestFetchSessionHandlerOnItsOwn drives a handler through a session's life with no engine: a
// full Fetch's answer starts the session at epoch 1, incremental answers move the epoch on, an
// answer naming a partition the Fetch did not carry makes the next Fetch full in the same
// session, a failed Fetch too, and FETCH_SESSION_ID_NOT_FOUND starts over with no session.
func TestFetchSessionHandlerOnItsOwn(t *testing.T) {
	var h FetchSessionHandler
	want := func(step string, ok, wantOK bool, id, epoch int32) {
		t.Helper()
		if ok != wantOK || h.SessionID() != id || h.Epoch() != epoch {
			t.Errorf("%s: %v, next (%d, %d); want %v, (%d, %d)", step, ok, h.SessionID(), h.Epoch(), wantOK, id, epoch)
		}
	}
	if !h.Full() {
		t.Fatal("a new thread's first Fetch is not full")
	}
	sent := sentFetch{0: true, 1: true}
	two := []protocol.FetchPartitionData{{TP: protocol.TP{Partition: 0}}, {TP: protocol.TP{Partition: 1}}}
	ok := h.HandleResponse(&protocol.FetchResponse{SessionID: 5, Partitions: two}, sent)
	want("full answer", ok, true, 5, 1)
	ok = h.HandleResponse(&protocol.FetchResponse{SessionID: 5, Partitions: two[1:]}, sent)
	want("incremental answer", ok, true, 5, 2)
	ok = h.HandleResponse(&protocol.FetchResponse{SessionID: 5,
		Partitions: []protocol.FetchPartitionData{{TP: protocol.TP{Partition: 7}}}}, sent)
	want("a partition not sent", ok, false, 5, protocol.InitialEpoch)
	ok = h.HandleResponse(&protocol.FetchResponse{SessionID: 5, Partitions: two}, sent)
	want("full again", ok, true, 5, 1)
	h.HandleError()
	want("failed Fetch", false, false, 5, protocol.InitialEpoch)
	ok = h.HandleResponse(&protocol.FetchResponse{Error: protocol.ErrFetchSessionIDNotFound}, sent)
	want("session not found", ok, false, protocol.InvalidSessionID, protocol.InitialEpoch)
}

// TestFetchSessionHandlerGone: a partition leaving the thread while in the session is forgotten
// by the next build unless it comes back first, with its entry and what the Fetch in flight
// carried for it; one not in the session leaves nothing behind.
func TestFetchSessionHandlerGone(t *testing.T) {
	var h FetchSessionHandler
	var names TopicNames
	names.Add("t", 2)
	a := protocol.TP{Topic: "t", Partition: 0}
	in := InSession(7, 0, 3, 2)
	h.Leave(0, in, 3)
	h.Leave(1, SessionPartition{fetchOffset: 9}, 3) // not in the session
	if epoch, offset, ok := h.GoneSent(0); !ok || epoch != 3 || offset != 7 {
		t.Errorf("what the Fetch carried for a partition gone: %d, %d, %v", epoch, offset, ok)
	}
	if _, _, ok := h.GoneSent(1); ok {
		t.Error("a partition out of the session is remembered as gone")
	}
	sess, _, ok := h.Rejoin(0)
	if !ok || sess != in || h.HasGone() {
		t.Fatalf("rejoin: %+v, %v; gone left %v", sess, ok, h.HasGone())
	}
	h.Leave(0, in, 3)
	if got := h.AppendGone(nil, &names); len(got) != 1 || got[0] != a {
		t.Errorf("forgotten: %v, want [%v]", got, a)
	}
	h.Built()
	if h.HasGone() {
		t.Error("the gone list outlived the build")
	}
	in.Leave()
	if in.In() || in == InSession(7, 0, 3, 2) {
		t.Error("an entry out of the session still compares as in it")
	}
}

// TestUniformRF: the host index reads a partition's hosts at pid·rf only when every partition
// has rf of them.
func TestUniformRF(t *testing.T) {
	for _, c := range []struct {
		start []int32
		rf    int32
	}{{[]int32{0, 3, 6, 9}, 3}, {[]int32{0, 3, 5, 9}, 0}, {[]int32{0, 2, 6}, 0}, {[]int32{0, 1}, 1}, {[]int32{0}, 0}} {
		if got := UniformRF(c.start); got != c.rf {
			t.Errorf("UniformRF(%v) = %d, want %d", c.start, got, c.rf)
		}
	}
}

// brokerOfTwo is broker 1 over a fake cluster with replicas of two partitions at RF 3, t-0 on 0,
// 1, 2 and t-1 on 1, 2, 0, found by pid through the shared host index, under rules.
func brokerOfTwo(t *testing.T, rules ReplicaRules) (*fakeHost, *Broker) {
	t.Helper()
	x := NewHostIndex([]int32{0, 3, 6})
	h := &fakeHost{fakeFollower: newFakeFollower(), book: Rules{Replica: rules,
		HW: HWRules{MinInsyncReplicas: 1, LagTimeMaxMs: 10000}}}
	var names TopicNames
	names.Add("t", 2)
	b := NewBroker(1, h, x, &names, 2)
	for pid, hosts := range [][]int32{{0, 1, 2}, {1, 2, 0}} {
		for i, host := range hosts {
			slot := int32(pid) // the other brokers' slots, as theirs would be
			if host == 1 {
				slot = b.AddReplica(int32(pid))
			}
			x.Place(int32(pid), i, host, slot)
		}
	}
	if b.Replica(0) != b.ReplicaAt(0) || b.Replica(1) != b.ReplicaAt(1) || b.Replica(1).Pid() != 1 || b.Replica(-1) != nil {
		t.Fatal("the host index does not find the broker's replicas")
	}
	h.replicas[0], h.replicas[1] = b.Replica(0), b.Replica(1) // the fake cluster's events read them
	return h, b
}

// CountOnly: a fake cluster records every event (it has a trace).
func (h *fakeHost) CountOnly(Kind) bool { return false }
