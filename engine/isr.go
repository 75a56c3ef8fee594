package engine

import (
	"fmt"
	"github.com/highwater-sim/highwater/engine/protocol"
	"math"
	"strconv"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The leader's ISR and high-watermark rules (Partition.scala): HW advance over the maximal ISR,
// ISR shrink by replica.lag.time.max.ms, ISR expand with the KAFKA-7128 rule, and the
// AlterPartition round trip (KIP-497) with at most one change in flight per partition.

// effectiveMinIsr is the min.insync.replicas a leader applies to acks=all produces (and, in 3.7,
// to the HW). 3.7's Partition.effectiveMinIsr caps it at the replication factor
// (`leaderLog.config.minInSyncReplicas.min(remoteReplicasMap.size + 1)`, added with KAFKA-15583 in
// 3.7.0); before, Partition.appendRecordsToLeader and checkEnoughReplicasReachOffset read
// `log.config.minInSyncReplicas` as it is (0.10.2.2, 0.11.0.2, 2.1.1), so a min.insync.replicas
// above the replication factor refuses every acks=all produce with NOT_ENOUGH_REPLICAS.
func (e *Engine) effectiveMinIsr(p *partition) int {
	if !e.era.minIsrCappedAtReplicas {
		return int(min(e.cfg.MinInsyncReplicas, math.MaxInt32))
	}
	return int(min(e.cfg.MinInsyncReplicas, int64(len(p.hosts))))
}

// outOfSync is Partition.getOutOfSyncReplicas's test of one ISR follower. From 2.1 (KAFKA-7152,
// 2.1.0) a follower at the leader's LEO is never out of sync (`r.logEndOffset.messageOffset !=
// leaderReplica.logEndOffset.messageOffset && (time.milliseconds - r.lastCaughtUpTimeMs) >
// maxLagMs` in 2.1.1; Replica.isCaughtUp in 3.7.0). Before (0.10.2.2, 0.11.0.2) only the time
// counts: `(time.milliseconds - r.lastCaughtUpTimeMs) > maxLagMs`, so a follower that stops
// fetching leaves the ISR after replica.lag.time.max.ms even when nothing was produced.
func (e *Engine) outOfSync(r *replica, rr *brk.Replica) bool {
	if !e.era.levelFollowerStaysInIsr {
		return e.now-rr.LastCaughtUpTime() > e.cfg.ReplicaLagTimeMaxMs
	}
	return !e.caughtUp(r, rr)
}

// isrEligible reports whether a follower may be in the ISR, as the leader sees it (ZooKeeper
// mode: the broker is registered), through the metadataAtOnce shortcut.
func (e *Engine) isrEligible(b int32) bool { return !e.era.isrEligibility || e.metadata.registered(b) }

// caughtUp is Replica.isCaughtUp.
func (e *Engine) caughtUp(r *replica, rr *brk.Replica) bool {
	return rr.IsCaughtUp(r.Log().LogEndOffset(), e.now, e.cfg.ReplicaLagTimeMaxMs)
}

// maybeIncrementHW is Partition.maybeIncrementLeaderHW: the HW becomes the smallest LEO among
// the leader and the replicas it must wait for, and only ever rises. It reports a rise.
func (e *Engine) maybeIncrementHW(r *replica) bool { return e.advanceHW(r, -1) }

// advanceHW is maybeIncrementHW after a fetch by follower (-1: another cause), which the
// narration names: the fetch that moved the HW is the moment a record becomes committed.
func (e *Engine) advanceHW(r *replica, follower int32) bool {
	if !r.IsLeader() || r.Offline() {
		return false
	}
	if e.era.minIsrGatesHW && len(r.State().ISR()) < e.effectiveMinIsr(r.p) {
		return false // KAFKA-15583: the committed ISR is below min.insync.replicas
	}
	cand := r.Log().LogEndOffset()
	for i := range r.Remotes() {
		rr := &r.Remotes()[i]
		if rr.LogEndOffset() >= cand {
			continue
		}
		if e.unsafe.committedISROnly {
			if r.State().InISR(rr.Broker()) {
				cand = rr.LogEndOffset()
			}
			continue
		}
		if r.State().InMaximalISR(rr.Broker()) || (e.caughtUp(r, rr) && e.isrEligible(rr.Broker())) {
			cand = rr.LogEndOffset()
		}
	}
	old := r.Log().HighWatermark()
	if cand <= old {
		return false
	}
	r.Log().SetHighWatermark(cand)
	e.hwChangedBy(r, old, "leader", follower)
	return true
}

// setFollowerHW applies the HW of a fetch response: min(leader HW, own LEO); it may go down.
func (e *Engine) setFollowerHW(r *replica, leaderHW int64) {
	old := r.Log().HighWatermark()
	if r.Log().SetHighWatermark(leaderHW) != old {
		e.hwChanged(r, old, "follower")
	}
	if r.ConfirmHW() {
		e.noteHWConfirmed(r)
	}
}

// hwChanged records a HW move.
func (e *Engine) hwChanged(r *replica, old int64, role string) { e.hwChangedBy(r, old, role, -1) }

// hwChangedBy is hwChanged naming the follower whose fetch moved a leader's HW (-1: none).
func (e *Engine) hwChangedBy(r *replica, old int64, role string, follower int32) {
	e.sessionsChanged(r)
	now := r.Log().HighWatermark()
	p := r.p
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

// maybeExpandIsr is Partition.maybeExpandIsr after an accepted follower fetch.
func (e *Engine) maybeExpandIsr(r *replica, rr *brk.Replica) {
	if r.State().IsInflight() || r.State().InISR(rr.Broker()) || !e.isrEligible(rr.Broker()) {
		return
	}
	if rr.LogEndOffset() < r.Log().HighWatermark() || (rr.LogEndOffset() < r.EpochStartOffset() && e.era.expandNeedsEpochStart && !e.unsafe.noEpochStartRule) {
		return // KAFKA-7128: the follower must reach the current leader epoch
	}
	e.submitAlterPartition(r, true, []int32{rr.Broker()}, protocol.SortedUnion(r.State().ISR(), []int32{rr.Broker()}))
}

// isrShrinkTask runs every replica.lag.time.max.ms / 2 on each broker.
func (e *Engine) isrShrinkTask(b *broker) {
	for _, pid := range b.hosted {
		r := b.replicaOf(pid)
		if !r.IsLeader() || r.Offline() || r.State().IsInflight() {
			continue
		}
		var out []int32
		for _, id := range r.State().ISR() {
			if rr := r.Remote(id); rr != nil && e.outOfSync(r, rr) {
				out = append(out, id)
			}
		}
		if len(out) > 0 {
			e.submitAlterPartition(r, false, out, protocol.SortedMinus(r.State().ISR(), out))
		}
	}
	e.schedule(isrShrinkTask{e.timer(b)}.due(e.now + max(1, e.cfg.ReplicaLagTimeMaxMs/2)))
}

// submitAlterPartition moves r to PendingExpand or PendingShrink and asks the controller (before
// IBP 2.7 the leader writes ZooKeeper itself: writeIsrToZk).
func (e *Engine) submitAlterPartition(r *replica, expand bool, ids, newISR []int32) {
	verb := "shrink"
	if expand {
		verb = "expand"
	}
	if !e.era.alterPartition {
		e.writeIsrToZk(r, verb, newISR)
		return
	}
	r.State().Prepare(expand, ids, newISR)
	p := r.p
	e.emit(Event{Type: EvISRPending, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index),
		OldISR: r.State().ISR(), ISR: newISR, Reason: verb,
		Text: fmt.Sprintf("leader %d asks to %s the ISR of %s: %v → %v", r.Broker(), verb, p.name(), r.State().ISR(), newISR)})
	e.sendAlterPartition(r)
}

func (e *Engine) sendAlterPartition(r *replica) {
	b := e.brokers[r.Broker()]
	to := e.metadata.activeController()
	if to < 0 {
		// No controller: try again later.
		e.schedule(alterPartitionResend{e.timer(e.brokers[r.Broker()]), r.p.pid}.due(e.now + e.retryBackoff()))
		return
	}
	m := &Message{Type: MsgAlterPartition, From: r.Broker(), To: to, AlterPartition: &AlterPartitionRequest{
		BrokerID: r.Broker(), BrokerEpoch: b.brokerEpoch, TP: r.p.tp(), LeaderEpoch: r.LeaderEpoch(),
		PartitionEpoch: r.PartitionEpoch(), NewISR: r.State().PendingISR()}}
	e.send(m)
	r.State().Sent(m.ID)
}

func (e *Engine) resendAlterPartition(b *broker, pid int32) {
	r := b.replicaOf(pid)
	if r == nil || !r.IsLeader() || !r.State().IsInflight() || r.State().Stuck() || r.State().InFlight() != 0 {
		return
	}
	e.sendAlterPartition(r)
}

func (e *Engine) alterPartitionFailed(b *broker, req *Message) {
	r := e.localReplica(b.id, req.AlterPartition.TP)
	if r == nil || !r.State().IsInflight() || r.State().InFlight() != req.ID {
		return
	}
	r.State().SendFailed()
	e.schedule(alterPartitionResend{e.timer(b), r.p.pid}.due(e.now + e.retryBackoff()))
}

// handleAlterPartitionResponse is Partition.submitAlterPartition's callback.
func (e *Engine) handleAlterPartitionResponse(b *broker, m *Message) {
	resp := m.AlterPartitionResponse
	r := e.localReplica(b.id, resp.TP)
	if r == nil || !r.State().IsInflight() || r.State().InFlight() != m.ReplyTo {
		return // the partition state changed meanwhile (a LeaderAndIsr arrived)
	}
	switch resp.Error {
	case ErrNone:
		if resp.LeaderEpoch != r.LeaderEpoch() || resp.PartitionEpoch < r.PartitionEpoch() {
			r.State().WaitForMetadata()
			return
		}
		e.sessionsChanged(r)
		r.State().Commit(resp.ISR)
		r.SetPartitionEpoch(resp.PartitionEpoch)
		if e.maybeIncrementHW(r) {
			e.completeDelayedProduces(r)
		}
	case ErrIneligibleReplica:
		r.State().Revert() // back to the last committed state
	case ErrFencedLeaderEpoch, ErrInvalidUpdateVersion, ErrInvalidRequest, ErrUnknownTopicOrPartition:
		r.State().WaitForMetadata() // wait for new metadata
	default:
		r.State().SendFailed()
		e.schedule(alterPartitionResend{e.timer(b), r.p.pid}.due(e.now + e.retryBackoff()))
	}
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
