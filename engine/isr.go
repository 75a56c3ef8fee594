package engine

import brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process

// The leader's ISR and high-watermark rules (Partition.scala) are package broker's: the HW's
// advance over the maximal ISR (high_watermark.go) and the ISR's changes (isr_change.go:
// maybeExpandIsr, the shrink task, the AlterPartition round trip), which brk.Broker.Handle hands
// their answers and the brk.Broker's timer methods their tasks (kafka_apis.go). Here: their
// rules (a HW move's event is the broker's: brk.Event).

// effectiveMinIsr is the min.insync.replicas a leader of p applies (brk.HWRules.EffectiveMinIsr).
func (e *Engine) effectiveMinIsr(p *partition) int {
	return e.rules.HW.EffectiveMinIsr(len(p.hosts))
}

// isrEligible reports whether follower b may be in the ISR, as leader's broker sees it
// (Partition.isReplicaIsrEligible, 3.3+; ZooKeeper mode: its metadata cache, fed by the
// controller's UpdateMetadata, has b alive: brk.MetadataCache).
func (e *Engine) isrEligible(leader *broker, b int32) bool {
	return !e.era.isrEligibility || leader.rm.Metadata().HasAliveBroker(b)
}

// caughtUp is Replica.isCaughtUp.
func (e *Engine) caughtUp(r *replica, rr *brk.Replica) bool {
	return rr.IsCaughtUp(r.Log().LogEndOffset(), e.now, e.cfg.ReplicaLagTimeMaxMs)
}
