package engine

import (
	"fmt"
	"strconv"
)

// The broker's replica manager: its LeaderAndIsr handling (ReplicaManager.becomeLeaderOrFollower,
// Partition.makeLeader and makeFollower), StopReplica and HW checkpoints are package broker's
// (brk.ReplicaManager, over its brk.Broker as Host), which brk.Broker.Handle hands its requests
// and brk.Broker.HighWatermarkCheckpoint its task (kafka_apis.go). Here: the cluster's start's
// LeaderAndIsr (start.go), and a truncation's event (what a crash forgets is
// brk.Partition.ResetMemory).

// becomeLeaderOrFollower applies a LeaderAndIsr to b (brk.ReplicaManager; tests call it).
func (e *Engine) becomeLeaderOrFollower(b *broker, req *LeaderAndIsrRequest) *LeaderAndIsrResponse {
	return b.rm.BecomeLeaderOrFollower(b.Broker, req)
}

func (e *Engine) emitTruncate(r *replica, oldLEO int64, cut []commitlogRecord, reason string) {
	p := e.partitions[r.Pid()]
	to := r.Log().LogEndOffset()
	e.emit(Event{Type: EvTruncate, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index),
		From: Some(oldLEO), To: Some(to), Records: cut, Reason: reason,
		Text: fmt.Sprintf("broker %d truncated %s from offset %d to %d (%d records dropped): %s", r.Broker(), p.name(), oldLEO, to, len(cut), reason)})
}

// describeRole is a role change's text (made when read: Narrate): arg is the epoch start offset
// for a leader, the leader and its epoch for a follower.
// It appends with strconv rather than fmt: a large cluster's start narrates one per replica.
func describeRole(ev *Event) string {
	b := make([]byte, 0, 112)
	b = append(b, "broker "...)
	b = strconv.AppendInt(b, int64(ev.Broker.V), 10)
	if ev.Reason == "leader" {
		b = append(b, " became leader of "...)
	} else {
		b = append(b, " became follower of "...)
	}
	b = append(b, ev.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ev.Partition.V), 10)
	if ev.Reason == "leader" {
		b = append(b, " in leader epoch "...)
		b = strconv.AppendInt(b, ev.Epoch.V, 10)
		b = append(b, " (epoch start offset "...)
		b = strconv.AppendInt(b, ev.arg[0], 10)
		b = append(b, ", ISR "...)
		b = appendIDs(b, ev.ISR)
		b = append(b, ')')
		return string(b)
	}
	b = append(b, " under leader "...)
	b = strconv.AppendInt(b, ev.arg[0], 10)
	b = append(b, " in leader epoch "...)
	b = strconv.AppendInt(b, ev.arg[1], 10)
	return string(b)
}

// appendIDs appends ids as fmt's %v prints them: [1 2 3], and [] for none.
func appendIDs(b []byte, ids []int32) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']')
}
