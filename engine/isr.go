package engine

import (
	"strconv"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The leader's ISR and high-watermark rules (Partition.scala) are package broker's: the HW's
// advance over the maximal ISR (high_watermark.go) and the ISR's changes (isr_change.go:
// maybeExpandIsr, the shrink task, the AlterPartition round trip), which brk.Broker.Handle hands
// their answers and the brk.Broker's timer methods their tasks (kafka_apis.go). Here: their
// rules, and a HW move's events.

// effectiveMinIsr is the min.insync.replicas a leader of p applies (brk.HWRules.EffectiveMinIsr).
func (e *Engine) effectiveMinIsr(p *partition) int {
	rules := e.hwRules()
	return rules.EffectiveMinIsr(len(p.hosts))
}

func (e *Engine) hwRules() brk.HWRules {
	return brk.HWRules{MinIsrGatesHW: e.era.minIsrGatesHW, MinIsrCappedAtReplicas: e.era.minIsrCappedAtReplicas,
		MinInsyncReplicas: e.cfg.MinInsyncReplicas, LagTimeMaxMs: e.cfg.ReplicaLagTimeMaxMs,
		CommittedISROnly: e.unsafe.committedISROnly}
}

// isrEligible reports whether a follower may be in the ISR, as the leader sees it (ZooKeeper
// mode: the broker is registered), through the metadataAtOnce shortcut.
func (e *Engine) isrEligible(b int32) bool { return !e.era.isrEligibility || e.metadata.registered(b) }

// caughtUp is Replica.isCaughtUp.
func (e *Engine) caughtUp(r *replica, rr *brk.Replica) bool {
	return rr.IsCaughtUp(r.Log().LogEndOffset(), e.now, e.cfg.ReplicaLagTimeMaxMs)
}

// hwChangedBy records a HW move (its events and facts), naming the follower whose fetch moved a
// leader's HW (-1: none). The sessions caching r were told by its brk.Broker.
func (e *Engine) hwChangedBy(r *replica, old int64, role string, follower int32) {
	now := r.Log().HighWatermark()
	p := e.partitions[r.Pid()]
	if e.tracing() {
		ev := Event{Type: EvHighWatermark, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index),
			From: Some(old), To: Some(now), Reason: role, render: describeHighWatermark}
		if rr := r.Remote(follower); follower >= 0 && rr != nil {
			ev.Replicas = []int32{follower}
			ev.arg[0] = rr.LogEndOffset()
		}
		e.emit(ev)
	}
	e.noteHWMoved(r, old)
}

// describeHighWatermark is a high-watermark event's text (made when read: Narrate).
// It appends with strconv rather than fmt: a large traced run narrates hundreds of thousands.
func describeHighWatermark(ev *Event) string {
	b := make([]byte, 0, 128)
	b = append(b, ev.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ev.Partition.V), 10)
	b = append(b, " on broker "...)
	b = strconv.AppendInt(b, int64(ev.Broker.V), 10)
	b = append(b, " ("...)
	b = append(b, ev.Reason...)
	b = append(b, "): high watermark "...)
	b = strconv.AppendInt(b, ev.From.V, 10)
	b = append(b, " → "...)
	b = strconv.AppendInt(b, ev.To.V, 10)
	if len(ev.Replicas) == 1 {
		b = append(b, " after follower "...)
		b = strconv.AppendInt(b, int64(ev.Replicas[0]), 10)
		b = append(b, "'s fetch at offset "...)
		b = strconv.AppendInt(b, ev.arg[0], 10)
	}
	return string(b)
}
