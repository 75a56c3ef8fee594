package controller

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestAlterPartitionUpdateMetadataPerGroup: 3.7.0 tryProcessAlterPartition answers each
// AlterPartition request with one UpdateMetadata for all its partitions to every live broker.
// The engine's broker sends the changes Kafka batches into one request as one-partition requests
// at the same instant (alterGroup: the same sender and send time), so the controller adds each to
// the group's UpdateMetadata while that waits in a broker's queue; one already sent stays as it
// is, and another group's gets its own.
func TestAlterPartitionUpdateMetadataPerGroup(t *testing.T) {
	k, f := started(t)
	alter := func(sent int64) {
		t.Helper()
		k.ProcessAlterPartition(0, &protocol.Message{ID: 99, Type: protocol.MsgAlterPartition, From: 1, To: 0, Sent: sent,
			AlterPartition: &protocol.AlterPartitionRequest{BrokerID: 1, BrokerEpoch: k.Session(1).Epoch,
				TP: protocol.TP{Topic: "t"}, LeaderEpoch: 0, PartitionEpoch: k.PartitionEpoch(0), NewISR: []int32{0, 1, 2}}})
	}
	alter(5) // sent at once to each idle broker
	alter(5) // queued behind it
	alter(5) // the same group: added to the queued one
	alter(6) // another group: its own
	ch := &k.channels[2]
	if len(ch.queue) != 3 || ch.queue[1].umd == nil || ch.queue[1].umd.Partitions != 2 || ch.queue[2].umd.Partitions != 1 {
		t.Fatalf("broker 2's queue: %d requests; want the one in flight, the group's second with 2 partition states, the next group's with 1", len(ch.queue))
	}
	n := 0
	for _, m := range f.sent {
		if m.Type == protocol.MsgUpdateMetadata {
			n++
			if m.UpdateMetadata.Partitions != 1 {
				t.Errorf("UpdateMetadata sent to %d with %d partition states, want 1", m.To, m.UpdateMetadata.Partitions)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d UpdateMetadata sent, want one to each of the 3 live brokers", n)
	}
}
