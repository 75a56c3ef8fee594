package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The leader's ISR changes: Partition.maybeExpandIsr after a follower's fetch, the periodic
// shrink check (ReplicaManager.maybeShrinkIsr, every replica.lag.time.max.ms / 2), and the
// AlterPartition round trip that commits a change (Partition.submitAlterPartition with its
// callback, KIP-497, IBP 2.7). Before 2.7 the leader writes the ISR to ZooKeeper itself
// (Partition.updateIsr: writeIsr), which ZooKeeper's model answers at once (Host.UpdateIsr).

// IsrRules are the era's and the config's rules for the leader's ISR.
type IsrRules struct {
	// AlterPartition: the leader asks the controller (KIP-497, 2.7); before, it writes
	// ZooKeeper itself.
	AlterPartition bool
	// ExpandNeedsEpochStart: a follower joins only once it reached the leader's epoch start
	// offset (KAFKA-7128, 2.1).
	ExpandNeedsEpochStart bool
	// LevelFollowerStaysInIsr: a follower at the leader's LEO is never out of sync (KAFKA-7152,
	// 2.1).
	LevelFollowerStaysInIsr bool
	// LagTimeMaxMs is replica.lag.time.max.ms.
	LagTimeMaxMs int64
	// NoEpochStartRule (tests only) turns KAFKA-7128 off, to show what it prevents.
	NoEpochStartRule bool
}

// The AlterPartition channel's retry times (3.7.0), fixed in Kafka's code, not settings (the
// producer's retry.backoff.ms is no broker config):
//   - alterPartitionRetryMs: a request that got no answer (its connection reset, or
//     controller.socket.timeout.ms passed) or was answered NOT_CONTROLLER goes back to the head of
//     the NodeToControllerRequestThread's queue (handleResponse: putFirst) and is sent again once
//     its NetworkClient may reconnect, reconnect.backoff.ms 50 (max 50) after the disconnect
//     (NodeToControllerChannelManagerImpl.buildNetworkClient); any other top-level error has
//     DefaultAlterPartitionManager.sendRequest schedule maybePropagateIsrChanges in 50 ms;
//   - noControllerPollMs: with no controller known the thread polls again after 100 ms
//     (NodeToControllerRequestThread.doWork: pollOnce(100)).
const (
	alterPartitionRetryMs = 50
	noControllerPollMs    = 100
)

// OutOfSync is Partition.getOutOfSyncReplicas's test of one ISR follower rr of leader replica
// p. From 2.1 (KAFKA-7152) a follower at the leader's LEO is never out of sync (Replica.isCaughtUp
// in 3.7.0); before (0.10.2.2, 0.11.0.2) only the time since it last caught up counts, so a
// follower that stops fetching leaves the ISR after replica.lag.time.max.ms even when nothing was
// produced.
func (p *Partition) OutOfSync(rr *Replica, now int64, rules *IsrRules) bool {
	if !rules.LevelFollowerStaysInIsr {
		return now-rr.LastCaughtUpTime() > rules.LagTimeMaxMs
	}
	return !rr.IsCaughtUp(p.log.LogEndOffset(), now, rules.LagTimeMaxMs)
}

// MaybeExpandIsr is Partition.maybeExpandIsr of leader replica p of pid after an accepted fetch
// by follower rr.
func (rm *ReplicaManager) MaybeExpandIsr(h Host, pid int32, p *Partition, rr *Replica) {
	if s := p.State(); s.IsInflight() || s.InISR(rr.Broker()) || !h.IsrEligible(rr.Broker()) {
		return
	}
	rules := h.IsrRules()
	if rr.LogEndOffset() < p.log.HighWatermark() ||
		(rr.LogEndOffset() < p.EpochStartOffset() && rules.ExpandNeedsEpochStart && !rules.NoEpochStartRule) {
		return // KAFKA-7128: the follower must reach the current leader epoch
	}
	rm.submitAlterPartition(h, &rules, pid, p, true, []int32{rr.Broker()}, protocol.SortedUnion(p.State().ISR(), []int32{rr.Broker()}))
}

// IsrShrinkTask is the periodic shrink check over the broker's leaders: each ISR follower out of
// sync leaves the ISR; then the task runs again half a replica.lag.time.max.ms later.
func (rm *ReplicaManager) IsrShrinkTask(h Host) {
	rules := h.IsrRules()
	if rm.zkBlocked == nil { // else the task's last run still waits on ZooKeeper (zkBlockedWrite)
		if hosted := h.Hosted(); len(rm.shrinkOrder) != len(hosted) {
			rm.shrinkOrder = poolOrder(hosted, h.TP) // allPartitions' order (pool_order.go)
		}
		rm.shrinkIsrs(h, &rules, rm.shrinkOrder)
	}
	h.ScheduleIsrShrink(h.Now() + max(1, rules.LagTimeMaxMs/2))
}

// shrinkIsrs is ReplicaManager.maybeShrinkIsr over pids, in order (IsrShrinkTask: allPartitions'
// order, poolOrder). A write that blocks on
// ZooKeeper stops the walk: the partitions after it wait with it (zkBlockedWrite.rest).
func (rm *ReplicaManager) shrinkIsrs(h Host, rules *IsrRules, pids []int32) {
	now := h.Now()
	for i, pid := range pids {
		p := h.Replica(pid)
		s := p.State()
		if !p.IsLeader() || p.offline || s.IsInflight() {
			continue
		}
		var out []int32
		for _, id := range s.ISR() {
			if rr := p.Remote(id); rr != nil && p.OutOfSync(rr, now, rules) {
				out = append(out, id)
			}
		}
		if len(out) > 0 {
			rm.submitAlterPartition(h, rules, pid, p, false, out, protocol.SortedMinus(s.ISR(), out))
			if rm.zkBlocked != nil {
				rm.zkBlocked.rest = slices.Clone(pids[i+1:])
				return
			}
		}
	}
}

// zkBlockedWrite is a shrink's ISR write made without a ZooKeeper connection, before 2.7. Kafka's
// ZooKeeper client does not fail it: it retries until connected (0.10.2.2 ZkClient
// .retryUntilConnected under ZkUtils.conditionalUpdatePersistentPath; 2.1.1 KafkaZkClient
// .retryRequestsUntilConnected, ZooKeeperClient.waitUntilConnected), inside
// Partition.maybeShrinkIsr's inWriteLock(leaderIsrUpdateLock). So the isr-expiration task checks
// no other partition meanwhile (rest: those its walk had not reached), and every produce to the
// partition waits for the lock (appendRecordsToLeader's inReadLock). When the connection comes
// back (heal) the write goes through with the zkVersion cached before: it succeeds on the same
// session, and fails the version check once the controller rewrote the znode (a leader elected
// after the session expired).
type zkBlockedWrite struct {
	pid      int32
	verb     string
	newISR   []int32
	rest     []int32
	produces []*protocol.Message
}

// ZooKeeperReconnected runs what waited for the broker's ZooKeeper connection (zkBlockedWrite):
// the write, then the produces held by the partition's lock, in the order they came, then the
// rest of the shrink check.
func (rm *ReplicaManager) ZooKeeperReconnected(h Host) {
	defer rm.isrNotificationReconnected(h) // the propagation task's write, on its own thread
	bw := rm.zkBlocked
	if bw == nil {
		return
	}
	rm.zkBlocked = nil
	if p := h.Replica(bw.pid); p != nil && p.IsLeader() {
		rm.writeIsr(h, bw.pid, p, bw.verb, bw.newISR)
	}
	for _, m := range bw.produces {
		rm.HandleProduce(h, m)
	}
	rules := h.IsrRules()
	rm.shrinkIsrs(h, &rules, bw.rest)
}

// submitAlterPartition moves p to PendingExpand or PendingShrink and asks the controller; before
// IBP 2.7 the leader writes ZooKeeper itself (Host.WriteIsr).
func (rm *ReplicaManager) submitAlterPartition(h Host, rules *IsrRules, pid int32, p *Partition, expand bool, ids, newISR []int32) {
	verb := "shrink"
	if expand {
		verb = "expand"
	}
	if !rules.AlterPartition {
		rm.writeIsr(h, pid, p, verb, newISR)
		return
	}
	p.leadership().state.Prepare(expand, ids, newISR)
	h.Emit(Event{Kind: IsrChangeAsked, Pid: protocol.Some(pid), OldISR: p.State().ISR(), ISR: newISR, Reason: verb})
	rm.sendAlterPartition(h, pid, p)
}

// sendAlterPartition submits p's pending change to the AlterPartitionManager (3.7.0
// DefaultAlterPartitionManager.submit): it goes at once unless an AlterPartition of the broker is
// in flight, when it waits for that one's answer (maybePropagateIsrChanges sends only while
// inflightRequest is false, and again from the response handler). So of two partitions a shrink
// check finds out of sync, the second reaches the controller a round trip after the first.
func (rm *ReplicaManager) sendAlterPartition(h Host, pid int32, p *Partition) {
	if len(rm.alterInFlight) > 0 {
		if !slices.Contains(rm.alterUnsent, pid) {
			rm.alterUnsent = append(rm.alterUnsent, pid)
		}
		return
	}
	rm.sendAlterPartitionNow(h, pid, p)
}

// alterPartitionDone takes request id off the AlterPartitions in flight; once all of them are
// answered or failed, the changes submitted meanwhile are sent together (the response handler's
// clearInFlightRequest, then maybePropagateIsrChanges, 3.7.0 AlterPartitionManager.sendRequest).
// A partition that no longer leads, or whose change was answered or dropped meanwhile, is not.
func (rm *ReplicaManager) alterPartitionDone(h Host, id uint64) {
	i := slices.Index(rm.alterInFlight, id)
	if i < 0 {
		return
	}
	rm.alterInFlight = slices.Delete(rm.alterInFlight, i, i+1)
	if len(rm.alterInFlight) > 0 || len(rm.alterUnsent) == 0 {
		return
	}
	unsent := rm.alterUnsent
	rm.alterUnsent = nil
	for _, pid := range unsent {
		p := h.Replica(pid)
		if p == nil || !p.IsLeader() {
			continue
		}
		if s := p.State(); !s.IsInflight() || s.Stuck() || s.InFlight() != 0 {
			continue
		}
		rm.sendAlterPartitionNow(h, pid, p)
	}
}

// sendAlterPartitionNow sends p's pending change to the active controller, or tries again
// noControllerPollMs later when there is none.
func (rm *ReplicaManager) sendAlterPartitionNow(h Host, pid int32, p *Partition) {
	to := h.ActiveController()
	if to < 0 {
		h.ScheduleAlterPartitionResend(pid, h.Now()+noControllerPollMs)
		return
	}
	m := &protocol.Message{Type: protocol.MsgAlterPartition, From: rm.broker, To: to, AlterPartition: &protocol.AlterPartitionRequest{
		BrokerID: rm.broker, BrokerEpoch: h.BrokerEpoch(), TP: h.TP(pid), LeaderEpoch: p.leaderEpoch,
		PartitionEpoch: p.partitionEpoch, NewISR: p.State().PendingISR()}}
	h.Send(m)
	p.leadership().state.Sent(m.ID)
	rm.alterInFlight = append(rm.alterInFlight, m.ID)
}

// ResendAlterPartition is the retry timer of pid's pending change.
func (rm *ReplicaManager) ResendAlterPartition(h Host, pid int32) {
	p := h.Replica(pid)
	if p == nil || !p.IsLeader() {
		return
	}
	if s := p.State(); !s.IsInflight() || s.Stuck() || s.InFlight() != 0 {
		return
	}
	rm.sendAlterPartition(h, pid, p)
}

// AlterPartitionFailed handles a failed send or timeout of request req: try again later.
func (rm *ReplicaManager) AlterPartitionFailed(h Host, req *protocol.Message) {
	defer rm.alterPartitionDone(h, req.ID)
	pid, p := h.ReplicaNamed(req.AlterPartition.TP)
	if p == nil {
		return
	}
	s := p.State()
	if !s.IsInflight() || s.InFlight() != req.ID {
		return
	}
	s.SendFailed()
	h.ScheduleAlterPartitionResend(pid, h.Now()+alterPartitionRetryMs)
}

// HandleAlterPartitionResponse is Partition.submitAlterPartition's callback.
func (rm *ReplicaManager) HandleAlterPartitionResponse(h Host, m *protocol.Message) {
	defer rm.alterPartitionDone(h, m.ReplyTo) // after the partition's callback, as Kafka's
	resp := m.AlterPartitionResponse
	pid, p := h.ReplicaNamed(resp.TP)
	if p == nil {
		return
	}
	s := p.State() // not nil past here: a change is in flight only in a leader's state
	if !s.IsInflight() || s.InFlight() != m.ReplyTo {
		return // the partition state changed meanwhile (a LeaderAndIsr arrived)
	}
	switch resp.Error {
	case protocol.ErrNone:
		if resp.LeaderEpoch != p.leaderEpoch || resp.PartitionEpoch < p.partitionEpoch {
			s.WaitForMetadata()
			return
		}
		p.SessionsChanged()
		s.Commit(resp.ISR)
		p.partitionEpoch = resp.PartitionEpoch
		if rm.MaybeIncrementLeaderHW(h, pid, p, -1) {
			rm.tryCompleteDelayedRequests(h, pid, p) // Partition.sendAlterPartitionRequest's callback
		}
	case protocol.ErrIneligibleReplica:
		s.Revert() // back to the last committed state
	case protocol.ErrFencedLeaderEpoch, protocol.ErrInvalidUpdateVersion, protocol.ErrInvalidRequest, protocol.ErrUnknownTopicOrPartition:
		s.WaitForMetadata() // wait for new metadata
	default:
		s.SendFailed()
		h.ScheduleAlterPartitionResend(pid, h.Now()+alterPartitionRetryMs)
	}
}

// IsrWrite is ZooKeeper's answer to a leader's own ISR write before 2.7 (Host.UpdateIsr):
// whether the leader's session is connected, whether the write succeeded (the cached zkVersion
// matched), the znode's version (the new one, or ZooKeeper's current one on a mismatch), its
// leader epoch, and the ISR before and after (shared: not to be changed).
type IsrWrite struct {
	Connected, Written   bool
	Version, LeaderEpoch int32
	Old, ISR             []int32
}

// writeIsr is Partition.updateIsr before AlterIsr (KIP-497, IBP 2.7): the leader writes the
// partition's znode with its own leader and leader epoch (no bump), conditional on the zkVersion
// it cached (ReplicationUtils.updateLeaderAndIsr). On success it takes the new ISR at once, so
// there is no pending state and no maximal ISR; on a version mismatch it skips the change
// ("Cached zkVersion [..] not equal to that in zookeeper") and tries again at its next ISR check,
// which fails again until a LeaderAndIsr brings the new version. A written change is recorded
// (recordIsrChange) for the isr-change-propagation task, whose notification has the controller
// send UpdateMetadata for it (isr_change_notification.go). Simplification: ZooKeeper answers at
// once (Host.UpdateIsr). A shrink's write without a
// ZooKeeper connection blocks until the connection is back (zkBlockedWrite); an expansion's,
// which only a fetch reaching a broker cut off from ZooKeeper could make, fails at once.
func (rm *ReplicaManager) writeIsr(h Host, pid int32, p *Partition, verb string, newISR []int32) {
	w := h.UpdateIsr(pid, newISR, p.partitionEpoch)
	if !w.Connected && verb == "shrink" {
		rm.zkBlocked = &zkBlockedWrite{pid: pid, verb: verb, newISR: slices.Clone(newISR)}
		h.Emit(Event{Kind: IsrWriteSkipped, Pid: protocol.Some(pid), OldISR: p.State().ISR(), ISR: newISR, Reason: verb,
			Name: "blocked", Arg: [4]int64{int64(p.partitionEpoch), int64(w.Version), 0}})
		return
	}
	if !w.Written {
		h.Emit(Event{Kind: IsrWriteSkipped, Pid: protocol.Some(pid), OldISR: p.State().ISR(), ISR: newISR, Reason: verb,
			Name: "skipped", Arg: [4]int64{int64(p.partitionEpoch), int64(w.Version), flag(w.Connected)}})
		return
	}
	p.SessionsChanged()
	p.leadership().state.Commit(slices.Clone(w.ISR)) // nothing is in flight before AlterIsr
	p.partitionEpoch = w.Version
	h.IsrChanged(pid, w.Old, w.ISR)
	rm.recordIsrChange(h, pid)
	h.Emit(Event{Kind: IsrWritten, Pid: protocol.Some(pid), OldISR: w.Old, ISR: w.ISR,
		Epoch: protocol.Some(int64(w.LeaderEpoch)), Reason: leaderVerb(verb), Arg: [4]int64{int64(w.Version)}})
	if rm.MaybeIncrementLeaderHW(h, pid, p, -1) {
		rm.tryCompleteDelayedRequests(h, pid, p) // Partition.maybeShrinkIsr / maybeExpandIsr
	}
}
