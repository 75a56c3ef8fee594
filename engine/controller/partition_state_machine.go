package controller

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The PartitionStateMachine: the controller's writes of a partition's leader and ISR, the
// offline (clean or unclean) election, and the OfflinePartition state.

// writePartition is the controller's ZooKeeper write of a new leader and ISR. A new leader (or
// none) bumps the leader epoch, as does a controller-driven ISR removal; every write bumps the
// partition epoch (the znode version).
func (k *Controller) writePartition(pid int32, leader int32, isr []int32, bumpLeaderEpoch bool, why string) {
	p := &k.zk.partitions[pid]
	oldLeader, oldEpoch, oldISR := p.leader, p.leaderEpoch, p.isr
	p.leader = leader
	p.isr = protocol.SortedCopy(isr)
	if bumpLeaderEpoch {
		p.leaderEpoch++
	}
	p.partitionEpoch++
	wasOffline := false
	if k.partitionOffline != nil {
		wasOffline = k.partitionOffline[pid]
		k.partitionOffline[pid] = leader < 0
	}
	k.c.PartitionWritten(pid, oldEpoch)
	elected := oldLeader != leader || (wasOffline && leader >= 0)
	if elected {
		t := k.topicOf(pid)
		k.c.Emit(Event{Type: EvLeaderChange, Topic: t.name, Partition: protocol.Some(pid - t.first), From: protocol.Some(int64(oldLeader)),
			To: protocol.Some(int64(leader)), Epoch: protocol.Some(int64(p.leaderEpoch)), ISR: p.isr, Reason: why,
			Text: fmt.Sprintf("controller: %s leader %s → %s in leader epoch %d (%s)", k.name(pid), protocol.LeaderName(oldLeader), protocol.LeaderName(leader), p.leaderEpoch, why)})
	}
	if !slices.Equal(oldISR, p.isr) {
		k.c.ISRChanged(pid, oldISR, p.isr)
		t := k.topicOf(pid)
		k.c.Emit(Event{Type: EvISRChange, Topic: t.name, Partition: protocol.Some(pid - t.first), OldISR: oldISR, ISR: p.isr,
			Epoch: protocol.Some(int64(p.leaderEpoch)), Reason: why,
			Text: fmt.Sprintf("controller: %s ISR %v → %v (%s)", k.name(pid), oldISR, p.isr, why)})
	}
	if elected {
		// A new leader, or an offline partition's recorded leader elected again (before 2.3 a dead
		// leader can stay recorded while its partition is offline).
		k.c.Elected(pid)
	}
}

// electOffline is the offline election (OfflinePartitionLeaderElection): the first live ISR
// member in assignment order; else, with unclean election, the first live replica.
func (k *Controller) electOffline(pid int32, allowUnclean bool) bool {
	p := &k.zk.partitions[pid]
	var liveISR []int32
	for _, b := range p.isr {
		if k.replicaUsable(pid, b) {
			liveISR = append(liveISR, b)
		}
	}
	for _, b := range p.assignment {
		if slices.Contains(liveISR, b) {
			// A clean election keeps the recovery state it finds (3.7.0 Election.leaderForOffline:
			// "keep the previous leader recovery state").
			k.writePartition(pid, b, liveISR, true, "offline partition: clean election")
			return true
		}
	}
	if !allowUnclean {
		return false
	}
	for _, b := range p.assignment {
		if k.replicaUsable(pid, b) {
			p.recovering = k.era.LeaderRecovery // KIP-704 (IBP 3.2): RECOVERING
			k.writePartition(pid, b, []int32{b}, true, "unclean leader election: no live ISR member")
			return true
		}
	}
	return false
}

// queueOfflineElection sends an offline election's result to the partition's live replicas only:
// Election.leaderForOffline answers `assignment.filter(replica =>
// controllerContext.isReplicaOnline(replica, partition))` as the recipients (3.7.0; the same
// liveReplicas in 2.1.1's PartitionStateMachine.leaderForOffline, and 0.10.2.2's
// OfflinePartitionLeaderSelector answers liveAssignedReplicas, from liveBrokerIds). A broker
// shutting down, or whose log directory holding the replica failed, gets no LeaderAndIsr for it.
func (k *Controller) queueOfflineElection(pid int32) {
	k.queueLeaderAndIsrTo(pid, func(b int32) bool { return k.replicaUsable(pid, b) })
}

// triggerOnlinePartitionStateChange is the offline election for every partition in
// OfflinePartition state (partitionOffline).
func (k *Controller) triggerOnlinePartitionStateChange() {
	unclean := k.c.Settings().UncleanLeaderElectionEnable
	for pid := range int32(len(k.zk.partitions)) {
		if k.partitionOffline[pid] && k.electOffline(pid, unclean) {
			k.queueOfflineElection(pid)
		}
	}
}

// initializePartitionState is PartitionStateMachine.initializePartitionState at a controller's
// start: a partition is offline when its recorded leader's replica is not online.
func (k *Controller) initializePartitionState() {
	k.partitionOffline = make([]bool, len(k.zk.partitions))
	for pid := range k.zk.partitions {
		p := &k.zk.partitions[pid]
		k.partitionOffline[pid] = p.leader < 0 || !k.replicaOnline(int32(pid), p.leader)
	}
}

// preferredElection (PreferredReplicaPartitionLeaderElection) makes the head of the assignment
// leader if it is usable and in the ISR. reelect is an operator's election in an era whose
// controller elects a preferred leader again (Era.PreferredReelectsLeader, 2.1.1).
func (k *Controller) preferredElection(pid int32, why string, reelect bool) protocol.KafkaError {
	p := &k.zk.partitions[pid]
	pref := p.assignment[0]
	switch {
	case p.leader == pref && !reelect:
		return protocol.ErrElectionNotNeeded
	case !k.replicaUsable(pid, pref) || !slices.Contains(p.isr, pref):
		return protocol.ErrPreferredLeaderNotAvailable
	}
	k.writePartition(pid, pref, p.isr, true, why)
	k.queueLeaderAndIsr(pid)
	return protocol.ErrNone
}

// UncleanLeaderElectionEnabled is the controller's UncleanLeaderElectionEnable event: once
// unclean.leader.election.enable is turned on at runtime, the offline partitions get the offline
// election at once (processUncleanLeaderElectionEnable: triggerOnlinePartitionStateChange, from
// 2.1.0, KAFKA-6835, raised by DynamicBrokerConfig and TopicConfigHandler). Before 2.1 nothing
// happens until the next election (a broker change). The caller raises it only in eras that have
// it, and only when the setting went from false to true.
func (k *Controller) UncleanLeaderElectionEnabled() {
	if !k.usable() {
		return
	}
	k.triggerOnlinePartitionStateChange()
	k.flushLeaderAndIsr()
}
