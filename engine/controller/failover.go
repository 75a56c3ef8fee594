package controller

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// KafkaController's reactions to ZooKeeper's watches: a broker's registration came or went
// (BrokerChange), and a controller took over (onControllerFailover).

// processBrokerChange compares the controller's live brokers with ZooKeeper's registrations and
// handles startups, bounces (a new broker epoch) and deaths, in Kafka's order: the new brokers
// first (onBrokerStartup), then the bounced ones (onBrokerFailure, then onBrokerStartup), then the
// dead ones (onBrokerFailure) (3.7.0 processBrokerChange). Before broker epochs (2.2) the live set
// is the registrations before anything runs (`controllerContext.liveBrokers = curBrokers` in
// 0.10.2.2's BrokerChangeListener and 2.1.1's BrokerChange), so the new brokers' elections already
// leave the dead out; from 2.2 a dead broker leaves the live set only for its own onBrokerFailure.
// The order shows when one change carries a death and a startup or bounce (a controller that was
// cut from ZooKeeper catching up): a bounced ISR member leaves the ISR before the dead leader's
// election, which may then find no live ISR member.
func (k *Controller) processBrokerChange() {
	var dead, born, bounced []int32
	for b := range int32(k.brokers) {
		reg := int64(0)
		if s := k.zk.sessions[b]; s.registered {
			reg = s.epoch
		}
		known := k.live[b]
		switch {
		case known == reg:
		case reg == 0:
			dead = append(dead, b)
		case known == 0:
			born = append(born, b)
		case !k.era.BrokerEpochs:
			// Before broker epochs the controller compares broker ids only (0.10.2.2
			// BrokerChangeListener, 2.1.1 BrokerChange): a death and a new registration it missed
			// (its ZooKeeper connection was down) look like nothing happened, and the restarted
			// broker gets no LeaderAndIsr for its partitions (KAFKA-7235, fixed in 2.2). The
			// controller goes on sending to it as before.
			k.live[b] = reg
		default:
			bounced = append(bounced, b)
		}
	}
	if !k.era.BrokerEpochs {
		for _, b := range dead {
			k.live[b] = 0
		}
	}
	if len(born) > 0 {
		k.brokersStarted(born)
	}
	if len(bounced) > 0 {
		k.onBrokerFailure(bounced)
		k.brokersStarted(bounced)
	}
	if len(dead) > 0 {
		k.onBrokerFailure(dead)
	}
	k.flushLeaderAndIsr()
}

// brokersStarted counts the brokers ids alive with their registrations' epochs, with every log
// directory working, and runs onBrokerStartup.
func (k *Controller) brokersStarted(ids []int32) {
	for _, b := range ids {
		k.live[b] = k.zk.sessions[b].epoch
		for key := range k.offline {
			if key[1] == b {
				delete(k.offline, key)
			}
		}
	}
	k.onBrokerStartup(ids)
	k.flushLeaderAndIsr() // its elections are a batch of their own
}

// onBrokerFailure: the dead brokers leave the live set (and their channels go:
// ControllerChannelManager.removeBroker), and their replicas go offline
// (onReplicasBecomeOffline).
func (k *Controller) onBrokerFailure(dead []int32) {
	for _, b := range dead {
		if k.channels != nil {
			k.channels[b] = channel{} // removeBroker: the old connection's queue goes
		}
		k.live[b] = 0
		k.shuttingDown[b] = false
	}
	k.onReplicasBecomeOffline(func(_, b int32) bool { return slices.Contains(dead, b) })
}

// onBrokerStartup sends the new brokers their partitions, then elects leaders for partitions that
// have none (triggerOnlinePartitionStateChange). Each state machine sends its own batch
// (ControllerBrokerRequestBatch.sendRequestsToBrokers at the end of each handleStateChanges in
// 0.10.2.2 and 3.7.0's onBrokerStartup): a new broker's first LeaderAndIsr carries every partition
// it hosts as it stood before the elections, and an election it takes part in follows as a second
// request, queued behind the first on its channel.
//
// Before all that, it sends an UpdateMetadata of its own to every live broker, every partition's
// state in it (0.10.2.2 l.432, 2.1.1 l.364); from 2.2 (KAFKA-7537, 3.7.0 l.579-583) the brokers
// that were already live get one without partition states, the new ones the full one. So a new
// broker's first LeaderAndIsr waits in its queue for that UpdateMetadata's answer: one round trip.
func (k *Controller) onBrokerStartup(ids []int32) {
	if k.era.UpdateMetadataNamesPartitions {
		var existing []int32
		for b := range int32(k.brokers) {
			if k.live[b] != 0 && !slices.Contains(ids, b) {
				existing = append(existing, b)
			}
		}
		k.sendUpdateMetadata(existing, 0)
		k.sendUpdateMetadata(ids, len(k.zk.partitions))
	} else {
		k.sendUpdateMetadata(nil, len(k.zk.partitions))
	}
	k.onlineReplicas(ids)
	k.flushLeaderAndIsr()
	k.triggerOnlinePartitionStateChange()
	k.flushLeaderAndIsr()
	k.restartReassignments(ids)
}

// onControllerFailover makes broker c the controller with the next controller epoch. It reads the
// state, then starts the replica state machine and then the partition state machine, each sending
// its own LeaderAndIsr batch:
//   - ReplicaStateMachine.startup: every live replica goes OnlineReplica (its broker gets the
//     partition's current state). From 2.3 (KAFKA-3143) the replicas on dead brokers then go
//     OfflineReplica, which takes them out of the ISR with a leader-epoch bump, and leaves the
//     partition without a leader where a dead replica led; before 2.3 nothing happens to them here.
//   - PartitionStateMachine.startup: every partition without an online leader gets the offline
//     election (a second bump in 2.3+). Before 2.3 a dead leader with no live ISR member, and unclean
//     election off, stays recorded as leader; a dead follower of a live leader stays in the ISR until
//     the leader's own ISR shrink.
//
// Before the state machines start it sends every live broker an UpdateMetadata ("brokers need to
// receive the list of live brokers from UpdateMetadataRequest before they can process the
// LeaderAndIsrRequests": 0.10.2.2 l.339, 2.1.1 l.257, 3.7.0 l.314), with every partition's state
// before 2.2 and none from 2.2 (KAFKA-7537), so each broker's first LeaderAndIsr from the new
// controller waits a round trip for its answer.
//
// Then the leader-imbalance check is scheduled 5 s out (scheduleAutoLeaderRebalanceTask(delay = 5)).
func (k *Controller) onControllerFailover(c int32) {
	k.broker = c
	k.epoch++
	k.active = true
	k.incarnation, _ = k.c.Process(c)
	k.shuttingDown = make([]bool, k.brokers)
	k.offline = map[[2]int32]bool{}
	k.channels = make([]channel, k.brokers)
	// A waiting reordering reassignment is dropped: its replica list in ZooKeeper already is the
	// target, which a new controller takes as done (0.10.2.2 initializePartitionReassignment's
	// `successful`; 2.1.1 maybeTriggerPartitionReassignment: "already assigned ... Ignoring").
	k.reassigning = nil
	if k.era.FailoverDeletesIsrChangeNotifications {
		k.zk.isrChanges = nil // "Deleting isr change notifications", before reading the state
	}
	k.c.Emit(Event{Type: EvController, Broker: protocol.Some(c), Epoch: protocol.Some(int64(k.epoch)),
		Text: fmt.Sprintf("broker %d became controller in controller epoch %d", c, k.epoch)})
	k.live = make([]int64, k.brokers)
	var live []int32
	for i := range int32(k.brokers) {
		if s := k.zk.sessions[i]; s.registered {
			k.live[i] = s.epoch
			live = append(live, i)
		}
	}
	k.sendUpdateMetadata(live, k.allPartitionsUpdate())
	k.onlineReplicas(live)
	k.flushLeaderAndIsr()
	if k.era.FailoverOfflinesDeadReplicas {
		k.removeReplicasFromIsr(func(_, b int32) bool { return k.live[b] == 0 }, "", true)
		k.flushLeaderAndIsr()
	}
	k.initializePartitionState()
	k.triggerOnlinePartitionStateChange()
	k.flushLeaderAndIsr()
	k.runDeferredElections(true) // the operators' elections that waited for a controller
	k.scheduleAutoRebalance(firstRebalanceDelayMs)
}
