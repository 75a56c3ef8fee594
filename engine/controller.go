package engine

import (
	"fmt"
	"slices"
)

// The ZooKeeper-mode controller (KafkaController, PartitionStateMachine, ReplicaStateMachine).
// It runs on one broker. Its state is ZooKeeper's (the partition znodes live in partition), read
// and written without delay; what it tells brokers travels as LeaderAndIsr over the network from
// its broker. Simplifications: ZooKeeper itself never fails and answers at once; UpdateMetadata is
// not modelled (brokers and clients learn leaders and live brokers at once).
type controller struct {
	broker int32
	epoch  int32
	active bool
	// live is the broker epoch of each broker the controller counts as alive (0: not alive).
	live         []int64
	shuttingDown []bool
	// offline marks replicas whose log directory failed (pid, broker).
	offline map[[2]int32]bool
	// partitionOffline is the OfflinePartition state of each partition (PartitionStateMachine):
	// its leader was lost, and no election has succeeded since. It is usually the same as having no
	// leader, but before 2.3 a new controller can leave a dead broker recorded as the leader of an
	// offline partition.
	partitionOffline []bool
	// batch collects LeaderAndIsr partitions per target broker during one controller action.
	batch map[int32][]int32
	// incarnation is its broker's process when it took over: the controller lives in that process.
	incarnation uint64
	// channels are the controller's per-broker request queues (ControllerChannelManager): one
	// LeaderAndIsr in flight per broker, the rest queued behind it in order.
	channels []ctrlChannel
}

// ctrlChannel is one broker's queue. Kafka's RequestSendThread sends one request at a time and
// retries a failed one every 100 ms until it succeeds or the broker is gone, so requests are
// never lost and never overtake each other.
type ctrlChannel struct {
	queue    []*LeaderAndIsrRequest
	inflight uint64 // the message of queue[0] in flight, 0 for none
}

// controllerRetryMs is the controller's backoff before re-sending a failed request.
const controllerRetryMs = 100

// ctrlUsable reports whether the controller can act: its broker runs and reaches ZooKeeper.
func (e *Engine) ctrlUsable() bool {
	if !e.ctrl.active {
		return false
	}
	s := e.sessions[e.ctrl.broker]
	return s.registered && s.connected && e.brokers[e.ctrl.broker].state != brokerDead
}

// replicaUsable: the broker is alive and not shutting down per the controller, and the replica's
// log directory works (liveBrokerIds in ControllerContext excludes shutting-down brokers).
func (e *Engine) replicaUsable(pid, b int32) bool {
	return e.ctrl.live[b] != 0 && !e.ctrl.shuttingDown[b] && !e.ctrl.offline[[2]int32{pid, b}]
}

// leaderAndIsrFor builds a LeaderAndIsr request for broker b with the current state of pids.
func (e *Engine) leaderAndIsrFor(b int32, pids []int32) *LeaderAndIsrRequest {
	req := &LeaderAndIsrRequest{ControllerID: e.ctrl.broker, ControllerEpoch: e.ctrl.epoch,
		BrokerEpoch: e.sessions[b].epoch}
	leaders := map[int32]bool{}
	req.Partitions = make([]LeaderAndIsrState, 0, len(pids))
	// Every partition's ISR and replica list is a copy (a message holds no node's state), cut
	// from one array: a LeaderAndIsr for a whole broker has thousands of partitions.
	n := 0
	for _, pid := range pids {
		p := e.partitions[pid]
		n += len(p.isr) + len(p.assignment)
	}
	slab := make([]int32, 0, n)
	cut := func(s []int32) []int32 {
		if s == nil {
			return nil // as slices.Clone: a nil ISR stays nil on the wire
		}
		at := len(slab)
		slab = append(slab, s...)
		return slab[at:len(slab):len(slab)]
	}
	for _, pid := range pids {
		p := e.partitions[pid]
		req.Partitions = append(req.Partitions, LeaderAndIsrState{TP: p.tp(), Leader: p.leader,
			LeaderEpoch: p.leaderEpoch, ISR: cut(p.isr), PartitionEpoch: p.partitionEpoch,
			Replicas: cut(p.assignment)})
		if p.leader >= 0 && e.ctrl.live[p.leader] != 0 {
			leaders[p.leader] = true
		}
	}
	req.LiveLeaders = sortedKeys(leaders)
	return req
}

// queueLeaderAndIsr adds p to the next LeaderAndIsr of every live broker hosting it.
func (e *Engine) queueLeaderAndIsr(p *partition) {
	for _, h := range p.hosts {
		if e.ctrl.live[h] == 0 {
			continue
		}
		if e.ctrl.batch == nil {
			e.ctrl.batch = map[int32][]int32{}
		}
		// A partition queued twice is sent once: flushLeaderAndIsr sorts and compacts (a
		// Contains here made a controller failover quadratic in a broker's partitions).
		e.ctrl.batch[h] = append(e.ctrl.batch[h], p.pid)
	}
}

// flushLeaderAndIsr sends the queued LeaderAndIsr requests, one per broker, in broker order.
func (e *Engine) flushLeaderAndIsr() {
	for _, b := range sortedKeys(e.ctrl.batch) {
		pids := e.ctrl.batch[b]
		slices.Sort(pids)
		e.sendLeaderAndIsr(b, slices.Compact(pids))
	}
	e.ctrl.batch = nil
}

// sendLeaderAndIsr queues a LeaderAndIsr with the current state of pids for broker b.
func (e *Engine) sendLeaderAndIsr(b int32, pids []int32) {
	if e.ctrl.channels == nil {
		e.ctrl.channels = make([]ctrlChannel, len(e.brokers))
	}
	ch := &e.ctrl.channels[b]
	ch.queue = append(ch.queue, e.leaderAndIsrFor(b, pids))
	e.pumpChannel(b)
}

// pumpChannel sends the head of broker b's queue unless one is in flight.
func (e *Engine) pumpChannel(b int32) {
	ch := &e.ctrl.channels[b]
	if ch.inflight != 0 || len(ch.queue) == 0 {
		return
	}
	// Only a controller that is gone (resigned, or its broker died) drops its queues. One that
	// merely lost its ZooKeeper connection is still the controller until its session expires, and
	// its request threads keep sending (a cut link holds what they send).
	if !e.ctrl.active || e.brokers[e.ctrl.broker].state == brokerDead {
		ch.queue = nil
		return
	}
	// Requests for an earlier registration of the broker are dropped.
	for len(ch.queue) > 0 && ch.queue[0].BrokerEpoch != e.ctrl.live[b] {
		ch.queue = ch.queue[1:]
	}
	if len(ch.queue) == 0 {
		return
	}
	m := &Message{Type: MsgLeaderAndIsr, From: e.ctrl.broker, To: b, LeaderAndIsr: ch.queue[0]}
	e.send(m)
	ch.inflight = m.ID
}

// handleLeaderAndIsrResponse takes the answered request off its queue and sends the next.
func (e *Engine) handleLeaderAndIsrResponse(b *broker, m, sent *Message) {
	req := sent.LeaderAndIsr
	if !e.ctrl.active || e.ctrl.broker != b.id || req.ControllerEpoch != e.ctrl.epoch || e.ctrl.channels == nil {
		return
	}
	ch := &e.ctrl.channels[m.From]
	if ch.inflight != m.ReplyTo {
		return
	}
	ch.inflight = 0
	ch.queue = ch.queue[1:]
	e.pumpChannel(m.From)
}

// controllerRequestFailed retries a LeaderAndIsr that got no answer after controllerRetryMs,
// while its broker keeps the same registration.
func (e *Engine) controllerRequestFailed(req *Message) {
	l := req.LeaderAndIsr
	if l.ControllerEpoch != e.ctrl.epoch || e.ctrl.channels == nil || e.ctrl.channels[req.To].inflight != req.ID {
		return
	}
	e.ctrl.channels[req.To].inflight = 0
	e.schedule(controllerRetry{req.To, e.ctrl.epoch}.due(e.now + controllerRetryMs))
}

func (e *Engine) controllerRetry(b int32, epoch int32) {
	if e.ctrl.epoch != epoch || e.ctrl.channels == nil {
		return
	}
	e.pumpChannel(b)
}

// writePartition is the controller's ZooKeeper write of a new leader and ISR. A new leader (or
// none) bumps the leader epoch, as does a controller-driven ISR removal; every write bumps the
// partition epoch (the znode version).
func (e *Engine) writePartition(p *partition, leader int32, isr []int32, bumpLeaderEpoch bool, why string) {
	oldLeader, oldEpoch, oldISR := p.leader, p.leaderEpoch, p.isr
	p.leader = leader
	p.isr = sortedCopy(isr)
	if bumpLeaderEpoch {
		p.leaderEpoch++
	}
	p.partitionEpoch++
	wasOffline := false
	if e.ctrl.partitionOffline != nil {
		wasOffline = e.ctrl.partitionOffline[p.pid]
		e.ctrl.partitionOffline[p.pid] = leader < 0
	}
	e.notePartitionWritten(p, oldEpoch)
	elected := oldLeader != leader || (wasOffline && leader >= 0)
	if elected {
		e.emit(Event{Type: EvLeaderChange, Topic: p.topic, Partition: Some(p.index), From: Some(int64(oldLeader)),
			To: Some(int64(leader)), Epoch: Some(int64(p.leaderEpoch)), ISR: p.isr, Reason: why,
			Text: fmt.Sprintf("controller: %s leader %s → %s in leader epoch %d (%s)", p.name(), leaderName(oldLeader), leaderName(leader), p.leaderEpoch, why)})
	}
	if !slices.Equal(oldISR, p.isr) {
		e.noteISRChanged(p, oldISR)
		e.emit(Event{Type: EvISRChange, Topic: p.topic, Partition: Some(p.index), OldISR: oldISR, ISR: p.isr,
			Epoch: Some(int64(p.leaderEpoch)), Reason: why,
			Text: fmt.Sprintf("controller: %s ISR %v → %v (%s)", p.name(), oldISR, p.isr, why)})
	}
	if elected {
		// A new leader, or an offline partition's recorded leader elected again (before 2.3 a dead
		// leader can stay recorded while its partition is offline).
		e.noteElected(p)
	}
}

func leaderName(b int32) string {
	if b < 0 {
		return "none"
	}
	return fmt.Sprint(b)
}

// electOffline is the offline election (OfflinePartitionLeaderElection): the first live ISR
// member in assignment order; else, with unclean election, the first live replica.
func (e *Engine) electOffline(p *partition, allowUnclean bool) bool {
	var liveISR []int32
	for _, b := range p.isr {
		if e.replicaUsable(p.pid, b) {
			liveISR = append(liveISR, b)
		}
	}
	for _, b := range p.assignment {
		if slices.Contains(liveISR, b) {
			p.recovering = false
			e.writePartition(p, b, liveISR, true, "offline partition: clean election")
			return true
		}
	}
	if !allowUnclean {
		return false
	}
	for _, b := range p.assignment {
		if e.replicaUsable(p.pid, b) {
			p.recovering = true
			e.writePartition(p, b, []int32{b}, true, "unclean leader election: no live ISR member")
			return true
		}
	}
	return false
}

// onReplicasOffline is onReplicasBecomeOffline: the partitions whose leader is lost go offline and
// every offline partition gets the offline election (triggerOnlinePartitionStateChange), then the
// lost replicas move to OfflineReplica (removed from the ISRs). Electing first is Kafka's order.
func (e *Engine) onReplicasOffline(lost func(pid, b int32) bool) {
	for _, p := range e.partitions {
		if p.leader >= 0 && lost(p.pid, p.leader) {
			e.ctrl.partitionOffline[p.pid] = true
		}
	}
	e.electOfflinePartitions()
	e.removeReplicasFromIsr(lost)
}

// removeReplicasFromIsr is the OfflineReplica transition for every lost replica, in broker order
// (Kafka groups the replicas by broker in a hash map; the order only matters when a partition's
// whole ISR is lost at once). doRemoveReplicasFromIsr: a lost replica in the ISR leaves it, and the
// leader becomes none if it led; the last ISR member stays (from 1.1, KAFKA-5642; before that only
// with unclean election off, era.keepLastIsrMember); each write bumps the leader epoch
// (LeaderAndIsr.newLeaderAndIsr).
func (e *Engine) removeReplicasFromIsr(lost func(pid, b int32) bool) {
	for b := range int32(len(e.brokers)) {
		for _, pid := range e.brokers[b].hosted {
			p := e.partitions[pid]
			if !lost(pid, b) || !slices.Contains(p.isr, b) {
				continue
			}
			leader := p.leader
			if leader == b {
				leader = -1
			}
			isr := sortedMinus(p.isr, []int32{b})
			if len(isr) == 0 && (e.era.keepLastIsrMember || !e.cfg.UncleanLeaderElectionEnable) {
				isr = p.isr // the last ISR member stays ("last replica standing")
			}
			e.writePartition(p, leader, isr, true, fmt.Sprintf("replica %d offline", b))
			e.queueLeaderAndIsr(p)
		}
	}
}

// onBrokerStartup sends the new brokers their partitions, then elects leaders for partitions that
// have none (triggerOnlinePartitionStateChange).
func (e *Engine) onBrokerStartup(ids []int32) {
	e.queueHosted(ids)
	e.electOfflinePartitions()
}

// queueHosted adds every partition hosted by the brokers ids to their next LeaderAndIsr, with its
// current state (the OnlineReplica transition).
func (e *Engine) queueHosted(ids []int32) {
	for _, b := range ids {
		if hosted := e.brokers[b].hosted; len(hosted) > 0 {
			if e.ctrl.batch == nil {
				e.ctrl.batch = map[int32][]int32{}
			}
			e.ctrl.batch[b] = append(e.ctrl.batch[b], hosted...)
		}
	}
}

// electOfflinePartitions is triggerOnlinePartitionStateChange: the offline election for every
// partition in OfflinePartition state (controller.partitionOffline).
func (e *Engine) electOfflinePartitions() {
	for _, p := range e.partitions {
		if e.ctrl.partitionOffline[p.pid] && e.electOffline(p, e.cfg.UncleanLeaderElectionEnable) {
			e.queueLeaderAndIsr(p)
		}
	}
}

// initializePartitionState is PartitionStateMachine.initializePartitionState at a controller's
// start: a partition is offline when its recorded leader's replica is not online.
func (e *Engine) initializePartitionState() {
	e.ctrl.partitionOffline = make([]bool, len(e.partitions))
	for _, p := range e.partitions {
		e.ctrl.partitionOffline[p.pid] = p.leader < 0 || !e.replicaOnline(p.pid, p.leader)
	}
}

// replicaOnline is ControllerContext.isReplicaOnline with the shutting-down brokers included: the
// broker is registered and the replica's log directory works.
func (e *Engine) replicaOnline(pid, b int32) bool {
	return e.ctrl.live[b] != 0 && !e.ctrl.offline[[2]int32{pid, b}]
}

// reconcileBrokers compares the controller's live brokers with ZooKeeper's registrations and
// handles deaths, bounces (a new broker epoch) and startups (BrokerChange handling).
func (e *Engine) reconcileBrokers() {
	var dead, born []int32
	for i := range e.brokers {
		b := int32(i)
		reg := int64(0)
		if s := e.sessions[b]; s.registered {
			reg = s.epoch
		}
		known := e.ctrl.live[b]
		switch {
		case known == reg:
		case reg == 0:
			dead = append(dead, b)
		case known == 0:
			born = append(born, b)
		default:
			dead = append(dead, b)
			born = append(born, b)
		}
	}
	if len(dead) > 0 {
		for _, b := range dead {
			if e.ctrl.channels != nil {
				e.ctrl.channels[b] = ctrlChannel{} // removeBroker: the old connection's queue goes
			}
			e.ctrl.live[b] = 0
			e.ctrl.shuttingDown[b] = false
		}
		e.onReplicasOffline(func(_, b int32) bool { return slices.Contains(dead, b) })
	}
	if len(born) > 0 {
		for _, b := range born {
			e.ctrl.live[b] = e.sessions[b].epoch
			for k := range e.ctrl.offline {
				if k[1] == b {
					delete(e.ctrl.offline, k)
				}
			}
		}
		e.onBrokerStartup(born)
	}
	e.flushLeaderAndIsr()
}

// controllerFailover makes broker c the controller with the next controller epoch
// (onControllerFailover). It reads the state, then starts the replica state machine and then the
// partition state machine, each sending its own LeaderAndIsr batch:
//   - ReplicaStateMachine.startup: every live replica goes OnlineReplica (its broker gets the
//     partition's current state). From 2.3 (KAFKA-3143) the replicas on dead brokers then go
//     OfflineReplica, which takes them out of the ISR with a leader-epoch bump, and leaves the
//     partition without a leader where a dead replica led; before 2.3 nothing happens to them here.
//   - PartitionStateMachine.startup: every partition without an online leader gets the offline
//     election (a second bump in 2.3+). Before 2.3 a dead leader with no live ISR member, and unclean
//     election off, stays recorded as leader; a dead follower of a live leader stays in the ISR until
//     the leader's own ISR shrink.
//
// Then the leader-imbalance check is scheduled 5 s out (scheduleAutoLeaderRebalanceTask(delay = 5)).
func (e *Engine) controllerFailover(c int32) {
	e.ctrl.broker = c
	e.ctrl.epoch++
	e.ctrl.active = true
	e.ctrl.incarnation = e.brokers[c].incarnation
	e.ctrl.shuttingDown = make([]bool, len(e.brokers))
	e.ctrl.offline = map[[2]int32]bool{}
	e.ctrl.channels = make([]ctrlChannel, len(e.brokers))
	e.emit(Event{Type: EvController, Broker: Some(c), Epoch: Some(int64(e.ctrl.epoch)),
		Text: fmt.Sprintf("broker %d became controller in controller epoch %d", c, e.ctrl.epoch)})
	e.ctrl.live = make([]int64, len(e.brokers))
	var live []int32
	for i := range e.brokers {
		if s := e.sessions[i]; s.registered {
			e.ctrl.live[i] = s.epoch
			live = append(live, int32(i))
		}
	}
	e.queueHosted(live)
	e.flushLeaderAndIsr()
	if e.era.failoverOfflinesDeadReplicas {
		e.removeReplicasFromIsr(func(_, b int32) bool { return e.ctrl.live[b] == 0 })
		e.flushLeaderAndIsr()
	}
	e.initializePartitionState()
	e.electOfflinePartitions()
	e.flushLeaderAndIsr()
	e.scheduleAutoRebalance(firstRebalanceDelayMs)
}

// handleAlterPartition is the controller's AlterPartition (AlterIsr) handling in ZooKeeper mode.
func (e *Engine) handleAlterPartition(b *broker, m *Message) {
	req := m.AlterPartition
	p := e.partitions[e.pidOf(req.TP)]
	resp := &AlterPartitionResponse{TP: req.TP, Leader: -1, LeaderEpoch: -1, PartitionEpoch: -1}
	alreadyDone := false
	switch {
	case !e.ctrlUsable() || e.ctrl.broker != b.id:
		resp.Error = ErrNotController
	case e.ctrl.live[req.BrokerID] == 0 || e.ctrl.live[req.BrokerID] != req.BrokerEpoch:
		resp.Error = ErrStaleBrokerEpoch
	case req.PartitionEpoch > p.partitionEpoch || req.LeaderEpoch > p.leaderEpoch:
		// The leader knows a newer state than this controller wrote, so this controller is
		// likely no longer the active one (KafkaController.tryProcessAlterPartition).
		resp.Error = ErrNotController
	case req.LeaderEpoch < p.leaderEpoch:
		resp.Error = ErrFencedLeaderEpoch
	case req.BrokerID != p.leader:
		resp.Error = ErrInvalidRequest
	case req.LeaderEpoch == p.leaderEpoch && slices.Equal(sortedCopy(req.NewISR), p.isr):
		// NB: already the state asked for, so a retry whose answer was lost: KafkaController
		// answers with the current state before fencing by partition epoch
		// (equalsAllowStalePartitionEpoch), which keeps AlterPartition idempotent.
		alreadyDone = true
	case req.PartitionEpoch < p.partitionEpoch:
		resp.Error = ErrInvalidUpdateVersion
	case !slices.Contains(req.NewISR, p.leader):
		resp.Error = ErrInvalidRequest
	}
	if resp.Error == ErrNone && !alreadyDone {
		for _, id := range req.NewISR {
			if !slices.Contains(p.hosts, id) {
				resp.Error = ErrInvalidRequest
			} else if !e.replicaUsable(p.pid, id) {
				resp.Error = ErrIneligibleReplica
			}
		}
	}
	if resp.Error == ErrNone {
		if !alreadyDone {
			e.writePartition(p, p.leader, req.NewISR, false, "AlterPartition from the leader")
		}
		resp.Leader, resp.LeaderEpoch, resp.ISR, resp.PartitionEpoch = p.leader, p.leaderEpoch, slices.Clone(p.isr), p.partitionEpoch
	} else {
		e.emit(Event{Type: EvAlterPartitionRejected, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index), Name: resp.Error.String(),
			Text: fmt.Sprintf("controller rejected AlterPartition for %s from broker %d (leader epoch %d, partition epoch %d): %s", p.name(), req.BrokerID, req.LeaderEpoch, req.PartitionEpoch, resp.Error)})
	}
	e.send(&Message{Type: MsgAlterPartitionResponse, From: b.id, To: m.From, ReplyTo: m.ID, AlterPartitionResponse: resp})
}

// handleControlledShutdown moves leadership off a broker that asks to stop (ControlledShutdown).
func (e *Engine) handleControlledShutdown(b *broker, m *Message) {
	req := m.ControlledShutdown
	resp := &ControlledShutdownResponse{}
	if !e.ctrlUsable() || e.ctrl.broker != b.id {
		resp.Error = ErrNotController
	} else if e.ctrl.live[req.BrokerID] == 0 || (e.era.brokerEpochs && e.ctrl.live[req.BrokerID] != req.BrokerEpoch) {
		// A broker the controller does not count as live (BROKER_NOT_AVAILABLE before KIP-380),
		// or an older registration of it (STALE_BROKER_EPOCH, 2.2+).
		resp.Error = ErrStaleBrokerEpoch
	} else {
		resp.Remaining = e.controlledShutdown(req.BrokerID)
	}
	e.send(&Message{Type: MsgControlledShutdownResp, From: b.id, To: m.From, ReplyTo: m.ID, ControlledShutdownResp: resp})
}

// controlledShutdown is KafkaController.doControlledShutdown: for partitions the broker leads,
// the controlled-shutdown election (first live ISR member not shutting down); for the others,
// drop the broker from the ISR and stop its replica. It returns the partitions still led.
func (e *Engine) controlledShutdown(id int32) []TP {
	e.ctrl.shuttingDown[id] = true
	var remaining []TP
	var stop []TP
	for _, pid := range e.brokers[id].hosted {
		p := e.partitions[pid]
		if len(p.hosts) == 1 {
			continue
		}
		if p.leader == id {
			var newLeader int32 = -1
			for _, c := range p.assignment {
				if c != id && slices.Contains(p.isr, c) && e.replicaUsable(p.pid, c) {
					newLeader = c
					break
				}
			}
			if newLeader < 0 {
				remaining = append(remaining, p.tp())
				continue
			}
			// The new ISR leaves out every broker shutting down, not only this one
			// (Election.leaderForControlledShutdown: isr.filter(!shuttingDownBrokerIds.contains)).
			e.writePartition(p, newLeader, sortedMinus(p.isr, e.shuttingDownIDs()), true, fmt.Sprintf("controlled shutdown of broker %d", id))
			e.queueLeaderAndIsr(p)
			continue
		}
		if slices.Contains(p.isr, id) {
			e.writePartition(p, p.leader, sortedMinus(p.isr, []int32{id}), true, fmt.Sprintf("controlled shutdown of broker %d", id))
			e.queueLeaderAndIsr(p)
		}
		stop = append(stop, p.tp())
	}
	e.flushLeaderAndIsr()
	if len(stop) > 0 {
		e.send(&Message{Type: MsgStopReplica, From: e.ctrl.broker, To: id, StopReplica: &StopReplicaRequest{
			ControllerID: e.ctrl.broker, ControllerEpoch: e.ctrl.epoch, BrokerEpoch: e.ctrl.live[id], Partitions: stop}})
	}
	return remaining
}

// shuttingDownIDs is ControllerContext.shuttingDownBrokerIds, in broker order.
func (e *Engine) shuttingDownIDs() []int32 {
	var ids []int32
	for b, down := range e.ctrl.shuttingDown {
		if down {
			ids = append(ids, int32(b))
		}
	}
	return ids
}

// handleLogDirFailure takes a broker's replicas offline at the controller (the log-dir event).
func (e *Engine) handleLogDirFailure(id int32) {
	if !e.ctrlUsable() {
		return
	}
	for _, pid := range e.brokers[id].hosted {
		e.ctrl.offline[[2]int32{pid, id}] = true
	}
	e.onReplicasOffline(func(pid, b int32) bool { return b == id && e.ctrl.offline[[2]int32{pid, b}] })
	e.flushLeaderAndIsr()
}
