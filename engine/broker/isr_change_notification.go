package broker

// The ISR-change notification before IBP 2.7 (ZooKeeper-written ISRs). A leader that wrote an ISR
// change to ZooKeeper itself (writeIsr) records the partition (ReplicaManager.recordIsrChange:
// isrChangeSet, lastIsrChangeMs), and the replica manager's "isr-change-propagation" task, every
// 2500 ms from the broker's start (ReplicaManager.startup's scheduler.schedule(...,
// period = 2500L), delay 0), writes the recorded partitions as one sequential znode
// /isr_change_notification/isr_change_NNN (ReplicationUtils.propagateIsrChanges in 0.10.2.2 and
// 0.11.0.2, KafkaZkClient.propagateIsrChanges in 2.1.1) when some are recorded and either none
// was recorded in the last IsrChangePropagationBlackOut (5000 ms) or the last write is more than
// IsrChangePropagationInterval (60000 ms) ago (maybePropagateIsrChanges: both tests strict, `<
// now`; both times start at the ReplicaManager's construction). The controller's watch on the
// path answers it with an UpdateMetadata for those partitions to every live broker
// (controller/isr_change_notification.go). Same constants and rule at 0.10.2.2, 0.11.0.2 and
// 2.1.1; from IBP 2.7 (KIP-497) the controller learns ISR changes from AlterPartition and sends
// its UpdateMetadata then, and the task writes nothing (the engine does not run it).
const (
	IsrChangePropagationPeriodMs   = 2500
	IsrChangePropagationBlackOutMs = 5000
	IsrChangePropagationIntervalMs = 60000
)

// isrChangeSet is ReplicaManager's isrChangeSet with lastIsrChangeMs and lastIsrPropagationMs.
// pids keeps the partitions in the order first recorded (in holds them, for the test of a second
// record: never iterated). blocked: the task's write waits for the broker's ZooKeeper
// connection since blockedAt (the task's now, which it sets lastIsrPropagationMs to).
type isrChangeSet struct {
	pids                                          []int32
	in                                            map[int32]struct{}
	lastIsrChangeMs, lastPropagationMs, blockedAt int64
	blocked                                       bool
}

// IsrChangesStarted is the replica manager built at the process's start (ReplicaManager's
// constructor: lastIsrChangeMs and lastIsrPropagationMs are the construction time, the set
// empty), with its isr-change-propagation task scheduled; before IBP 2.7 only.
func (rm *ReplicaManager) IsrChangesStarted(h Host) {
	s := &rm.isrChanges
	s.pids = s.pids[:0]
	clear(s.in)
	now := h.Now()
	s.lastIsrChangeMs, s.lastPropagationMs, s.blocked = now, now, false
	h.ScheduleIsrChangePropagation(now + IsrChangePropagationPeriodMs)
}

// recordIsrChange is ReplicaManager.recordIsrChange, called by Partition.updateIsr after its
// ZooKeeper write succeeded (writeIsr).
func (rm *ReplicaManager) recordIsrChange(h Host, pid int32) {
	s := &rm.isrChanges
	if s.in == nil {
		s.in = map[int32]struct{}{}
	}
	if _, ok := s.in[pid]; !ok {
		s.in[pid] = struct{}{}
		s.pids = append(s.pids, pid)
	}
	s.lastIsrChangeMs = h.Now()
}

// IsrChangePropagationTask is one run of the "isr-change-propagation" task
// (maybePropagateIsrChanges); it runs again IsrChangePropagationPeriodMs later. A run while the
// last one's write still waits for ZooKeeper does nothing (Kafka's scheduler thread is blocked in
// that write, under the isrChangeSet lock).
func (rm *ReplicaManager) IsrChangePropagationTask(h Host) {
	now := h.Now()
	s := &rm.isrChanges
	if !s.blocked && len(s.pids) > 0 &&
		(s.lastIsrChangeMs+IsrChangePropagationBlackOutMs < now || s.lastPropagationMs+IsrChangePropagationIntervalMs < now) {
		rm.propagateIsrChanges(h, now)
	}
	h.ScheduleIsrChangePropagation(now + IsrChangePropagationPeriodMs)
}

// propagateIsrChanges writes the notification znode (Host.PropagateIsrChanges), clears the set
// and sets lastIsrPropagationMs to the task's now. Without a ZooKeeper connection the write
// waits (ZkClient.retryUntilConnected in 0.10.2.2 and 0.11.0.2; 2.1.1
// KafkaZkClient.retryRequestUntilConnected) until ZooKeeperReconnected.
func (rm *ReplicaManager) propagateIsrChanges(h Host, now int64) {
	s := &rm.isrChanges
	if !h.PropagateIsrChanges(s.pids) {
		s.blocked, s.blockedAt = true, now
		return
	}
	s.pids = s.pids[:0]
	clear(s.in)
	s.lastPropagationMs, s.blocked = now, false
}

// isrNotificationReconnected finishes the task's write that waited for ZooKeeper.
func (rm *ReplicaManager) isrNotificationReconnected(h Host) {
	if s := &rm.isrChanges; s.blocked {
		s.blocked = false
		rm.propagateIsrChanges(h, s.blockedAt)
	}
}

// PendingIsrChanges are the partitions recorded and not yet propagated (tests and the page).
func (rm *ReplicaManager) PendingIsrChanges() []int32 { return rm.isrChanges.pids }
