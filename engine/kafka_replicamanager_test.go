package engine

import "testing"

// Ports of Kafka's ReplicaManagerTest cases. Broker 0 leads t-0 at leader epoch 0
// (the cluster's start state); requests travel over the simulated network (1 ms each way).

// sendFollowerFetch sends a Fetch from follower to p's leader, as a fetcher would, and returns it.
func sendFollowerFetch(e *Engine, p *partition, follower int32, offset int64, minBytes, maxWaitMs int64) *Message {
	r := e.replicaOn(p.pid, e.ctrl.Leader(p.pid))
	m := &Message{Type: MsgFetch, From: follower, To: e.ctrl.Leader(p.pid), Fetch: &FetchRequest{ReplicaID: follower,
		BrokerEpoch: e.brokers[follower].brokerEpoch, MaxWaitMs: maxWaitMs, MinBytes: minBytes,
		SessionEpoch: FinalEpoch, // a sessionless (full) fetch
		Partitions: []FetchPartition{{TP: p.tp(), FetchOffset: offset, CurrentLeaderEpoch: r.LeaderEpoch(),
			LastFetchedEpoch: r.Log().Cache().Latest()}}}}
	e.send(m)
	return m
}

// answerTo returns the answer to request m sent so far, or nil.
func answerTo(e *Engine, m *Message) *Message {
	for _, ev := range e.events {
		if ev.Message != nil && ev.Message.ReplyTo == m.ID {
			return ev.Message
		}
	}
	return nil
}

// TestKafkaT23FollowerFetchWithDefaultSelectorNoForcedHwPropagation ports
// ReplicaManagerTest.testFollowerFetchWithDefaultSelectorNoForcedHwPropagation: the
// HW in a fetch answer is the leader's HW before that fetch counted.
func TestKafkaT23FollowerFetchWithDefaultSelectorNoForcedHwPropagation(t *testing.T) {
	e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
	e.produce(p, 2, -1)
	runFor(t, e, 5)
	op := e.clients.Produce(1)
	if r := e.replicaOn(p.pid, 0); r.Log().LogEndOffset() != 2 || r.Log().HighWatermark() != 0 || op.Done {
		t.Fatalf("after the produce: LEO %d, HW %d, produce done %v; want 2, 0, pending", r.Log().LogEndOffset(), r.Log().HighWatermark(), op.Done)
	}

	m := sendFollowerFetch(e, p, 1, 2, 0, 500)
	runFor(t, e, 5)
	ans := answerTo(e, m)
	if ans == nil || ans.FetchResponse.Partitions[0].HighWatermark != 0 {
		t.Fatalf("answer to the fetch at 2 (minBytes 0): %+v; want HW 0", ans)
	}
	if op.Result != "acked" {
		t.Errorf("produce result %q, want acked", op.Result)
	}

	m = sendFollowerFetch(e, p, 1, 2, 1000, 1000)
	runFor(t, e, 5)
	if answerTo(e, m) != nil {
		t.Fatal("the fetch with minBytes 1000 was answered at once; want it parked")
	}
	runFor(t, e, 1001)
	ans = answerTo(e, m)
	if ans == nil || ans.FetchResponse.Partitions[0].HighWatermark != 2 {
		t.Errorf("answer to the parked fetch after 1001 ms: %+v; want HW 2", ans)
	}
}

// TestKafkaT24ReplicaManager ports ReplicaManagerTest.testClearPurgatoryOnBecomingFollower and
// testFetchBeyondHighWatermark.
func TestKafkaT24ReplicaManager(t *testing.T) {
	t.Run("testClearPurgatoryOnBecomingFollower", func(t *testing.T) {
		e, p := newUnitEngine(t, 2, []int32{0, 1}, nil)
		e.produce(p, 1, -1)
		runFor(t, e, 5)
		if n := e.replicaOn(p.pid, 0).Produces().Len(); n != 1 {
			t.Fatalf("%d produces in purgatory, want 1", n)
		}
		// The controller moves leadership to broker 1 in epoch 1; broker 0 gets the LeaderAndIsr.
		e.ctrl.SetStateForTest(p.pid, 1, 1, e.ctrl.ISR(p.pid), e.ctrl.PartitionEpoch(p.pid)+1)
		e.becomeLeaderOrFollower(e.brokers[0], e.ctrl.LeaderAndIsrFor(0, []int32{p.pid}))
		resps := eventsOf(e.events, MsgProduceResponse, nil)
		if len(resps) != 1 || resps[0].Message.ProduceResponse.Error != ErrNotLeaderOrFollower {
			t.Errorf("produce answers %d (first: %+v), want one NOT_LEADER_OR_FOLLOWER", len(resps), resps)
		}
	})
	t.Run("testFetchBeyondHighWatermark", func(t *testing.T) {
		e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, nil)
		r := e.replicaOn(p.pid, 0)
		appendLeader(e, r, 2)
		wantHW(t, r, 0, "after the append")
		d := followerFetch(e, p, 1, 1, -1)
		if d.Error != ErrNone || len(d.Records) != 1 {
			t.Errorf("follower fetch at 1: error %q, %d records; want data", d.Error, len(d.Records))
		}
		req := &FetchRequest{ReplicaID: ClientNode, BrokerEpoch: -1}
		d, _ = e.readPartition(e.replicaOn(p.pid, 0), req, &FetchPartition{TP: p.tp(), FetchOffset: 1, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}, true)
		if d.Error != ErrNone || len(d.Records) != 0 {
			t.Errorf("consumer fetch at 1 above HW %d: error %q, %d records; want empty, no error", r.Log().HighWatermark(), d.Error, len(d.Records))
		}
	})
}
