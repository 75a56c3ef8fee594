package controller

import "github.com/highwater-sim/highwater/engine/protocol"

// The controller's UpdateMetadata requests (ZooKeeper mode). Kafka's ControllerBrokerRequestBatch
// adds an UpdateMetadata for every partition it adds to a LeaderAndIsr, addressed to every live or
// shutting-down broker (addLeaderAndIsrRequestForBrokers → addUpdateMetadataRequestForBrokers,
// 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0), and sendRequestsToBrokers sends the batch's LeaderAndIsr
// requests, then its UpdateMetadata, then its StopReplica requests, each through the broker's one
// queue (ControllerChannelManager.sendRequest). KafkaController sends some of its own as well
// (sendUpdateMetadataRequest: a batch of one UpdateMetadata): at a failover before the state
// machines start, at a broker's startup before its OnlineReplica LeaderAndIsr, after a broker
// failure that took no leader, at a reassignment's completion, before 2.7 for the brokers'
// ISR-change notifications (isr_change_notification.go) and, in 3.7, after each AlterPartition.
// The request carries counts for the narration and the page, and the live brokers, which a
// broker's metadata cache takes (broker/metadata_cache.go; brokers and clients learn leaders at
// once, engine/shortcuts.go); what else it changes is when the requests queued behind it leave:
// one round trip later.

// umdBatch is the UpdateMetadata a LeaderAndIsr batch collects: the partitions added, counted
// once each. mark holds, per partition, the batch generation that last added it, so adding is
// O(1) and a flush clears nothing (a failover's batch can hold every partition of the cluster).
type umdBatch struct {
	mark  []uint32
	gen   uint32
	count int
}

// addUpdateMetadata adds partition pid to the batch's UpdateMetadata (addLeaderAndIsrRequestForBrokers'
// addUpdateMetadataRequestForBrokers(liveOrShuttingDownBrokerIds, Set(topicPartition))).
func (k *Controller) addUpdateMetadata(pid int32) {
	u := &k.umd
	if u.mark == nil {
		u.mark, u.gen = make([]uint32, len(k.zk.partitions)), 1
	}
	if u.mark[pid] != u.gen {
		u.mark[pid] = u.gen
		u.count++
	}
}

// flushUpdateMetadata sends the batch's UpdateMetadata, after its LeaderAndIsr requests, to every
// live or shutting-down broker (sendRequestsToBrokers; 3.7.0 sendUpdateMetadataRequests).
func (k *Controller) flushUpdateMetadata() {
	u := &k.umd
	if u.count == 0 {
		return
	}
	n := u.count
	u.count = 0
	if u.gen++; u.gen == 0 { // wrapped: forget every mark
		clear(u.mark)
		u.gen = 1
	}
	k.sendUpdateMetadata(nil, n)
}

// sendUpdateMetadata queues an UpdateMetadata carrying partitions partition states for each of
// the brokers to that is live or shutting down (nil: all of them), in broker order.
func (k *Controller) sendUpdateMetadata(to []int32, partitions int) {
	live := k.liveOrShuttingDown() // shared by the batch's requests
	if to == nil {
		to = live
	}
	for _, b := range to {
		if k.live[b] == 0 {
			continue
		}
		k.enqueue(b, queued{umd: &protocol.UpdateMetadataRequest{ControllerID: k.broker, ControllerEpoch: k.epoch,
			BrokerEpoch: k.live[b], Partitions: partitions, LiveBrokers: live}})
	}
}

// liveOrShuttingDown is ControllerContext.liveOrShuttingDownBrokerIds, in broker order: the
// brokers an UpdateMetadata goes to, and the live brokers it names.
func (k *Controller) liveOrShuttingDown() []int32 {
	var live []int32
	for b := range int32(k.brokers) {
		if k.live[b] != 0 {
			live = append(live, b)
		}
	}
	return live
}

// alterGroup names the AlterPartition requests a broker sent together: its id plus one, and
// their send time. Kafka's AlterPartitionManager sends the changes submitted while a request was
// in flight as one request, and tryProcessAlterPartition answers it with one UpdateMetadata for
// all its partitions; the engine's broker sends them as one-partition requests at the same
// instant (broker/isr_change.go), so their UpdateMetadata are one request too wherever it has
// not left yet.
type alterGroup struct {
	from int32
	sent int64
}

// sendAlterPartitionUpdate is tryProcessAlterPartition's UpdateMetadata for one partition of the
// AlterPartition group g, to every live broker: added to the group's UpdateMetadata still
// waiting in a broker's queue, else queued as a new one.
func (k *Controller) sendAlterPartitionUpdate(g alterGroup) {
	live := k.liveOrShuttingDown()
	for _, b := range live {
		if k.channels != nil {
			ch := &k.channels[b]
			if last := len(ch.queue) - 1; last >= 1 && ch.queue[last].umd != nil && ch.queue[last].alter == g {
				ch.queue[last].umd.Partitions++ // not sent yet: the request is the controller's still
				continue
			}
		}
		k.enqueue(b, queued{umd: &protocol.UpdateMetadataRequest{ControllerID: k.broker, ControllerEpoch: k.epoch,
			BrokerEpoch: k.live[b], Partitions: 1, LiveBrokers: live}, alter: g})
	}
}

// allPartitionsUpdate is the partition count of KafkaController.sendUpdateMetadataRequest with no
// partitions named: every partition's state before KAFKA-7537 (2.2), none after.
func (k *Controller) allPartitionsUpdate() int {
	if k.era.UpdateMetadataNamesPartitions {
		return 0
	}
	return len(k.zk.partitions)
}

// UpdateMetadataAnswered takes an answered UpdateMetadata off its queue and sends the next. The
// controller reads nothing else from the answer (3.7.0's UpdateMetadataResponseReceived only
// logs a STALE_BROKER_EPOCH; before 2.2 no callback is registered).
func (k *Controller) UpdateMetadataAnswered(at int32, m, sent *protocol.Message) {
	k.answered(at, m, sent.UpdateMetadata.ControllerEpoch)
}
