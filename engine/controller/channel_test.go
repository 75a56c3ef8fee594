package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// sentTypes lists the type and recipient of every message sent since n.
func sentTypes(f *fake, n int) []string {
	var out []string
	for _, m := range f.sent[n:] {
		out = append(out, fmt.Sprintf("%s→%d", m.Type, m.To))
	}
	return out
}

// TestChannelQueuesStopReplicaAndLeaderAndIsr: ControllerChannelManager keeps one queue per broker
// for every request kind (sendRequest → brokerStateInfo(brokerId).messageQueue.put, 0.10.2.2 and
// 3.7.0), and its RequestSendThread.doWork takes the next only when the last was answered; a
// failed send is retried after backoff() (100 ms). Broker 2's controlled shutdown (it follows t-0)
// sends it StopReplica at once (its queue is empty), then t-0's OfflineReplica: the shrunk ISR to
// brokers 1 and 0, the batch's UpdateMetadata to every live broker and a second StopReplica to 2,
// which wait. A LeaderAndIsr for broker 2 queued after them waits too, in order: UpdateMetadata
// behind StopReplica, StopReplica behind UpdateMetadata, LeaderAndIsr behind StopReplica.
func TestChannelQueuesStopReplicaAndLeaderAndIsr(t *testing.T) {
	k, f := started(t)
	k.DoControlledShutdown(2)
	if got := sentTypes(f, 0); !slices.Equal(got, []string{"stop-replica→2", "leader-and-isr→0", "leader-and-isr→1"}) {
		t.Fatalf("sent %v, want the first StopReplica to 2 and the ISR shrink to 0 and 1", got)
	}
	first := f.sent[0]
	k.sendLeaderAndIsr(2, []int32{0})
	if len(f.sent) != 3 {
		t.Fatalf("a LeaderAndIsr to 2 left with a StopReplica in flight: %v", sentTypes(f, 3))
	}

	// The first StopReplica fails (timed out or disconnected): resent 100 ms later, not at once.
	k.ChannelRequestFailed(first)
	if len(f.sent) != 3 || !slices.Equal(f.timers, []string{"retry 2 epoch 1 at 100"}) {
		t.Fatalf("after the failure: sent %v, timers %v; want nothing sent, a retry at 100", sentTypes(f, 3), f.timers)
	}
	f.now = 100
	k.Retry(2, 1)
	if got := sentTypes(f, 3); !slices.Equal(got, []string{"stop-replica→2"}) || f.sent[3].StopReplica != first.StopReplica {
		t.Fatalf("the retry sent %v, want the same StopReplica again", got)
	}

	answer := func(req *protocol.Message) {
		t.Helper()
		n := len(f.sent)
		k.StopReplicaAnswered(0, &protocol.Message{Type: protocol.MsgStopReplicaResponse, From: 2, To: 0, ReplyTo: req.ID,
			StopReplicaResponse: &protocol.StopReplicaResponse{}}, req)
		if len(f.sent) != n+1 {
			t.Fatalf("the answer to #%d sent %v, want the next request", req.ID, sentTypes(f, n))
		}
	}
	// The first copy's answer is stale (that send failed): nothing moves.
	k.StopReplicaAnswered(0, &protocol.Message{Type: protocol.MsgStopReplicaResponse, From: 2, To: 0, ReplyTo: first.ID,
		StopReplicaResponse: &protocol.StopReplicaResponse{}}, first)
	if len(f.sent) != 4 {
		t.Fatalf("a stale answer sent %v", sentTypes(f, 4))
	}
	answer(f.sent[3])
	// The OfflineReplica batch sends its LeaderAndIsr requests, then its UpdateMetadata to every
	// live broker, then its StopReplica (sendRequestsToBrokers): broker 2's UpdateMetadata is next.
	if m := f.sent[4]; m.Type != protocol.MsgUpdateMetadata || m.To != 2 {
		t.Fatalf("after the first StopReplica's answer: %s to %d, want the batch's UpdateMetadata to 2", m.Type, m.To)
	}
	n := len(f.sent)
	k.UpdateMetadataAnswered(0, &protocol.Message{Type: protocol.MsgUpdateMetadataResponse, From: 2, To: 0, ReplyTo: f.sent[4].ID,
		UpdateMetadataResponse: &protocol.UpdateMetadataResponse{}}, f.sent[4])
	if len(f.sent) != n+1 {
		t.Fatalf("the UpdateMetadata's answer sent %v, want the next request", sentTypes(f, n))
	}
	if m := f.sent[5]; m.Type != protocol.MsgStopReplica || m.To != 2 {
		t.Fatalf("after the UpdateMetadata's answer: %s to %d, want the second StopReplica to 2", m.Type, m.To)
	}
	answer(f.sent[5])
	if m := f.sent[6]; m.Type != protocol.MsgLeaderAndIsr || m.To != 2 {
		t.Fatalf("after the second StopReplica's answer: %s to %d, want the LeaderAndIsr to 2", m.Type, m.To)
	}
}

// TestChannelDropsRequestsOfAnOldRegistration: a request built for an earlier registration of the
// broker is not sent (removeBroker stops the old RequestSendThread with its queue; the engine
// drops what is queued for another broker epoch when it reaches the head).
func TestChannelDropsRequestsOfAnOldRegistration(t *testing.T) {
	k, f := started(t)
	k.DoControlledShutdown(2)
	k.sendLeaderAndIsr(2, []int32{0})
	first := f.sent[0]
	k.live[2]++ // broker 2 registered again: a new broker epoch
	n := len(f.sent)
	k.StopReplicaAnswered(0, &protocol.Message{Type: protocol.MsgStopReplicaResponse, From: 2, To: 0, ReplyTo: first.ID,
		StopReplicaResponse: &protocol.StopReplicaResponse{}}, first)
	if got := sentTypes(f, n); len(got) != 0 {
		t.Fatalf("sent %v to the new registration, want nothing (both queued requests were for the old one)", got)
	}
}
