package broker

import (
	"github.com/highwater-sim/highwater/engine/protocol"
	"slices"
)

// PartitionState is a leader's ISR as Partition.scala keeps it (KIP-497): the committed ISR
// (CommittedPartitionState) and the change in flight, PendingExpandIsr or PendingShrinkIsr, with
// the AlterPartition that carries it. The high watermark waits on the maximal ISR (the committed
// one plus a replica being added) while an expansion is in flight. Its zero value is a follower's:
// no ISR, nothing in flight, and so is a nil one for its reads (a replica holding no leader's
// state has none: Partition.State). Before AlterIsr (IBP 2.7) the leader writes the ISR itself
// and nothing is ever in flight.
type PartitionState struct {
	isr []int32
	// pending is the change in flight, nil for none: it is rare, and every replica of the
	// cluster holds a PartitionState (a pointer is 64 bytes less per replica, a fifth of one).
	pending *pendingChange
}

// pendingChange is Kafka's PendingExpandIsr / PendingShrinkIsr.
type pendingChange struct {
	active bool
	expand bool
	ids    []int32 // the replica joining, or the replicas leaving
	newISR []int32 // the ISR asked for
	msg    uint64  // the AlterPartition in flight
	// stuck is set when the controller's answer says to wait for new metadata.
	stuck bool
}

// ISR is the committed ISR. It is shared: callers only read it (the HW and fetch paths read it
// per partition, so it is not copied).
func (s *PartitionState) ISR() []int32 {
	if s == nil {
		return nil
	}
	return s.isr
}

// InISR reports whether broker b is in the committed ISR.
func (s *PartitionState) InISR(b int32) bool { return s != nil && slices.Contains(s.isr, b) }

// IsInflight is PartitionState.isInflight: an ISR change waits for the controller's answer.
func (s *PartitionState) IsInflight() bool { return s != nil && s.pending != nil && s.pending.active }

// Expanding reports whether the change in flight is an expansion (PendingExpandIsr).
func (s *PartitionState) Expanding() bool { return s.IsInflight() && s.pending.expand }

// Shrinking reports whether the change in flight is a shrink (PendingShrinkIsr).
func (s *PartitionState) Shrinking() bool { return s.IsInflight() && !s.pending.expand }

// Changing is the replica joining, or the replicas leaving, in the change in flight.
func (s *PartitionState) Changing() []int32 {
	if s == nil || s.pending == nil {
		return nil
	}
	return s.pending.ids
}

// PendingISR is the ISR the change in flight asks for.
func (s *PartitionState) PendingISR() []int32 {
	if s == nil || s.pending == nil {
		return nil
	}
	return s.pending.newISR
}

// InMaximalISR reports whether broker b is in the ISR the HW waits on: the committed ISR plus a
// replica being added.
func (s *PartitionState) InMaximalISR(b int32) bool {
	if s == nil {
		return false
	}
	if slices.Contains(s.isr, b) {
		return true
	}
	return s.Expanding() && slices.Contains(s.pending.ids, b)
}

// MaximalISR is the ISR the HW waits on (maximalIsr).
func (s *PartitionState) MaximalISR() []int32 {
	if s == nil {
		return nil
	}
	if s.Expanding() {
		return protocol.SortedUnion(s.isr, s.pending.ids)
	}
	return s.isr
}

// Commit makes isr the committed ISR with nothing in flight (CommittedPartitionState): from a
// LeaderAndIsr, the controller's answer to AlterPartition, or the leader's own ZooKeeper write.
// nil is a replica that does not lead.
func (s *PartitionState) Commit(isr []int32) { *s = PartitionState{isr: isr} }

// Prepare puts an ISR change in flight (PendingExpandIsr with expand, else PendingShrinkIsr): ids
// join or leave, and newISR is asked for.
func (s *PartitionState) Prepare(expand bool, ids, newISR []int32) {
	s.pending = &pendingChange{active: true, expand: expand, ids: ids, newISR: newISR}
}

// Sent records the AlterPartition that carries the change; InFlight is it, 0 while none is.
func (s *PartitionState) Sent(msg uint64) { s.change().msg = msg }
func (s *PartitionState) InFlight() uint64 {
	if s == nil || s.pending == nil {
		return 0
	}
	return s.pending.msg
}

// SendFailed: the AlterPartition got no answer; the change stays in flight and is sent again.
func (s *PartitionState) SendFailed() {
	if s.pending != nil {
		s.pending.msg = 0
	}
}

// Stuck reports whether the change waits for new metadata (the controller's answer said so), and
// WaitForMetadata makes it so: only a LeaderAndIsr moves the partition on.
func (s *PartitionState) Stuck() bool      { return s != nil && s.pending != nil && s.pending.stuck }
func (s *PartitionState) WaitForMetadata() { s.change().stuck = true }

// Revert drops the change in flight: back to the last committed state (INELIGIBLE_REPLICA).
func (s *PartitionState) Revert() { s.pending = nil }

// change is the change in flight to write to, made if there is none: as the value it replaced,
// a field set with no change in flight is kept (and reads as set) until the next Prepare,
// Revert or Commit.
func (s *PartitionState) change() *pendingChange {
	if s.pending == nil {
		s.pending = &pendingChange{}
	}
	return s.pending
}
