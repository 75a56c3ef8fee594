package engine

import "github.com/highwater-sim/highwater/engine/controller"

// The ZooKeeper-mode controller (KafkaController, PartitionStateMachine, ReplicaStateMachine) and
// the ZooKeeper it keeps its state in (each partition's znodes, the brokers' sessions and
// registrations) are package controller. This file is the engine's side of it: the cluster as the
// controller reaches it (controller.Cluster: the network, the agenda, the trace, the observers'
// facts, the brokers' hosted partitions and processes), the messages and timers handed to it, the
// brokers' ZooKeeper sessions, and the shortcuts broker code takes to ZooKeeper's state
// (shortcuts.go). Only this file acts on the controller; the rest of the engine reads it through
// its accessors (TestControllerOwnsItsState).

// newController builds the cluster's ZooKeeper and controller from the topics' assignments (one
// replica list per partition, in pid order across the topics).
func newController(e *Engine, names []string, assigns [][][]int32) *controller.Controller {
	topics := make([]controller.Topic, len(names))
	for i := range names {
		topics[i] = controller.Topic{Name: names[i], Assignment: assigns[i]}
	}
	era := controller.Era{KeepLastIsrMember: e.era.keepLastIsrMember,
		FailoverOfflinesDeadReplicas: e.era.failoverOfflinesDeadReplicas, BrokerEpochs: e.era.brokerEpochs,
		PreferredReelectsLeader: e.era.preferredReelectsLeader, ReorderCompletesAtOnce: e.era.reorderCompletesAtOnce,
		GroupByScala: e.era.groupByScala, RebalanceBatchesPerBroker: e.era.rebalanceBatchesPerBroker,
		ControlledShutdownBatched: e.era.controlledShutdownBatched, StopReplicaPerPartition: e.era.stopReplicaPerPartition,
		LeaderRecovery: e.era.leaderRecovery, UpdateMetadataNamesPartitions: e.era.updateMetadataNamesPartitions,
		OfflineUpdateMetadataOnlyWithoutChange: e.era.offlineUpdateMetadataOnlyWithoutChange,
		FailoverDeletesIsrChangeNotifications:  e.era.failoverDeletesIsrChangeNotifications}
	return controller.New(ctrlCluster{e}, era, len(e.brokers), topics)
}

// startController makes broker 0 the controller at time 0; every broker applies its partitions'
// state at once (no network round trip at time 0: start.go).
func (e *Engine) startController() {
	e.ctrl.Start(func(b int32, req *LeaderAndIsrRequest) { e.applyFirstLeaderAndIsr(e.brokers[b], req) })
}

// ctrlCluster is the cluster as the controller reaches it.
type ctrlCluster struct{ e *Engine }

func (c ctrlCluster) Now() int64 { return c.e.now }

func (c ctrlCluster) Settings() controller.Settings {
	cfg := &c.e.cfg
	return controller.Settings{UncleanLeaderElectionEnable: cfg.UncleanLeaderElectionEnable,
		AutoLeaderRebalanceEnable: cfg.AutoLeaderRebalanceEnable, LeaderImbalancePerBrokerPct: cfg.LeaderImbalancePerBrokerPct,
		LeaderImbalanceCheckIntervalS: cfg.LeaderImbalanceCheckIntervalS, ZookeeperSessionTimeoutMs: cfg.ZookeeperSessionTimeoutMs}
}

func (c ctrlCluster) Send(m *Message) { c.e.send(m) }

func (c ctrlCluster) SessionExpiryAt(at int64, b int32, gen uint64) {
	c.e.schedule(sessionExpire{b, gen}.due(at))
}

func (c ctrlCluster) AutoRebalanceAt(at int64, epoch int32) {
	c.e.schedule(autoRebalance{epoch}.due(at))
}

func (c ctrlCluster) ReassignmentWatchAt(at int64, pid int32) {
	c.e.schedule(reassignWatch{pid}.due(at))
}

func (c ctrlCluster) IsrChangeWatchAt(at int64) { c.e.schedule(isrChangeWatch{}.due(at)) }

func (c ctrlCluster) RetryAt(at int64, b int32, epoch int32) {
	c.e.schedule(controllerRetry{b, epoch}.due(at))
}

func (c ctrlCluster) Emit(ev controller.Event) {
	c.e.emit(Event{Type: ev.Type, Broker: ev.Broker, Topic: ev.Topic, Partition: ev.Partition, From: ev.From,
		To: ev.To, Epoch: ev.Epoch, OldISR: ev.OldISR, ISR: ev.ISR, Reason: ev.Reason, Name: ev.Name, Text: ev.Text})
}

func (c ctrlCluster) PartitionWritten(pid, oldEpoch int32) {
	c.e.notePartitionWritten(c.e.partitions[pid], oldEpoch)
}

func (c ctrlCluster) ISRChanged(pid int32, old, isr []int32) {
	c.e.noteISRChanged(c.e.partitions[pid], old, isr)
}

func (c ctrlCluster) Elected(pid int32) { c.e.noteElected(c.e.partitions[pid]) }

func (c ctrlCluster) Hosted(b int32) []int32 { return c.e.brokers[b].Hosted() }

func (c ctrlCluster) Process(b int32) (uint64, bool) {
	br := c.e.brokers[b]
	return br.incarnation, !br.Dead()
}

// The messages and timers for the controller.

// handleAlterPartition: a leader's AlterPartition reached broker b.
func (e *Engine) handleAlterPartition(b *broker, m *Message) { e.ctrl.ProcessAlterPartition(b.id, m) }

// handleControlledShutdown: a broker's ControlledShutdown reached broker b.
func (e *Engine) handleControlledShutdown(b *broker, m *Message) {
	e.ctrl.ProcessControlledShutdown(b.id, m)
}

// handleLeaderAndIsrResponse: a broker's answer to the LeaderAndIsr sent reached broker b.
func (e *Engine) handleLeaderAndIsrResponse(b *broker, m, sent *Message) {
	e.ctrl.LeaderAndIsrAnswered(b.id, m, sent)
}

// handleStopReplicaResponse: a broker's answer to the StopReplica sent reached broker b.
func (e *Engine) handleStopReplicaResponse(b *broker, m, sent *Message) {
	e.ctrl.StopReplicaAnswered(b.id, m, sent)
}

// handleUpdateMetadataResponse: a broker's answer to the UpdateMetadata sent reached broker b.
func (e *Engine) handleUpdateMetadataResponse(b *broker, m, sent *Message) {
	e.ctrl.UpdateMetadataAnswered(b.id, m, sent)
}

// controllerRequestFailed: a LeaderAndIsr, UpdateMetadata or StopReplica got no answer.
func (e *Engine) controllerRequestFailed(req *Message) { e.ctrl.ChannelRequestFailed(req) }

func (e *Engine) controllerRetry(b int32, epoch int32) { e.ctrl.Retry(b, epoch) }

func (e *Engine) autoRebalance(epoch int32) { e.ctrl.AutoRebalance(epoch) }

// reassignWatch: a leader's ISR write fired the watch on a reassigned partition's state znode.
func (e *Engine) reassignWatch(pid int32) { e.ctrl.ReassignmentIsrChanged(pid) }

// isrChangeWatch: a broker's ISR-change notification fired the controller's watch on
// /isr_change_notification.
func (e *Engine) isrChangeWatch() { e.ctrl.IsrChangeNotification() }

// handleLogDirFailure: broker id's log directory failed; the controller hears of it at once (the
// log-dir event notification in ZooKeeper) and asks the broker which replicas are offline.
func (e *Engine) handleLogDirFailure(id int32) { e.ctrl.ProcessLogDirEvent(id) }

// elect is an operator's election: preferred (no broker), a chosen leader (reorder the assignment,
// then a preferred election), or unclean.
func (e *Engine) elect(p *partition, target *int32, unclean bool) {
	e.ctrl.ElectLeaders(p.pid, target, unclean)
}

// uncleanElectionEnabled raises the controller's UncleanLeaderElectionEnable event: a config
// step turned unclean.leader.election.enable on (from 2.1; the controller reads the new setting
// at once).
func (e *Engine) uncleanElectionEnabled() { e.ctrl.UncleanLeaderElectionEnabled() }

// The brokers' ZooKeeper sessions.

// register creates a new ZooKeeper session and registration with a new broker epoch, which the
// broker keeps; then the registration's watches run.
func (e *Engine) register(b *broker) {
	if !e.era.registerBeforeController {
		e.ctrl.ElectBeforeRegistration(b.id) // 0.10.2: kafkaController.startup() first
	}
	b.brokerEpoch = e.ctrl.RegisterBroker(b.id)
	e.ctrl.NotifyRegistered(b.id)
}

// disconnect cuts a broker from ZooKeeper; its session expires unless it comes back in time.
func (e *Engine) disconnect(b int32) { e.ctrl.Disconnect(b) }

// expireSession is a session's expiry timer; it returns the brokers whose sessions expired (b's
// and any other due at the same instant), none if b's had not.
func (e *Engine) expireSession(b int32, gen uint64) []int32 { return e.ctrl.SessionExpired(b, gen) }

// deregister closes a session at once (clean shutdown).
func (e *Engine) deregister(b int32) { e.ctrl.CloseSession(b) }

// reconnect brings a healed broker's session back; false if the session is gone and the broker
// must register anew.
func (e *Engine) reconnect(b int32) bool { return e.ctrl.Reconnect(b) }

// zookeeper answers the broker's shortcuts (shortcuts.go) from the controller and its ZooKeeper.
type zookeeper struct{ e *Engine }

func (z zookeeper) registered(b int32) bool { return z.e.ctrl.Registered(b) }

func (z zookeeper) activeController() int32 {
	if !z.e.ctrl.Active() {
		return -1
	}
	return z.e.ctrl.Broker()
}

func (z zookeeper) leader(pid int32) int32 { return z.e.ctrl.Leader(pid) }

func (z zookeeper) leaderEpoch(pid int32) int32 { return z.e.ctrl.LeaderEpoch(pid) }

func (z zookeeper) propagateIsrChanges(b int32, pids []int32) bool {
	return z.e.ctrl.PropagateIsrChanges(b, pids)
}

func (z zookeeper) updateIsr(b, pid int32, isr []int32, zkVersion int32) controller.IsrWrite {
	return z.e.ctrl.UpdateIsr(b, pid, isr, zkVersion)
}
