package engine

import "slices"

// The controller's preferred replica election (PreferredReplicaPartitionLeaderElection) and the
// auto leader rebalance (checkAndTriggerAutoLeaderRebalance, auto.leader.rebalance.enable).

// preferredElection makes the head of the assignment leader if it is usable and in the ISR.
func (e *Engine) preferredElection(p *partition, why string) KafkaError {
	pref := p.assignment[0]
	switch {
	case p.leader == pref:
		return ErrElectionNotNeeded
	case !e.replicaUsable(p.pid, pref) || !slices.Contains(p.isr, pref):
		return ErrPreferredLeaderNotAvailable
	}
	e.writePartition(p, pref, p.isr, true, why)
	e.queueLeaderAndIsr(p)
	return ErrNone
}

// firstRebalanceDelayMs is when a new controller first checks leader imbalance: 5 s after it took
// over, in every era (scheduleAutoLeaderRebalanceTask(delay = 5, unit = TimeUnit.SECONDS) from 1.1;
// the scheduler's initial delay of 5 s before), then every leader.imbalance.check.interval.seconds.
const firstRebalanceDelayMs = 5000

// scheduleAutoRebalance arms the current controller's next leader-imbalance check, delayMs from now.
func (e *Engine) scheduleAutoRebalance(delayMs int64) {
	if !e.cfg.AutoLeaderRebalanceEnable || !e.ctrl.active {
		return
	}
	e.schedule(autoRebalance{e.ctrl.epoch}.due(e.now + delayMs))
}

// autoRebalance is checkAndTriggerAutoLeaderRebalance: a broker whose share of partitions led by
// someone else exceeds leader.imbalance.per.broker.percentage gets its preferred leaderships back.
func (e *Engine) autoRebalance(epoch int32) {
	if e.ctrl.epoch != epoch || !e.cfg.AutoLeaderRebalanceEnable {
		return
	}
	if e.ctrlUsable() {
		preferred := make([]int, len(e.brokers))
		notLed := make([]int, len(e.brokers))
		for _, p := range e.partitions {
			pref := p.assignment[0]
			preferred[pref]++
			if p.leader != pref {
				notLed[pref]++
			}
		}
		for b := range e.brokers {
			if preferred[b] == 0 || int64(notLed[b])*100 <= e.cfg.LeaderImbalancePerBrokerPct*int64(preferred[b]) {
				continue
			}
			for _, p := range e.partitions {
				if p.assignment[0] == int32(b) && p.leader != int32(b) {
					e.preferredElection(p, "auto leader rebalance: preferred replica election")
				}
			}
		}
		e.flushLeaderAndIsr()
	}
	e.scheduleAutoRebalance(e.cfg.LeaderImbalanceCheckIntervalS * 1000)
}
