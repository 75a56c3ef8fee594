package controller

import "slices"

// The accessors: what the rest of the cluster may read of the controller and its ZooKeeper (the
// engine's read API, scenario expectations, the invariant checker, the brokers' shortcuts). They
// change nothing, and slices come as copies, so a reader cannot change the controller's state.
// Every other exported method acts.

// Broker is the controller's broker, Epoch its controller epoch; Active reports whether it is
// still the controller (its registration did not go, its process did not restart).
func (k *Controller) Broker() int32 { return k.broker }
func (k *Controller) Epoch() int32  { return k.epoch }
func (k *Controller) Active() bool  { return k.active }

// Usable reports whether the controller can act: it is active, and its broker runs and reaches
// ZooKeeper.
func (k *Controller) Usable() bool { return k.usable() }

// IsrChangeNotifications is the number of /isr_change_notification children waiting (before IBP
// 2.7).
func (k *Controller) IsrChangeNotifications() int { return len(k.zk.isrChanges) }

// Leader is partition pid's leader per ZooKeeper (-1 for none), LeaderEpoch its leader epoch and
// PartitionEpoch the znode's version (zkVersion).
func (k *Controller) Leader(pid int32) int32         { return k.zk.partitions[pid].leader }
func (k *Controller) LeaderEpoch(pid int32) int32    { return k.zk.partitions[pid].leaderEpoch }
func (k *Controller) PartitionEpoch(pid int32) int32 { return k.zk.partitions[pid].partitionEpoch }

// ISR is partition pid's ISR per ZooKeeper, sorted (a copy); ISRSize its length.
func (k *Controller) ISR(pid int32) []int32 { return slices.Clone(k.zk.partitions[pid].isr) }
func (k *Controller) ISRSize(pid int32) int { return len(k.zk.partitions[pid].isr) }

// InISR reports whether broker b is in partition pid's ISR per ZooKeeper.
func (k *Controller) InISR(pid, b int32) bool { return slices.Contains(k.zk.partitions[pid].isr, b) }

// Recovering is set by an unclean election (KIP-704).
func (k *Controller) Recovering(pid int32) bool { return k.zk.partitions[pid].recovering }

// Assignment is partition pid's replica list (a copy); its head is the preferred leader.
func (k *Controller) Assignment(pid int32) []int32 {
	return slices.Clone(k.zk.partitions[pid].assignment)
}

// Session is a broker's ZooKeeper session as ZooKeeper has it.
type Session struct {
	Registered bool  // it holds a registration (/brokers/ids/N)
	Connected  bool  // the broker reaches ZooKeeper
	Epoch      int64 // the registration's broker epoch (czxid)
}

// Session returns broker b's ZooKeeper session.
func (k *Controller) Session(b int32) Session {
	s := k.zk.sessions[b]
	return Session{Registered: s.registered, Connected: s.connected, Epoch: s.epoch}
}

// Registered reports whether broker b holds a registration.
func (k *Controller) Registered(b int32) bool { return k.zk.sessions[b].registered }

// LiveBrokerEpoch is the broker epoch of b the controller counts as alive, 0 if it does not
// (ControllerContext.liveBrokerIdAndEpochs).
func (k *Controller) LiveBrokerEpoch(b int32) int64 {
	if k.live == nil {
		return 0
	}
	return k.live[b]
}

// The timers' staleness, as the read API's Timers leaves stale ones out: each reports whether the
// timer would still act when due.

// SessionExpiryPending: broker b's session expiry of generation gen would expire the session.
func (k *Controller) SessionExpiryPending(b int32, gen uint64) bool {
	s := k.zk.sessions[b]
	return s.gen == gen && !s.connected && s.registered
}

// RebalancePending: the leader-imbalance check set in controller epoch epoch is the current
// controller's (auto.leader.rebalance.enable is the caller's to check).
func (k *Controller) RebalancePending(epoch int32) bool { return k.active && k.epoch == epoch }

// RetryPending: a queue's retry set in controller epoch epoch is the current controller's.
func (k *Controller) RetryPending(epoch int32) bool { return k.epoch == epoch && k.channels != nil }
