package controller

import (
	"fmt"
	"github.com/highwater-sim/highwater/engine/protocol"
	"slices"
)

// The ReplicaStateMachine: replicas going OnlineReplica (their broker gets the partition's state)
// and OfflineReplica (out of the ISR), and onReplicasBecomeOffline, which takes a partition whose
// leader was lost through the PartitionStateMachine's election first.

// onReplicasBecomeOffline: the partitions whose leader is lost go offline and every offline
// partition gets the offline election (triggerOnlinePartitionStateChange), then the lost replicas
// move to OfflineReplica (removed from the ISRs). Electing first is Kafka's order.
//
// Then, its own UpdateMetadata to every live broker (with no partition states from 2.2, every
// partition's before: allPartitionsUpdate) when no partition lost its leader
// (`partitionsWithoutLeader.isEmpty`, 0.10.2.2 onBrokerFailure, 2.1.1); from 3.1 (KAFKA-13225,
// 3.7.0) only when no replica went offline and no election succeeded.
func (k *Controller) onReplicasBecomeOffline(lost func(pid, b int32) bool) {
	leaderless := false
	for pid := range k.zk.partitions {
		if p := &k.zk.partitions[pid]; p.leader >= 0 && lost(int32(pid), p.leader) {
			k.partitionOffline[pid] = true
			leaderless = true
		}
	}
	k.triggerOnlinePartitionStateChange()
	// An election adds its partition to the batch (callers flush before: the batch is empty here).
	elected := k.umd.count > 0
	// The elections and the OfflineReplica transitions are separate batches (onBrokerFailure and
	// onReplicasBecomeOffline call PartitionStateMachine and then ReplicaStateMachine
	// handleStateChanges, each ending in sendRequestsToBrokers; 0.10.2.2, 2.1.1, 3.7.0).
	k.flushLeaderAndIsr()
	offlined := k.removeReplicasFromIsr(lost, "", true)
	k.flushLeaderAndIsr()
	if k.era.OfflineUpdateMetadataOnlyWithoutChange {
		if !offlined && !elected {
			k.sendUpdateMetadata(nil, 0)
		}
	} else if !leaderless {
		k.sendUpdateMetadata(nil, k.allPartitionsUpdate())
	}
}

// removeReplicasFromIsr is the OfflineReplica transition for every lost replica, in Kafka's order
// (it only matters when a partition's whole ISR is lost at once): from 2.1 broker by broker in the
// order of `replicas.groupBy(_.replica)` (groupByOrder, Era.GroupByScala); before, one replica at a
// time in the order of the batch's Set of (topic, partition, replica) (setOrder), where set says
// the replicas are such a batch (onBrokerFailure) and not the engine's grouping of Kafka's one-by-one
// calls (0.10.2.2's controlled shutdown, kept in partition order). doRemoveReplicasFromIsr: a
// lost replica in the ISR leaves it, and the leader becomes none if it led; the last ISR member
// stays (from 1.1, KAFKA-5642; before that only with unclean election off, Era.KeepLastIsrMember);
// each write bumps the leader epoch (LeaderAndIsr.newLeaderAndIsr). A lost replica not in the ISR
// changes nothing, but its partition's LeaderAndIsr goes to the other replicas all the same.
//
// It reports whether any replica was lost (Kafka's newOfflineReplicas non-empty).
func (k *Controller) removeReplicasFromIsr(lost func(pid, b int32) bool, why string, set bool) bool {
	// The groupBy's keys: the brokers with a replica in the batch.
	var keys []int32
	for b := range int32(k.brokers) {
		if slices.ContainsFunc(k.c.Hosted(b), func(pid int32) bool { return lost(pid, b) }) {
			keys = append(keys, b)
		}
	}
	order := groupByOrder(keys, k.era.GroupByScala)
	if k.era.GroupByScala == GroupByBrokerOrder && len(keys) > 4 {
		order = hashTrieOrder(keys) // the dead brokers' HashSet (replicasOnBrokers' brokerIds)
	}
	var pairs []replicaPair
	for _, b := range order {
		for _, pid := range k.c.Hosted(b) {
			if lost(pid, b) {
				pairs = append(pairs, replicaPair{pid, b})
			}
		}
	}
	if set && k.era.GroupByScala == GroupByBrokerOrder {
		pairs = setOrder(pairs, func(pid int32) (string, int32) { t := k.topicOf(pid); return t.name, pid - t.first })
	}
	for _, pr := range pairs {
		pid, b := pr.pid, pr.b
		p := &k.zk.partitions[pid]
		if !slices.Contains(p.isr, b) {
			// Not in the ISR (its leader shrank it, or an earlier transition did): nothing is
			// written, but the partition's state as it stands still goes to the other replicas, at
			// the same leader epoch, which they ignore (doRemoveReplicasFromIsr returns
			// leaderAndIsrsWithoutReplica with the updated ones, 2.1.1 and 3.7.0; 0.10.2.2's
			// removeReplicaFromIsr returns Some(the current state) after "Cannot remove replica ...
			// since it is not in the ISR"): a LeaderAndIsr on their queues all the same.
			k.queueLeaderAndIsrTo(pid, func(h int32) bool { return h != b })
			continue
		}
		leader := p.leader
		if leader == b {
			leader = -1
		}
		isr := protocol.SortedMinus(p.isr, []int32{b})
		if len(isr) == 0 && (k.era.KeepLastIsrMember || !k.c.Settings().UncleanLeaderElectionEnable) {
			isr = p.isr // the last ISR member stays ("last replica standing")
		}
		reason := why
		if reason == "" {
			reason = fmt.Sprintf("replica %d offline", b)
		}
		k.writePartition(pid, leader, isr, true, reason)
		// To the other replicas only: OfflineReplica sends the shrunk ISR to
		// `partitionReplicaAssignment(partition).filterNot(_ == replicaId)` (3.7.0
		// ZkReplicaStateMachine; 0.10.2.2's `currentAssignedReplicas.filterNot(_ == replicaId)`).
		k.queueLeaderAndIsrTo(pid, func(h int32) bool { return h != b })
	}
	return len(pairs) > 0
}

// onlineReplicas adds every partition hosted by the brokers ids to their next LeaderAndIsr, with
// its current state (the OnlineReplica transition).
func (k *Controller) onlineReplicas(ids []int32) {
	for _, b := range ids {
		if hosted := k.c.Hosted(b); len(hosted) > 0 {
			if k.batch == nil {
				k.batch = map[int32][]int32{}
			}
			k.batch[b] = append(k.batch[b], hosted...)
			for _, pid := range hosted {
				k.addUpdateMetadata(pid)
			}
		}
	}
}
