package engine

import (
	"fmt"
	"slices"
)

// Before AlterIsr (KIP-497, IBP 2.7) the leader changes the ISR itself: Partition.updateIsr writes
// the partition's znode with its own leader and leader epoch (no bump), conditional on the zkVersion
// it cached from the last LeaderAndIsr or its own last write (ReplicationUtils.updateLeaderAndIsr).
// On success it takes the new ISR at once, so there is no pending state and no maximal ISR; on a
// version mismatch it skips the change ("Cached zkVersion [..] not equal to that in zookeeper")
// and tries again at its next ISR check, which fails again until a LeaderAndIsr brings the new
// version. The controller hears of the change through isr_change_notification and only sends
// UpdateMetadata, which the engine does not model.
// Simplification: ZooKeeper answers at once, and a leader cut off from ZooKeeper fails the write
// at once (Kafka's client blocks until it reconnects, by when the version has moved on).

// writeIsrToZk is Partition.updateIsr for the eras before AlterIsr. ZooKeeper (the controller
// package's model) answers at once through the zookeeperAtOnce shortcut.
func (e *Engine) writeIsrToZk(r *replica, verb string, newISR []int32) {
	p := r.p
	w := e.zk.updateIsr(r.Broker(), p.pid, newISR, r.PartitionEpoch())
	if !w.Written {
		why := fmt.Sprintf("cached zkVersion %d, ZooKeeper has %d", r.PartitionEpoch(), w.Version)
		if !w.Connected {
			why = "no ZooKeeper connection"
		}
		e.emit(Event{Type: EvISRPending, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index),
			OldISR: r.State().ISR(), ISR: newISR, Reason: verb, Name: "skipped",
			Text: fmt.Sprintf("leader %d could not %s the ISR of %s to %v in ZooKeeper (%s): skipped", r.Broker(), verb, p.name(), newISR, why)})
		return
	}
	e.sessionsChanged(r)
	r.State().Commit(slices.Clone(w.ISR)) // nothing is in flight before AlterIsr
	r.SetPartitionEpoch(w.Version)
	e.noteISRChanged(p, w.Old, w.ISR)
	e.emit(Event{Type: EvISRChange, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index), OldISR: w.Old,
		ISR: w.ISR, Epoch: Some(int64(w.LeaderEpoch)), Reason: "leader " + verb,
		Text: fmt.Sprintf("leader %d wrote the ISR of %s to ZooKeeper: %v → %v (zkVersion %d)", r.Broker(), p.name(), w.Old, w.ISR, w.Version)})
	if e.maybeIncrementHW(r) {
		e.completeDelayedProduces(r)
	}
}
