package controller

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The controller's side of the ISR-change notification before IBP 2.7 (the broker's side:
// broker/isr_change_notification.go). A leader writes its ISR changes to ZooKeeper itself, and
// its isr-change-propagation task writes the partitions as a sequential znode under
// /isr_change_notification. The active controller's child watch on that path
// (0.10.2.2 IsrChangeNotificationListener.doHandleChildChange, under the controller lock;
// 0.11.0.2 and 2.1.1 the IsrChangeNotification event on the controller's event queue) reads every
// notification there, reads the partitions' leader and ISR from ZooKeeper into its cache
// (updateLeaderAndIsrCache), sends one UpdateMetadata naming those partitions to every live or
// shutting-down broker (processUpdateNotifications: sendUpdateMetadataRequest(
// liveOrShuttingDownBrokerIds, partitions), a batch of its own), and deletes the notifications it
// read. A watch fires once until re-registered by the handler's read, so notifications written
// together are handled by one event: one UpdateMetadata.
//
// The cached ISR steers no controller decision in these eras: the elections and the ISR removals
// re-read the partition's state from ZooKeeper (0.10.2.2 PartitionStateMachine.electLeaderForPartition
// and KafkaController.removeReplicaFromIsr via getLeaderIsrAndEpochForPartition; 2.1.1
// getTopicPartitionStatesRaw in electLeaderForPartitions and doRemoveReplicasFromIsr), and what
// reads the cache (controlled shutdown's partitionsLeadByBroker, the imbalance check) reads its
// leader, which only the controller writes. The engine's controller reads ZooKeeper's state
// throughout, so the cache's update is the UpdateMetadata's content only, which the engine does
// not carry (a partition count).

// PropagateIsrChanges is broker b's write of /isr_change_notification/isr_change_NNN naming pids
// (copied): false, nothing written, when b's ZooKeeper connection is down. The active
// controller's watch fires at once (one agenda item for the writes of one instant).
func (k *Controller) PropagateIsrChanges(b int32, pids []int32) bool {
	if !k.zk.sessions[b].connected {
		return false
	}
	k.zk.zxid++
	k.zk.isrChanges = append(k.zk.isrChanges, slices.Clone(pids))
	k.watchIsrChanges()
	return true
}

// watchIsrChanges has the active controller's watch fire on the notifications waiting, unless it
// fired already and its event has not run.
func (k *Controller) watchIsrChanges() {
	if len(k.zk.isrChanges) == 0 || k.isrWatchFired || !k.usable() {
		return
	}
	k.isrWatchFired = true
	k.c.IsrChangeWatchAt(k.c.Now())
}

// IsrChangeNotification is the controller's handling of the watch (2.1.1
// KafkaController.IsrChangeNotification.process; 0.10.2.2 IsrChangeNotificationListener): one
// UpdateMetadata for every partition named by the notifications waiting, which it deletes.
func (k *Controller) IsrChangeNotification() {
	k.isrWatchFired = false
	if !k.usable() {
		return // `if (!isActive) return`: they wait for the next controller
	}
	notes := k.zk.isrChanges
	k.zk.isrChanges = nil
	var pids []int32
	for _, n := range notes {
		pids = append(pids, n...)
	}
	slices.Sort(pids)
	pids = slices.Compact(pids) // a Set of TopicPartition
	if len(pids) == 0 {
		return
	}
	k.c.Emit(Event{Type: EvISRNotification, Broker: protocol.Some(k.broker),
		Text: fmt.Sprintf("controller %d read %d ISR change notification(s) naming %d partition(s): UpdateMetadata to every live broker", k.broker, len(notes), len(pids))})
	k.sendUpdateMetadata(nil, len(pids))
}
