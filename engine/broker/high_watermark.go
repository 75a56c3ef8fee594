package broker

import "math"

// The leader's high watermark (Partition.maybeIncrementLeaderHW): the smallest LEO among the
// leader and the replicas it must wait for, only ever rising. Which replicas it waits for is the
// era's: the ISR (the maximal ISR from 2.7, KIP-497), and any caught-up follower the leader may
// take into the ISR (ISR-eligible from 3.3, KIP-841; 3.6, KAFKA-15021).

// HWRules are the era's and the config's rules for the leader's HW.
type HWRules struct {
	// MinIsrGatesHW: the HW does not advance while the committed ISR is below
	// min.insync.replicas (KAFKA-15583, 3.7); MinIsrCappedAtReplicas: that setting counts at most
	// the replication factor (Partition.effectiveMinIsr, 3.7).
	MinIsrGatesHW, MinIsrCappedAtReplicas bool
	// MinInsyncReplicas is min.insync.replicas; LagTimeMaxMs is replica.lag.time.max.ms.
	MinInsyncReplicas, LagTimeMaxMs int64
	// CommittedISROnly (tests only): the HW waits only on the committed ISR, as before KIP-497's
	// maximal ISR, to show what that prevents.
	CommittedISROnly bool
	// EveryFollowerFetch: every follower fetch recomputes the HW at its time (0.10.2.2, 0.11.0.2,
	// 2.1.1: Partition.maybeExpandIsr ends with maybeIncrementLeaderHW(leaderReplica,
	// logReadResult.fetchTimeMs)); from 2.4 (KAFKA-8841) only a fetch that moved the follower's
	// LEO does.
	EveryFollowerFetch bool
}

// EffectiveMinIsr is the min.insync.replicas a leader of a partition of replicas replicas applies
// to acks=all produces (and, in 3.7, to the HW). 3.7's Partition.effectiveMinIsr caps it at the
// replication factor (`leaderLog.config.minInSyncReplicas.min(remoteReplicasMap.size + 1)`,
// KAFKA-15583, 3.7.0); before, Partition.appendRecordsToLeader and
// checkEnoughReplicasReachOffset read `log.config.minInSyncReplicas` as it is (0.10.2.2, 0.11.0.2,
// 2.1.1), so a min.insync.replicas above the replication factor refuses every acks=all produce
// with NOT_ENOUGH_REPLICAS.
func (r *HWRules) EffectiveMinIsr(replicas int) int {
	if !r.MinIsrCappedAtReplicas {
		return int(min(r.MinInsyncReplicas, math.MaxInt32))
	}
	return int(min(r.MinInsyncReplicas, int64(replicas)))
}

// hwCandidate is the leader p's candidate HW at now: the least LEO among itself and the followers
// that count (the maximal ISR's, and those caught up within replica.lag.time.max.ms whose broker
// may join the ISR; or the committed ISR's alone, rules.CommittedISROnly).
func (p *Partition) hwCandidate(h Host, rules *HWRules, now int64) int64 {
	cand := p.log.LogEndOffset()
	l := p.lead
	if l == nil {
		return cand // no followers
	}
	for i := range l.remotes {
		rr := &l.remotes[i]
		if rr.LogEndOffset() >= cand {
			continue
		}
		if rules.CommittedISROnly {
			if l.state.InISR(rr.Broker()) {
				cand = rr.LogEndOffset()
			}
			continue
		}
		if l.state.InMaximalISR(rr.Broker()) ||
			(rr.IsCaughtUp(p.log.LogEndOffset(), now, rules.LagTimeMaxMs) && h.IsrEligible(rr.Broker())) {
			cand = rr.LogEndOffset()
		}
	}
	return cand
}

// outsiderCaughtUp reports whether a follower outside the maximal ISR, behind the LEO, counts as
// caught up at now (replica.lag.time.max.ms lagMs) while the HW is below the LEO: such a follower
// bounds the HW (hwCandidate) until it is no longer caught up, which no fetch of its own tells;
// while it does, a leader that recomputes the HW at every follower fetch (EveryFollowerFetch) may
// raise it at any follower's fetch.
func (p *Partition) outsiderCaughtUp(now, lagMs int64) bool {
	l := p.lead
	if l == nil {
		return false
	}
	leo := p.log.LogEndOffset()
	if p.log.HighWatermark() >= leo {
		return false
	}
	for i := range l.remotes {
		rr := &l.remotes[i]
		if rr.LogEndOffset() < leo && !l.state.InMaximalISR(rr.Broker()) && rr.IsCaughtUp(leo, now, lagMs) {
			return true
		}
	}
	return false
}

// MaybeIncrementLeaderHW is Partition.maybeIncrementLeaderHW of p, the broker's replica of pid,
// after a fetch by follower (-1: another cause), which the narration names: the fetch that moved
// the HW is the moment a record becomes committed. It reports a rise.
func (rm *ReplicaManager) MaybeIncrementLeaderHW(h Host, pid int32, p *Partition, follower int32) bool {
	if !p.IsLeader() || p.offline {
		return false
	}
	if p.log.LogEndOffset() <= p.log.HighWatermark() {
		return false // the candidate is at most the LEO: no rise, without reading the rules
	}
	if p.heldByISR() {
		return false // the common case: the leader appended, its followers have not fetched it yet
	}
	rules := h.HWRules()
	if rules.MinIsrGatesHW && len(p.State().ISR()) < rules.EffectiveMinIsr(len(h.Assignment(pid))) {
		return false // KAFKA-15583: the committed ISR is below min.insync.replicas
	}
	cand := p.hwCandidate(h, &rules, h.Now())
	old := p.log.HighWatermark()
	if cand <= old {
		return false
	}
	p.log.SetHighWatermark(cand)
	rm.noteHW(p)
	h.HWChanged(p, old, "leader", follower)
	return true
}

// heldByISR reports that a follower in the committed ISR is at or below the HW: then the HW
// cannot rise, whatever the rules (MaybeIncrementLeaderHW's candidate counts such a follower's LEO
// under each of them: the committed ISR is part of the maximal ISR, and CommittedISROnly waits on
// it alone), so the rules and the assignment need not be read. TestHeldByISRMeansNoRise holds it
// to the whole computation.
func (p *Partition) heldByISR() bool {
	l := p.lead
	if l == nil {
		return false // no followers
	}
	hw := p.log.HighWatermark()
	for i := range l.remotes {
		if rr := &l.remotes[i]; rr.LogEndOffset() <= hw && l.state.InISR(rr.Broker()) {
			return true
		}
	}
	return false
}
