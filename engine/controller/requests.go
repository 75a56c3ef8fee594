package controller

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The requests and events the controller handles besides ZooKeeper's watches: AlterPartition
// from a leader, ControlledShutdown from a broker, a log directory's failure, an operator's
// election.

// ProcessAlterPartition is the controller's AlterPartition (AlterIsr) handling in ZooKeeper mode
// (KafkaController.processAlterPartition). at is the broker the request reached: only the active
// controller's broker may answer it.
func (k *Controller) ProcessAlterPartition(at int32, m *protocol.Message) {
	req := m.AlterPartition
	pid := k.pidOf(req.TP)
	p := &k.zk.partitions[pid]
	resp := &protocol.AlterPartitionResponse{TP: req.TP, Leader: -1, LeaderEpoch: -1, PartitionEpoch: -1}
	alreadyDone := false
	switch {
	case !k.usable() || k.broker != at:
		resp.Error = protocol.ErrNotController
	case k.live[req.BrokerID] == 0 || k.live[req.BrokerID] != req.BrokerEpoch:
		resp.Error = protocol.ErrStaleBrokerEpoch
	case req.PartitionEpoch > p.partitionEpoch || req.LeaderEpoch > p.leaderEpoch:
		// The leader knows a newer state than this controller wrote, so this controller is
		// likely no longer the active one (KafkaController.tryProcessAlterPartition).
		resp.Error = protocol.ErrNotController
	case req.LeaderEpoch < p.leaderEpoch:
		resp.Error = protocol.ErrFencedLeaderEpoch
	case req.BrokerID != p.leader:
		resp.Error = protocol.ErrInvalidRequest
	case req.LeaderEpoch == p.leaderEpoch && slices.Equal(protocol.SortedCopy(req.NewISR), p.isr) && !p.recovering:
		// NB: already the state asked for, so a retry whose answer was lost: KafkaController
		// answers with the current state before fencing by partition epoch
		// (equalsAllowStalePartitionEpoch), which keeps AlterPartition idempotent.
		alreadyDone = true
	case req.PartitionEpoch < p.partitionEpoch:
		resp.Error = protocol.ErrInvalidUpdateVersion
	case !slices.Contains(req.NewISR, p.leader):
		resp.Error = protocol.ErrInvalidRequest
	}
	if resp.Error == protocol.ErrNone && !alreadyDone {
		for _, id := range req.NewISR {
			// The assignment holds the same brokers as the partition's hosts, maybe reordered.
			if !slices.Contains(p.assignment, id) {
				resp.Error = protocol.ErrInvalidRequest
			} else if !k.replicaUsable(pid, id) {
				resp.Error = protocol.ErrIneligibleReplica
			}
		}
	}
	if resp.Error == protocol.ErrNone {
		if !alreadyDone {
			// The leader's request carries RECOVERED (Partition.makeLeader marked it so; a
			// RECOVERING one is never sent), which the write takes (tryProcessAlterPartition).
			p.recovering = false
			k.writePartition(pid, p.leader, req.NewISR, false, "AlterPartition from the leader")
		}
		resp.Leader, resp.LeaderEpoch, resp.ISR, resp.PartitionEpoch = p.leader, p.leaderEpoch, slices.Clone(p.isr), p.partitionEpoch
	} else {
		t := k.topicOf(pid)
		k.c.Emit(Event{Type: EvAlterPartitionRejected, Broker: protocol.Some(at), Topic: t.name, Partition: protocol.Some(pid - t.first), Name: resp.Error.String(),
			Text: fmt.Sprintf("controller rejected AlterPartition for %s from broker %d (leader epoch %d, partition epoch %d): %s", k.name(pid), req.BrokerID, req.LeaderEpoch, req.PartitionEpoch, resp.Error)})
	}
	if k.usable() && k.broker == at && k.live[req.BrokerID] != 0 && k.live[req.BrokerID] == req.BrokerEpoch {
		// tryProcessAlterPartition ends, past the controller and broker-epoch checks, with
		// sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds, partitionsToAlter.keySet): every
		// partition of the request, its change accepted or not (3.7.0 l.2479). One for the
		// requests the leader sent together, as Kafka's one request (alterGroup).
		k.sendAlterPartitionUpdate(alterGroup{from: m.From + 1, sent: m.Sent})
	}
	k.c.Send(&protocol.Message{Type: protocol.MsgAlterPartitionResponse, From: at, To: m.From, ReplyTo: m.ID, AlterPartitionResponse: resp})
}

// ProcessControlledShutdown moves leadership off a broker that asks to stop (ControlledShutdown).
// at is the broker the request reached.
func (k *Controller) ProcessControlledShutdown(at int32, m *protocol.Message) {
	req := m.ControlledShutdown
	resp := &protocol.ControlledShutdownResponse{}
	if !k.usable() || k.broker != at {
		resp.Error = protocol.ErrNotController
	} else if k.era.BrokerEpochs && k.live[req.BrokerID] == 0 {
		// From 2.2 the epoch check comes first and looks the broker up among the live ones
		// (`controllerContext.liveBrokerIdAndEpochs(id)` in doControlledShutdown, 2.2.0 and
		// 3.7.0): for one not live the map lookup throws NoSuchElementException, which the
		// answer carries as UNKNOWN_SERVER_ERROR.
		resp.Error = protocol.ErrUnknownServerError
	} else if k.era.BrokerEpochs && req.BrokerEpoch < k.live[req.BrokerID] {
		resp.Error = protocol.ErrStaleBrokerEpoch // an older registration of it (KIP-380)
	} else if k.live[req.BrokerID] == 0 {
		// Before 2.2: "Broker id %d does not exist" (BrokerNotAvailableException, shutdownBroker
		// in 0.10.2.0, doControlledShutdown in 2.1).
		resp.Error = protocol.ErrBrokerNotAvailable
	} else {
		resp.Remaining = k.DoControlledShutdown(req.BrokerID)
	}
	k.c.Send(&protocol.Message{Type: protocol.MsgControlledShutdownResp, From: at, To: m.From, ReplyTo: m.ID, ControlledShutdownResp: resp})
}

// DoControlledShutdown is KafkaController.doControlledShutdown (2.1.1, 3.7.0): the
// controlled-shutdown election for the partitions the broker leads (first live ISR member not
// shutting down), sent as one batch; then StopReplica to the broker for the partitions it
// follows; then their OfflineReplica transition, a third batch: out of the ISR, the shrunk ISR to
// the other replicas, and StopReplica to the broker again (ZkReplicaStateMachine's OfflineReplica
// adds one for every replica it moves). It returns the partitions still led. Before 1.1
// (Era.ControlledShutdownBatched false) the partitions go one at a time, a batch each
// (controlledShutdownSerially).
func (k *Controller) DoControlledShutdown(id int32) []protocol.TP {
	k.shuttingDown[id] = true
	if !k.era.ControlledShutdownBatched {
		return k.controlledShutdownSerially(id)
	}
	var remaining []protocol.TP
	var followed []int32
	for _, pid := range k.c.Hosted(id) {
		p := &k.zk.partitions[pid]
		if len(p.assignment) == 1 {
			continue
		}
		if p.leader != id {
			followed = append(followed, pid)
			continue
		}
		if !k.controlledShutdownElect(id, pid) {
			remaining = append(remaining, k.tp(pid))
		}
	}
	k.flushLeaderAndIsr()
	if len(followed) == 0 {
		return remaining
	}
	k.sendStopReplicaBatch(id, followed, false)
	// The OfflineReplica transition of each followed partition: the shrunk ISR goes to the other
	// replicas, not to the broker shutting down (ZkReplicaStateMachine, 3.7.0; ReplicaStateMachine,
	// 0.10.2.2), with doRemoveReplicasFromIsr's rules (removeReplicasFromIsr).
	k.removeReplicasFromIsr(func(pid, b int32) bool { return b == id && slices.Contains(followed, pid) },
		fmt.Sprintf("controlled shutdown of broker %d", id), false)
	k.flushLeaderAndIsr()
	k.sendStopReplicaBatch(id, followed, true)
	return remaining
}

// controlledShutdownElect moves partition pid's leadership away from broker id, shutting down: the
// first replica of the assignment in the ISR, usable and not shutting down, with the ISR less every
// broker shutting down, queued for the live or shutting-down replicas. It reports false, and
// changes nothing, when there is none.
func (k *Controller) controlledShutdownElect(id, pid int32) bool {
	p := &k.zk.partitions[pid]
	var newLeader int32 = -1
	for _, c := range p.assignment {
		if c != id && slices.Contains(p.isr, c) && k.replicaUsable(pid, c) {
			newLeader = c
			break
		}
	}
	if newLeader < 0 {
		return false
	}
	// The new ISR leaves out every broker shutting down, not only this one
	// (Election.leaderForControlledShutdown: isr.filter(!shuttingDownBrokerIds.contains)).
	k.writePartition(pid, newLeader, protocol.SortedMinus(p.isr, k.shuttingDownIDs()), true, fmt.Sprintf("controlled shutdown of broker %d", id))
	// To the live or shutting-down replicas whose log directory works
	// (Election.leaderForControlledShutdown's liveOrShuttingDownReplicas, 3.7.0;
	// ControlledShutdownLeaderSelector's liveAssignedReplicas, 0.10.2.2 and 0.11.0.2).
	k.queueLeaderAndIsrTo(pid, func(h int32) bool { return !k.offline[[2]int32{pid, h}] })
	return true
}

// controlledShutdownSerially is 0.10.2.2's KafkaController.shutdownBroker and 0.11.0.2's (and
// 1.0's) doControlledShutdown: `allPartitionsAndReplicationFactorOnBroker.foreach`, one partition
// of replication factor above 1 at a time (partitionsOnBrokerScalaOrder), each its own batch: a
// partition the broker leads gets the controlled-shutdown election
// (partitionStateMachine.handleStateChanges(Set(tp), OnlinePartition,
// controlledShutdownPartitionLeaderSelector)); one it follows gets a StopReplica, then its
// OfflineReplica transition (the shrunk ISR to the other replicas, StopReplica to the broker
// again). Each LeaderAndIsr waits in its broker's queue for the answer to the one before. It
// returns replicatedPartitionsBrokerLeads: the partitions it still leads.
func (k *Controller) controlledShutdownSerially(id int32) []protocol.TP {
	why := fmt.Sprintf("controlled shutdown of broker %d", id)
	for _, pid := range k.partitionsOnBrokerScalaOrder(id) {
		p := &k.zk.partitions[pid]
		if len(p.assignment) == 1 {
			continue
		}
		if p.leader == id {
			// A StateChangeFailedException (no other live ISR member) is logged by
			// handleStateChanges: the partition stays led by the broker.
			if k.controlledShutdownElect(id, pid) {
				k.flushLeaderAndIsr()
			}
			continue
		}
		tp := []protocol.TP{k.tp(pid)}
		k.sendStopReplica(id, tp)
		k.removeReplicasFromIsr(func(q, b int32) bool { return b == id && q == pid }, why, false)
		k.flushLeaderAndIsr()
		k.sendStopReplica(id, tp)
	}
	var remaining []protocol.TP
	for pid := range int32(len(k.zk.partitions)) {
		if p := &k.zk.partitions[pid]; p.leader == id && len(p.assignment) > 1 {
			remaining = append(remaining, k.tp(pid))
		}
	}
	return remaining
}

// sendStopReplicaBatch queues a batch's StopReplica for broker id's replicas of pids: one request
// (ControllerBrokerRequestBatch.sendRequestsToBrokers), or in the eras whose StopReplicas carry a
// callback (Era.StopReplicaPerPartition, 2.1.1) the group of those without one, which is empty,
// then one request per partition, in the order the batch added them. doControlledShutdown's batch
// walks partitionsFollowedByBroker, a Set in ControllerContext.partitionsOnBroker's order
// (partitionsOnBrokerOrder212); the OfflineReplica batch (offline) walks that Set mapped to
// PartitionAndReplica, which keeps the order up to four elements (Set1..Set4) and from a HashSet
// (the broker hosts five or more partitions) is a HashSet of PartitionAndReplica, iterated by the
// improved case-class hash (MurmurHash3.productHash of TopicPartition.hashCode and the replica) in
// 5-bit chunks, lowest first.
func (k *Controller) sendStopReplicaBatch(id int32, pids []int32, offline bool) {
	if !k.era.StopReplicaPerPartition {
		tps := make([]protocol.TP, len(pids))
		for i, pid := range pids {
			tps[i] = k.tp(pid)
		}
		k.sendStopReplica(id, tps)
		return
	}
	k.sendStopReplica(id, nil) // replicasToGroup: none, but the request is sent all the same
	on := k.partitionsOnBrokerOrder212(id)
	var order []int32
	for _, pid := range on {
		if slices.Contains(pids, pid) {
			order = append(order, pid)
		}
	}
	if offline && len(on) > 4 {
		hash := func(pid int32) uint32 {
			return improve(productHash(k.topicPartitionHash(pid), uint32(id)))
		}
		slices.SortStableFunc(order, func(x, y int32) int { return trieCompare(hash(x), hash(y)) })
	}
	for _, pid := range order {
		k.sendStopReplica(id, []protocol.TP{k.tp(pid)})
	}
}

// sendStopReplica queues a StopReplica for broker id's replicas of tps (deletePartition false)
// on its channel, behind the LeaderAndIsr requests already queued for it
// (ControllerBrokerRequestBatch.sendRequestsToBrokers sends a batch's LeaderAndIsr, then its
// UpdateMetadata, then its StopReplica, all through ControllerChannelManager.sendRequest).
func (k *Controller) sendStopReplica(id int32, tps []protocol.TP) {
	k.enqueue(id, queued{stop: &protocol.StopReplicaRequest{
		ControllerID: k.broker, ControllerEpoch: k.epoch, BrokerEpoch: k.live[id], Partitions: tps}})
}

// ProcessLogDirEvent is the controller's LogDirEventNotification for broker id
// (processLogDirEventNotification, onBrokerLogDirFailure; 2.1.1 and 3.7.0): it does not know which
// replicas went offline, so it sends the broker every partition it hosts (OnlineReplica) and
// learns it from the answer, whose KAFKA_STORAGE_ERROR partitions processLeaderAndIsrResponse
// takes offline, one round trip later.
func (k *Controller) ProcessLogDirEvent(id int32) {
	if !k.usable() {
		return
	}
	k.onlineReplicas([]int32{id})
	k.flushLeaderAndIsr()
}

// processLeaderAndIsrResponse is KafkaController.processLeaderAndIsrResponseReceived (2.1.1
// LeaderAndIsrResponseReceived, 3.7.0): the partitions broker b answered KAFKA_STORAGE_ERROR are
// on an offline log directory, those answered NONE are online (replicasOnOfflineDirs); the
// replicas newly offline go through onReplicasBecomeOffline (elections, then out of the ISR).
func (k *Controller) processLeaderAndIsrResponse(b int32, resp *protocol.LeaderAndIsrResponse) {
	if resp == nil || resp.Error != protocol.ErrNone {
		return
	}
	var lost []int32
	for _, pe := range resp.Partitions {
		pid := k.pidOf(pe.TP)
		if pid < 0 {
			continue
		}
		key := [2]int32{pid, b}
		switch pe.Error {
		case protocol.ErrKafkaStorage:
			if !k.offline[key] {
				k.offline[key] = true
				lost = append(lost, pid)
			}
		case protocol.ErrNone:
			delete(k.offline, key)
		}
	}
	if len(lost) == 0 {
		return
	}
	k.onReplicasBecomeOffline(func(pid, r int32) bool { return r == b && slices.Contains(lost, pid) })
	k.flushLeaderAndIsr()
}

// ElectLeaders is an operator's election of partition pid (kafka-leader-election.sh, with
// kafka-reassign-partitions.sh to choose a leader): preferred (no target), a chosen leader (the
// target moves to the head of the assignment, then a preferred election), or unclean. A failed
// election is an event; one asked while no controller can act waits for one (deferred.go).
func (k *Controller) ElectLeaders(pid int32, target *int32, unclean bool) {
	if !k.usable() {
		k.deferElection(pid, target, unclean) // it waits for a controller (deferred.go)
		return
	}
	p := &k.zk.partitions[pid]
	result := protocol.ErrNone
	switch {
	case target != nil:
		t := *target
		if !slices.Contains(p.assignment, t) {
			result = protocol.ErrInvalidReplicaAssignment
			break
		}
		if p.assignment[0] != t {
			if len(k.reassigning) > 0 {
				// Before 2.4 the reassignment tool refuses while /admin/reassign_partitions exists,
				// whichever partitions it holds ("There is an existing assignment running.",
				// ReassignPartitionsCommand.executeAssignment, 0.10.2.2 and 2.1.1); the operator
				// runs no election either.
				result = protocol.ErrReassignmentInProgress
				break
			}
			p.assignment = append([]int32{t}, sortedMinusKeepOrder(p.assignment, t)...)
			k.onPartitionReassignment(pid)
		}
		if unclean && !slices.Contains(p.isr, t) && k.replicaUsable(pid, t) {
			p.recovering = k.era.LeaderRecovery // KIP-704 (IBP 3.2): RECOVERING
			k.writePartition(pid, t, []int32{t}, true, fmt.Sprintf("operator's unclean election of broker %d", t))
			k.queueOfflineElection(pid)
			break
		}
		result = k.preferredElection(pid, fmt.Sprintf("operator chose broker %d", t), k.era.PreferredReelectsLeader)
	case unclean:
		// Electable when the leader is none or not among the live brokers, which leave out those
		// shutting down (processReplicaLeaderElection's ElectionType.UNCLEAN partition,
		// `!controllerContext.liveBrokerIds.contains(currentLeader)`, 3.7.0): a leader whose
		// controlled shutdown found no other ISR member can be replaced while it retries.
		if p.leader >= 0 && k.live[p.leader] != 0 && !k.shuttingDown[p.leader] {
			result = protocol.ErrElectionNotNeeded
		} else if !k.electOffline(pid, true) {
			result = protocol.ErrEligibleLeadersNotAvailable
		} else {
			k.queueOfflineElection(pid)
		}
	default:
		result = k.preferredElection(pid, "preferred replica election", k.era.PreferredReelectsLeader)
	}
	k.flushLeaderAndIsr()
	if result != protocol.ErrNone {
		t := k.topicOf(pid)
		k.c.Emit(Event{Type: EvElectFailed, Topic: t.name, Partition: protocol.Some(pid - t.first), Name: result.String(),
			Text: fmt.Sprintf("election for %s not done: %s", k.name(pid), result)})
	}
}

func sortedMinusKeepOrder(s []int32, x int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
