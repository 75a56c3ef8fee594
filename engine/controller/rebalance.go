package controller

// The auto leader rebalance (checkAndTriggerAutoLeaderRebalance, auto.leader.rebalance.enable),
// by the preferred replica election (partition_state_machine.go).

// firstRebalanceDelayMs is when a new controller first checks leader imbalance: 5 s after it took
// over, in every era (scheduleAutoLeaderRebalanceTask(delay = 5, unit = TimeUnit.SECONDS) from 1.1;
// the scheduler's initial delay of 5 s before), then every leader.imbalance.check.interval.seconds.
const firstRebalanceDelayMs = 5000

// scheduleAutoRebalance arms the current controller's next leader-imbalance check, delayMs from now.
func (k *Controller) scheduleAutoRebalance(delayMs int64) {
	if !k.c.Settings().AutoLeaderRebalanceEnable || !k.active {
		return
	}
	k.c.AutoRebalanceAt(k.c.Now()+delayMs, k.epoch)
}

// AutoRebalance is checkAndTriggerAutoLeaderRebalance, the timer set in controller epoch epoch: a
// broker whose share of partitions led by someone else exceeds
// leader.imbalance.per.broker.percentage gets its preferred leaderships back.
func (k *Controller) AutoRebalance(epoch int32) {
	cfg := k.c.Settings()
	if k.epoch != epoch || !cfg.AutoLeaderRebalanceEnable {
		return
	}
	// Before 2.4 no preferred election while a reassignment waits (checkAndTriggerPartitionRebalance:
	// `controllerContext.partitionsBeingReassigned.isEmpty`, 0.10.2.2 to 2.1.1).
	if k.usable() && len(k.reassigning) == 0 {
		preferred := make([]int, k.brokers)
		notLed := make([]int, k.brokers)
		for pid := range k.zk.partitions {
			p := &k.zk.partitions[pid]
			pref := p.assignment[0]
			preferred[pref]++
			if p.leader != pref {
				notLed[pref]++
			}
		}
		for _, b := range k.rebalanceBrokerOrder(preferred) {
			if preferred[b] == 0 || int64(notLed[b])*100 <= cfg.LeaderImbalancePerBrokerPct*int64(preferred[b]) {
				continue
			}
			if k.era.RebalanceBatchesPerBroker {
				for pid := range int32(len(k.zk.partitions)) {
					if p := &k.zk.partitions[pid]; p.assignment[0] == int32(b) && p.leader != int32(b) {
						k.preferredElection(pid, "auto leader rebalance: preferred replica election", false)
					}
				}
				// One onReplicaElection, so one LeaderAndIsr batch, per imbalanced broker (3.7.0,
				// 2.1.1 onPreferredReplicaElection, KAFKA-7299).
				k.flushLeaderAndIsr()
				continue
			}
			// 0.10.2.2 and 0.11.0.2 elect, and send, one partition at a time
			// (onPreferredReplicaElection(Set(topicPartition))), in the order of
			// topicsNotInPreferredReplica.keys: the broker's group of the groupBy (a mutable.HashMap
			// of TopicAndPartition, filled in pid order here: Kafka fills it in the order of the
			// whole assignment map), then filtered into another.
			for _, pid := range k.notLedInScalaOrder(int32(b)) {
				k.preferredElection(pid, "auto leader rebalance: preferred replica election", false)
				k.flushLeaderAndIsr()
			}
		}
	}
	k.scheduleAutoRebalance(cfg.LeaderImbalanceCheckIntervalS * 1000)
}

// notLedInScalaOrder is 0.10.2.2/0.11.0.2's topicsNotInPreferredReplica for preferred broker b,
// in its keys' iteration order: the partitions whose preferred replica is b, a mutable.HashMap of
// TopicAndPartition, filtered (a new mutable.HashMap filled in the first one's order) to those b
// does not lead.
func (k *Controller) notLedInScalaOrder(b int32) []int32 {
	name := func(pid int32) (string, int32) { t := k.topicOf(pid); return t.name, pid - t.first }
	var all []int32
	for pid := range int32(len(k.zk.partitions)) {
		if k.zk.partitions[pid].assignment[0] == b {
			all = append(all, pid)
		}
	}
	var notLed []int32
	for _, pid := range topicAndPartitionMapOrder(all, name) {
		if k.zk.partitions[pid].leader != b {
			notLed = append(notLed, pid)
		}
	}
	return topicAndPartitionMapOrder(notLed, name)
}

// rebalanceBrokerOrder is the order in which the leader-imbalance check walks the preferred
// brokers: the keys of preferredReplicasForTopicsByBrokers, a Scala groupBy by the assignment's
// head (groupByOrder: Scala 2.11 in 0.10.2.2 and 0.11.0.2, 2.11/2.12 in 2.1.1, whose mutable
// HashMap then Map1..Map4 order puts 2 before 1; Scala 2.13's CHAMP in 3.7.0). It decides whose
// LeaderAndIsr goes first to a broker losing leaderships to several.
func (k *Controller) rebalanceBrokerOrder(preferred []int) []int {
	var keys []int32
	for b, n := range preferred {
		if n > 0 {
			keys = append(keys, int32(b))
		}
	}
	v := k.era.GroupByScala
	if v == GroupByBrokerOrder {
		v = GroupByScala212 // 0.10.2.2 and 0.11.0.2 call groupBy here, on Scala 2.11's collections
	}
	order := make([]int, 0, len(keys))
	for _, b := range groupByOrder(keys, v) {
		order = append(order, int(b))
	}
	return order
}
