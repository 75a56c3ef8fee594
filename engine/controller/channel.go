package controller

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The ControllerChannelManager: the controller's LeaderAndIsr batches and its per-broker request
// queues.

// channel is one broker's queue. Kafka's RequestSendThread (ControllerChannelManager, 0.10.2.2 to
// 3.7.0) takes one request off the broker's queue, sends it and waits for its response; a failed
// send is retried every 100 ms (backoff) while the thread runs, that is until removeBroker stops
// it. LeaderAndIsr, UpdateMetadata and StopReplica share the queue, so requests are never lost and
// never overtake each other, whatever their kind.
type channel struct {
	queue    []queued
	inflight uint64 // the message of queue[0] in flight, 0 for none
}

// queued is one request on a channel: a LeaderAndIsr, an UpdateMetadata or a StopReplica.
type queued struct {
	lai  *protocol.LeaderAndIsrRequest
	umd  *protocol.UpdateMetadataRequest
	stop *protocol.StopReplicaRequest
	// alter is the AlterPartition group an UpdateMetadata answers (update_metadata.go
	// alterGroup); the zero value for any other request.
	alter alterGroup
}

// brokerEpoch is the registration of the broker the request was built for.
func (q queued) brokerEpoch() int64 {
	switch {
	case q.lai != nil:
		return q.lai.BrokerEpoch
	case q.umd != nil:
		return q.umd.BrokerEpoch
	}
	return q.stop.BrokerEpoch
}

// message is the request on the wire, from the controller's broker to b.
func (q queued) message(from, to int32) *protocol.Message {
	switch {
	case q.lai != nil:
		return &protocol.Message{Type: protocol.MsgLeaderAndIsr, From: from, To: to, LeaderAndIsr: q.lai}
	case q.umd != nil:
		return &protocol.Message{Type: protocol.MsgUpdateMetadata, From: from, To: to, UpdateMetadata: q.umd}
	}
	return &protocol.Message{Type: protocol.MsgStopReplica, From: from, To: to, StopReplica: q.stop}
}

// retryMs is the controller's backoff before re-sending a failed request.
const retryMs = 100

// LeaderAndIsrFor builds a LeaderAndIsr request for broker b with the current state of pids. It
// changes nothing; the request is the controller's to send (or a test's to apply).
func (k *Controller) LeaderAndIsrFor(b int32, pids []int32) *protocol.LeaderAndIsrRequest {
	req := &protocol.LeaderAndIsrRequest{Partitions: make([]protocol.LeaderAndIsrState, 0, len(pids))} // never nil
	k.fillLeaderAndIsr(req, b, pids, false)
	return req
}

// fillLeaderAndIsr makes req the LeaderAndIsr for broker b with the current state of pids,
// reusing req's partition array. Unless shared, every partition's ISR and replica list is a copy
// (a message holds no node's state), cut from one array: a LeaderAndIsr for a whole broker has
// thousands of partitions. Shared, they are the znodes' own (Start: a request applied at once
// and dropped, which never travels).
func (k *Controller) fillLeaderAndIsr(req *protocol.LeaderAndIsrRequest, b int32, pids []int32, shared bool) {
	// Every field of each partition's entry is written below, so the reused array is not cleared.
	*req = protocol.LeaderAndIsrRequest{ControllerID: k.broker, ControllerEpoch: k.epoch,
		BrokerEpoch: k.zk.sessions[b].epoch, Partitions: slices.Grow(req.Partitions[:0], len(pids))[:len(pids)]}
	// The live leaders, marked by broker: a map written per partition cost more than the rest
	// of the request.
	leaders := make([]bool, k.brokers)
	var slab []int32
	if !shared {
		n := 0
		for _, pid := range pids {
			p := &k.zk.partitions[pid]
			n += len(p.isr) + len(p.assignment)
		}
		slab = make([]int32, 0, n)
	}
	cut := func(s []int32) []int32 {
		if s == nil {
			return s // as slices.Clone: a nil ISR stays nil on the wire
		}
		at := len(slab)
		slab = append(slab, s...)
		return slab[at:len(slab):len(slab)]
	}
	var t *topic // pid's, kept while the pids stay in it (they are usually in order)
	for i, pid := range pids {
		if t == nil || pid < t.first || pid >= t.first+t.count {
			t = k.topicOf(pid)
		}
		p := &k.zk.partitions[pid]
		isr, reps := p.isr, p.assignment
		if !shared {
			isr, reps = cut(isr), cut(reps)
		}
		ps := &req.Partitions[i]
		ps.TP = protocol.TP{Topic: t.name, Partition: pid - t.first}
		ps.Leader, ps.LeaderEpoch, ps.PartitionEpoch = p.leader, p.leaderEpoch, p.partitionEpoch
		ps.ISR, ps.Replicas = isr, reps
		if p.leader >= 0 && k.live[p.leader] != 0 {
			leaders[p.leader] = true
		}
	}
	for l, live := range leaders {
		if live {
			req.LiveLeaders = append(req.LiveLeaders, int32(l)) // in broker order; nil for none
		}
	}
}

// queueLeaderAndIsr adds partition pid to the next LeaderAndIsr of every live broker hosting it
// (the preferred election's recipients: Election.leaderForPreferredReplica answers the whole
// assignment, sendRequestsToBrokers keeps the live and shutting-down brokers).
func (k *Controller) queueLeaderAndIsr(pid int32) { k.queueLeaderAndIsrTo(pid, nil) }

// queueLeaderAndIsrTo is queueLeaderAndIsr for the live brokers hosting pid that to accepts (nil:
// all), the recipients of a state change that names them (3.7.0 Election.scala's
// ElectionResult.liveReplicas; ReplicaStateMachine's OfflineReplica sends to the assignment
// without the replica going offline).
func (k *Controller) queueLeaderAndIsrTo(pid int32, to func(b int32) bool) {
	k.addUpdateMetadata(pid) // whether or not any recipient is live
	for _, h := range k.zk.partitions[pid].assignment {
		if k.live[h] == 0 || (to != nil && !to(h)) {
			continue
		}
		if k.batch == nil {
			k.batch = map[int32][]int32{}
		}
		// A partition queued twice is sent once: flushLeaderAndIsr sorts and compacts (a
		// Contains here made a controller failover quadratic in a broker's partitions).
		k.batch[h] = append(k.batch[h], pid)
	}
}

// flushLeaderAndIsr sends the queued LeaderAndIsr requests, one per broker, in broker order, then
// the batch's UpdateMetadata to every live broker (sendRequestsToBrokers' order).
func (k *Controller) flushLeaderAndIsr() {
	for _, b := range sortedKeys(k.batch) {
		pids := k.batch[b]
		slices.Sort(pids)
		k.sendLeaderAndIsr(b, slices.Compact(pids))
	}
	k.batch = nil
	k.flushUpdateMetadata()
}

// sendLeaderAndIsr queues a LeaderAndIsr with the current state of pids for broker b.
func (k *Controller) sendLeaderAndIsr(b int32, pids []int32) {
	k.enqueue(b, queued{lai: k.LeaderAndIsrFor(b, pids)})
}

// enqueue adds q to broker b's queue (ControllerChannelManager.sendRequest) and sends it if
// nothing is ahead of it.
func (k *Controller) enqueue(b int32, q queued) {
	if k.channels == nil {
		k.channels = make([]channel, k.brokers)
	}
	ch := &k.channels[b]
	ch.queue = append(ch.queue, q)
	k.pumpChannel(b)
}

// pumpChannel sends the head of broker b's queue unless one is in flight.
func (k *Controller) pumpChannel(b int32) {
	ch := &k.channels[b]
	if ch.inflight != 0 || len(ch.queue) == 0 {
		return
	}
	// Only a controller that is gone (resigned, or its broker died) drops its queues. One that
	// merely lost its ZooKeeper connection is still the controller until its session expires, and
	// its request threads keep sending (a cut link holds what they send).
	if !k.active || !k.alive() {
		ch.queue = nil
		return
	}
	// Requests for an earlier registration of the broker are dropped.
	for len(ch.queue) > 0 && ch.queue[0].brokerEpoch() != k.live[b] {
		ch.queue = ch.queue[1:]
	}
	if len(ch.queue) == 0 {
		return
	}
	m := ch.queue[0].message(k.broker, b)
	k.c.Send(m)
	ch.inflight = m.ID
}

// LeaderAndIsrAnswered takes the answered request off its queue and sends the next. at is the
// broker the answer reached (sent, the request it answers, names the controller epoch).
func (k *Controller) LeaderAndIsrAnswered(at int32, m, sent *protocol.Message) {
	if !k.answered(at, m, sent.LeaderAndIsr.ControllerEpoch) {
		return
	}
	if k.usable() {
		k.processLeaderAndIsrResponse(m.From, m.LeaderAndIsrResponse)
	}
}

// StopReplicaAnswered takes an answered StopReplica off its queue and sends the next. The
// controller reads nothing else from the answer: ControllerChannelManager's StopReplica callback
// acts only on the partitions of a topic being deleted (TopicDeletionStopReplicaResponseReceived,
// 2.1.1 and 3.7.0; 0.10.2.2 registers a callback only for deletePartition=true), and the
// engine's StopReplica never deletes.
func (k *Controller) StopReplicaAnswered(at int32, m, sent *protocol.Message) {
	k.answered(at, m, sent.StopReplica.ControllerEpoch)
}

// answered takes the head of the answering broker's queue off if m answers it, sent in controller
// epoch epoch by this controller, and sends the next request. It reports whether it did.
func (k *Controller) answered(at int32, m *protocol.Message, epoch int32) bool {
	if !k.active || k.broker != at || epoch != k.epoch || k.channels == nil {
		return false
	}
	ch := &k.channels[m.From]
	if ch.inflight != m.ReplyTo {
		return false
	}
	ch.inflight = 0
	ch.queue = ch.queue[1:]
	k.pumpChannel(m.From)
	return true
}

// ChannelRequestFailed retries a LeaderAndIsr, UpdateMetadata or StopReplica that got no answer
// after retryMs, while its broker keeps the same registration (RequestSendThread.doWork's backoff;
// removeBroker ends it).
func (k *Controller) ChannelRequestFailed(req *protocol.Message) {
	epoch := int32(0)
	switch {
	case req.LeaderAndIsr != nil:
		epoch = req.LeaderAndIsr.ControllerEpoch
	case req.UpdateMetadata != nil:
		epoch = req.UpdateMetadata.ControllerEpoch
	case req.StopReplica != nil:
		epoch = req.StopReplica.ControllerEpoch
	default:
		return
	}
	if epoch != k.epoch || k.channels == nil || k.channels[req.To].inflight != req.ID {
		return
	}
	k.channels[req.To].inflight = 0
	k.c.RetryAt(k.c.Now()+retryMs, req.To, k.epoch)
}

// Retry is the retry timer of broker b's queue, set in controller epoch epoch.
func (k *Controller) Retry(b int32, epoch int32) {
	if k.epoch != epoch || k.channels == nil {
		return
	}
	k.pumpChannel(b)
}
