package controller

import "github.com/highwater-sim/highwater/engine/protocol"

// Test hooks: the ports of Kafka's unit tests in package engine set a state directly, as Kafka's
// tests write a znode or the controller context. Nothing but tests calls them
// (TestControllerOwnsItsState in package engine keeps it so).

// SetStateForTest writes partition pid's state znode as someone outside the controller would:
// leader, leader epoch, ISR and version, with no event and no fact.
func (k *Controller) SetStateForTest(pid, leader, leaderEpoch int32, isr []int32, version int32) {
	p := &k.zk.partitions[pid]
	p.leader, p.leaderEpoch, p.isr, p.partitionEpoch = leader, leaderEpoch, protocol.SortedCopy(isr), version
}

// SetShuttingDownForTest marks broker b as shutting down in the controller's context, as
// doControlledShutdown leaves it.
func (k *Controller) SetShuttingDownForTest(b int32) { k.shuttingDown[b] = true }
