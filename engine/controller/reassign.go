package controller

import (
	"fmt"
	"slices"
)

// The reassignment that reorders a partition's replicas for an operator's chosen leader
// (KafkaController.onPartitionReassignment with the same replicas in a new order).

// onPartitionReassignment runs the reassignment of pid to its (already reordered) assignment.
// From 2.4 (KIP-455) a reassignment that adds and removes no replica is complete at once (3.7.0:
// ReplicaAssignment.isBeingReassigned is false, so isReassignmentComplete). Before, it completes
// only when every target replica is in the ISR (areReplicasInIsr in 0.10.2.2, 0.11.0.2 and
// 2.1.1's onPartitionReassignment); until then the controller writes the new replica list (the
// set of old and new replicas, in the new order for up to four replicas: Scala's Set1..Set4), bumps
// the leader epoch and sends it to the replicas (updateLeaderEpochAndSendRequest: "increment the
// leader epoch even if there are no leader or isr changes"), and waits: the partition stays in
// /admin/reassign_partitions until an ISR change brings every replica in (ReassignmentIsrChanged)
// or a broker hosting it starts (restartReassignments), each of which runs this again.
func (k *Controller) onPartitionReassignment(pid int32) {
	p := &k.zk.partitions[pid]
	if !k.era.ReorderCompletesAtOnce && !allIn(p.assignment, p.isr) {
		if k.reassigning == nil {
			k.reassigning = map[int32]bool{}
		}
		k.reassigning[pid] = true
		k.writePartition(pid, p.leader, p.isr, true, fmt.Sprintf("reassignment to %v waiting for its replicas to join the ISR", p.assignment))
		k.queueLeaderAndIsr(pid)
		k.flushLeaderAndIsr()
		return
	}
	delete(k.reassigning, pid)
	k.moveReassignedPartitionLeaderIfRequired(pid)
	// "After electing leader, the replicas and isr information changes, so resend the update
	// metadata request to every broker" (onPartitionReassignment step 12 in 0.10.2.2 and 2.1.1,
	// B8 in 3.7.0): an UpdateMetadata of its own, for this partition.
	k.sendUpdateMetadata(nil, 1)
}

// ReassignmentIsrChanged is the watch on a reassigned partition's state znode
// (ReassignedPartitionsIsrChangeListener in 0.10.2.2, PartitionReassignmentIsrChange in 0.11.0.2
// and 2.1.1), fired by a leader's ISR write: once every target replica is in the ISR, the
// reassignment completes (onPartitionReassignment).
func (k *Controller) ReassignmentIsrChanged(pid int32) {
	if !k.usable() || !k.reassigning[pid] || !allIn(k.zk.partitions[pid].assignment, k.zk.partitions[pid].isr) {
		return
	}
	k.onPartitionReassignment(pid)
}

// restartReassignments is the end of onBrokerStartup before 2.4 (0.10.2.2, 2.1.1): every
// reassignment with a replica on a broker that started runs again (onPartitionReassignment), a
// leader-epoch bump while a replica is still out of the ISR.
func (k *Controller) restartReassignments(ids []int32) {
	for _, pid := range sortedKeys(k.reassigning) {
		if slices.ContainsFunc(k.zk.partitions[pid].assignment, func(b int32) bool { return slices.Contains(ids, b) }) {
			k.onPartitionReassignment(pid)
		}
	}
}

// moveReassignedPartitionLeaderIfRequired ends the reassignment that reordered pid's replicas
// (the same replicas, so no replica is added or removed).
// KafkaController.moveReassignedPartitionLeaderIfRequired (0.10.2.0, 2.1.0, 3.7.0): a current
// leader that is still a replica and online keeps leading, and updateLeaderEpochAndSendRequest
// writes the partition again with the leader epoch plus one ("increment the leader epoch even if
// there are no leader or isr changes", updateLeaderEpoch) and sends it to the replicas in a
// LeaderAndIsr of its own; a leader that is not online is replaced by the reassignment's election
// (ReassignPartitionLeaderElection: the first replica of the new assignment that is online and in
// the ISR; none, nothing written). So an operator's chosen-leader election (reorder, then a
// preferred election) bumps the leader epoch twice, and before 2.4 once more for each time the
// reassignment had to wait (onPartitionReassignment).
func (k *Controller) moveReassignedPartitionLeaderIfRequired(pid int32) {
	p := &k.zk.partitions[pid]
	leader := int32(-1)
	if p.leader >= 0 && k.replicaUsable(pid, p.leader) {
		leader = p.leader
	} else {
		for _, b := range p.assignment {
			if k.replicaUsable(pid, b) && slices.Contains(p.isr, b) {
				leader = b
				break
			}
		}
	}
	if leader >= 0 {
		k.writePartition(pid, leader, p.isr, true, fmt.Sprintf("reassignment to %v", p.assignment))
		k.queueLeaderAndIsr(pid)
	}
	k.flushLeaderAndIsr()
}

// allIn reports whether every replica is in the ISR.
func allIn(replicas, isr []int32) bool {
	for _, b := range replicas {
		if !slices.Contains(isr, b) {
			return false
		}
	}
	return true
}
