package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// ReplicaManager is a broker's ReplicaManager: the controller epoch it has seen, its fetcher
// manager, whether its HW checkpoint task runs, the FetchSessionCache of the followers fetching
// from it, and its handling of the controller's requests (LeaderAndIsr: becomeLeaderOrFollower,
// with makeLeaders and makeFollowers, and Partition.makeLeader and makeFollower; StopReplica), of
// Fetch (leader_fetch.go, delayed_fetch.go), Produce (produce.go), the ISR's changes
// (isr_change.go) and the follower's OffsetsForLeaderEpoch and ListOffsets (leader_answers.go).
// Its replicas are found through Host.
type ReplicaManager struct {
	broker          int32
	controllerEpoch int32 // the highest seen
	checkpointing   bool  // the HW checkpoint task has started
	fetchers        *FetcherManager
	// sessions is the FetchSessionCache (Kafka's FetchManager holds it; here the one who reads
	// it does). It is lost with the process (LoseFetchSessions).
	sessions FetchSessionCache
	// parkSeq numbers the fetches parked on the broker in the order they were parked (Kafka's
	// watch lists keep that order, and complete them in it). It never goes back: a timer checks
	// the number of the park it was set for.
	parkSeq uint64
	// Buffers the fetch sessions' reads reuse: the dirty indices handed out (takeDirty), a
	// session read's data, and a parked session fetch's answer (completeSessionFetch); and the
	// reads of a full fetch that parked, for the next full fetch or parked fetch's answer
	// (parkedReads).
	dirtySpare  []int32
	sessionData []protocol.FetchPartitionData
	answerData  []protocol.FetchPartitionData
	parkedData  []protocol.FetchPartitionData
	// hwMoved are the replicas whose HW may differ from their checkpoint (each marked hwNoted),
	// kept beside the replicas so that the checkpoint task visits them only: a walk over every
	// replica reads a Partition and its log each, cold, where in a large cluster most HWs did not
	// move in an interval. Every replica known, online and with its HW not at its checkpoint is
	// on it (noteHW, called wherever a HW, the known flag or the log moves), so the task writes
	// what a walk over all would. Pids (Host.Replica), not pointers: nothing for the collector
	// to scan. (A checkpoint looks each up in the host index: some 300,000 in a 100,000-partition
	// run's ten seconds, where a slot kept in every Partition took the four bytes that keep it
	// at two cache lines.)
	hwMoved []int32
	// shrinkOrder is the broker's replicas in the order the isr-expiration task walks them
	// (poolOrder: allPartitions' ConcurrentHashMap order), made at its first run.
	shrinkOrder []int32
	// zkBlocked is the shrink's ISR write waiting for the broker's ZooKeeper connection, before
	// 2.7 (isr_change.go), or nil. The process loses it.
	zkBlocked *zkBlockedWrite
	// isrChanges are the ISR changes written to ZooKeeper and not yet propagated to the
	// controller, before 2.7 (isr_change_notification.go). The process loses them.
	isrChanges isrChangeSet
	// shutdownWaits are the requests the fetcher threads the last LeaderAndIsr stopped were
	// blocked in, before 1.1 (heldLeaderAndIsr); the broker takes them.
	shutdownWaits []uint64
	// alterInFlight and alterUnsent are the AlterPartitionManager's (3.7.0
	// DefaultAlterPartitionManager: inflightRequest and unsentIsrUpdates): the AlterPartition
	// requests sent together and not yet answered (Kafka's one request; the engine sends one per
	// partition, all at once), and the partitions whose change was submitted meanwhile, in order
	// (isr_change.go). The process loses them.
	alterInFlight []uint64
	alterUnsent   []int32
	// metadata is the broker's metadata cache, as far as a rule reads it (metadata_cache.go).
	// The process loses it.
	metadata MetadataCache
}

// NewReplicaManager is broker's replica manager over its fetcher manager fetchers.
func NewReplicaManager(broker int32, fetchers *FetcherManager) ReplicaManager {
	return ReplicaManager{broker: broker, fetchers: fetchers}
}

// ControllerEpoch is the highest controller epoch the broker has seen.
func (rm *ReplicaManager) ControllerEpoch() int32 { return rm.controllerEpoch }

// Checkpointing reports whether the HW checkpoint task runs (it starts with the first
// LeaderAndIsr).
func (rm *ReplicaManager) Checkpointing() bool { return rm.checkpointing }

// FetchSessions is the broker's FetchSessionCache.
func (rm *ReplicaManager) FetchSessions() *FetchSessionCache { return &rm.sessions }

// Started is the replica manager of a broker process that just started: no controller epoch
// seen, no checkpoint task.
func (rm *ReplicaManager) Started() {
	rm.controllerEpoch, rm.checkpointing, rm.zkBlocked = 0, false, nil
	rm.alterInFlight, rm.alterUnsent = rm.alterInFlight[:0], rm.alterUnsent[:0]
	rm.metadata.Clear()
}

// Metadata is the broker's metadata cache.
func (rm *ReplicaManager) Metadata() *MetadataCache { return &rm.metadata }

// BecomeLeaderOrFollower applies a LeaderAndIsr request, with every rejection of Kafka's code.
func (rm *ReplicaManager) BecomeLeaderOrFollower(h Host, req *protocol.LeaderAndIsrRequest) *protocol.LeaderAndIsrResponse {
	resp := &protocol.LeaderAndIsrResponse{}
	rules := h.ReplicaRules()
	if rules.BrokerEpochs && req.BrokerEpoch < h.BrokerEpoch() { // KIP-380 (2.2): no broker epochs before
		resp.Error = protocol.ErrStaleBrokerEpoch
		h.Emit(rejected(resp.Error, req.BrokerEpoch, h.BrokerEpoch()))
		return resp
	}
	if req.ControllerEpoch < rm.controllerEpoch {
		resp.Error = protocol.ErrStaleControllerEpoch
		h.Emit(rejected(resp.Error, int64(req.ControllerEpoch), int64(rm.controllerEpoch)))
		return resp
	}
	rm.controllerEpoch = req.ControllerEpoch
	leaders := make([]protocol.LeaderAndIsrState, 0, len(req.Partitions))
	followers := make([]protocol.LeaderAndIsrState, 0, len(req.Partitions))
	for _, ps := range req.Partitions {
		_, r := h.ReplicaNamed(ps.TP)
		errName := protocol.ErrNone
		switch {
		case r == nil || !slices.Contains(ps.Replicas, rm.broker):
			errName = protocol.ErrUnknownTopicOrPartition
		case r.Offline():
			errName = protocol.ErrKafkaStorage
		case ps.LeaderEpoch > r.LeaderEpoch():
			if ps.Leader == rm.broker {
				leaders = append(leaders, ps)
			} else {
				followers = append(followers, ps)
			}
		default:
			// Equal or older leader epoch: ignored.
			errName = protocol.ErrStaleControllerEpoch
		}
		resp.Partitions = append(resp.Partitions, protocol.PartitionError{TP: ps.TP, Error: errName})
	}
	rm.makeLeaders(h, leaders)
	rm.makeFollowers(h, &rules, followers, req.LiveLeaders)
	rm.StartCheckpoints(h, &rules)
	if rules.ShutdownAwaitsRequest {
		rm.shutdownWaits = rm.fetchers.IdleInflight()
	}
	rm.fetchers.ShutdownIdleFetchers(h)
	return resp
}

// SetControllerEpoch records the controller epoch of a LeaderAndIsr applied whole (the cluster's
// start takes its bulk path: the engine's start.go).
func (rm *ReplicaManager) SetControllerEpoch(epoch int32) { rm.controllerEpoch = epoch }

// StartCheckpoints starts the HW checkpoint task after the first LeaderAndIsr's role changes
// (ReplicaManager.startHighWaterMarksCheckPointThread): scheduled with delay 0 (0.10.2.2 and
// 2.1.1: KafkaScheduler.schedule's default delay; 3.7.0: `schedule("highwatermark-checkpoint",
// ..., 0L, interval)`), so the first checkpoint is written at once, then every
// replica.high.watermark.checkpoint.interval.ms.
func (rm *ReplicaManager) StartCheckpoints(h Host, rules *ReplicaRules) {
	if rm.checkpointing {
		return
	}
	rm.checkpointing = true
	rm.CheckpointHighWatermarks(h)
	h.ScheduleCheckpoint(h.Now() + rules.CheckpointIntervalMs)
}

// CheckpointHighWatermarks writes every known, online replica's HW to its checkpoint
// (replication-offset-checkpoint). Only those on hwMoved can differ from theirs; one unknown or
// offline is taken off the list, and put back when created (the only way back for both).
func (rm *ReplicaManager) CheckpointHighWatermarks(h Host) {
	for _, pid := range rm.hwMoved {
		r := h.Replica(pid)
		r.hwNoted = false
		if r.Known() && !r.Offline() {
			r.CheckpointHW(r.Log().HighWatermark())
		}
	}
	rm.hwMoved = rm.hwMoved[:0]
	if check := h.ReplicaRules().CheckpointCheck; check != nil {
		checkCheckpoints(h, check)
	}
}

// noteHW puts p on the checkpoint's list if its HW is not at its checkpoint: called after
// anything that moves a HW (a log's HW, truncation, start or recovery) or creates a replica.
func (rm *ReplicaManager) noteHW(p *Partition) {
	if !p.hwNoted && p.log.HighWatermark() != p.hwCheckpoint {
		p.hwNoted = true
		rm.hwMoved = append(rm.hwMoved, p.pid)
	}
}

// CheckpointTask is one run of the checkpoint task, which then runs again an interval later.
func (rm *ReplicaManager) CheckpointTask(h Host) {
	rm.CheckpointHighWatermarks(h)
	h.ScheduleCheckpoint(h.Now() + h.ReplicaRules().CheckpointIntervalMs)
}

func (rm *ReplicaManager) makeLeaders(h Host, states []protocol.LeaderAndIsrState) {
	if len(states) == 0 {
		return
	}
	pids := make([]int32, len(states))
	for i, ps := range states {
		pids[i] = h.PidOf(ps.TP)
	}
	rm.fetchers.RemoveFetcherForPartitions(pids)
	for i, ps := range states {
		rm.MakeLeader(h, pids[i], h.Replica(pids[i]), ps, nil)
	}
}

// MakeLeader is Partition.makeLeader of r, the broker's replica of pid: it keeps its leader's
// state, the ISR, the followers' state and a new epoch cache entry in arrays cut from arena (the
// cluster's start), or in arrays of their own with arena nil.
func (rm *ReplicaManager) MakeLeader(h Host, pid int32, r *Partition, ps protocol.LeaderAndIsrState, arena *StartArena) {
	if ps.PartitionEpoch < r.PartitionEpoch() {
		return
	}
	r.SessionsChanged() // before the followers' state is reset
	wasLeader := r.IsLeader()
	r.Create()
	rm.noteHW(r)
	if r.lead == nil {
		r.lead = arena.leaderState()
	}
	r.lead.state.Commit(arena.clone(ps.ISR))
	if ps.LeaderEpoch > r.LeaderEpoch() {
		start := r.Log().LogEndOffset()
		if h.ReplicaRules().AssignEpochOnElection {
			r.Log().Cache().Assign(ps.LeaderEpoch, start)
		}
		// The followers keep the original assignment's order (an operator's chosen-leader
		// election reorders the request's Replicas).
		hosts := h.Assignment(pid)
		r.ResetRemotesIn(arena.remotes(len(hosts)-1), h.Now(), hosts, ps.ISR, wasLeader, start)
		if wasLeader && h.ReplicaRules().ReelectionFetchTimeForAll {
			r.lead.fetchedAllAt(h.Now()) // Replica.resetLastCaughtUpTime before 3.3
		}
		if r.lead.fetchSessions == nil { // each follower's session will cache it
			r.lead.fetchSessions = arena.sessionRefs(len(hosts) - 1)
		}
		r.SetLeaderEpoch(ps.LeaderEpoch)
		r.SetEpochStartOffset(start)
	}
	r.SetPartitionEpoch(ps.PartitionEpoch)
	r.SetLeader(rm.broker)
	if r.ConfirmHW() {
		h.HWConfirmed(r)
	}
	if !h.CountOnly(BecameLeader) {
		h.Emit(Event{Kind: BecameLeader, Pid: protocol.Some(pid), Epoch: protocol.Some(int64(r.LeaderEpoch())),
			ISR: r.State().ISR(), Reason: "leader", Arg: [4]int64{r.EpochStartOffset()}})
	}
	// Partition.makeLeader (0.10.2.2 l.197-199, 2.1.1 l.418-420, 3.7.0 l.800-802): "some
	// delayed operations may be unblocked after HW changed": tryCompleteDelayedRequests only
	// if the HW moved. A follower's fetch parked with the old leader epoch stays parked until
	// an append, a HW move or its max wait fences it (DelayedFetch.tryComplete's Case E).
	if rm.MaybeIncrementLeaderHW(h, pid, r, -1) {
		rm.tryCompleteDelayedRequests(h, pid, r)
	}
}

func (rm *ReplicaManager) makeFollowers(h Host, rules *ReplicaRules, states []protocol.LeaderAndIsrState, liveLeaders []int32) {
	var restart []int32 // indexes into states
	pids := make([]int32, 0, len(states))
	var reps []*Partition // the replicas of pids, for FollowerRestarts
	for i := range states {
		ps := &states[i]
		pid, r := h.ReplicaNamed(ps.TP)
		if !slices.Contains(liveLeaders, ps.Leader) {
			// The new leader is not alive (or there is none): Kafka only creates the log and
			// keeps the old leader and epoch (ReplicaManager.makeFollowers).
			r.SessionsChanged()
			r.Create()
			rm.noteHW(r)
			continue
		}
		if rm.MakeFollower(h, rules, pid, r, *ps) {
			restart = append(restart, int32(i))
			pids, reps = append(pids, pid), append(reps, r)
		}
	}
	if len(restart) == 0 {
		return
	}
	rm.fetchers.RemoveFetcherForPartitions(pids)
	for k, i := range restart {
		if st, ok := rm.FollowerRestarts(h, rules, pids[k], reps[k], &states[i]); ok {
			rm.fetchers.AddFetcher(h, states[i].Leader, st, rules.NumReplicaFetchers)
		}
	}
}

// FollowerRestarts is makeFollowers' work for one follower whose fetcher restarts, up to its
// fetcher: it returns the fetch state to hand it (FetcherManager.AddFetcher; the cluster's start
// sizes the threads first), unless the broker is shutting down. Before KIP-101 a new follower
// truncates to its own high watermark at once, before its parked requests complete and whether
// or not it is shutting down: 0.10.2.2's ReplicaManager.makeFollowers calls
// logManager.truncateTo(... highWatermark) and then tryCompleteDelayedProduce, and only the
// adding of fetchers waits on isShuttingDown. r is the broker's replica of pid (the callers have
// it: no lookup).
func (rm *ReplicaManager) FollowerRestarts(h Host, rules *ReplicaRules, pid int32, r *Partition, ps *protocol.LeaderAndIsrState) (PartitionFetchState, bool) {
	log := r.Log()
	if rules.TruncateToHW {
		h.Truncate(pid, r, log.HighWatermark(), "becoming follower: truncate to the own high watermark (pre-KIP-101)")
		// Its HW is final here, not a claim: 0.10.2.2 has no truncation round after this one
		// (no OffsetsForLeaderEpoch), and the only later cut, an out-of-range fetch's truncation
		// to the leader's LEO (ReplicaFetcherThread.handleOffsetOutOfRange), cannot reach below
		// a HW the leader's own HW covers. So the records below it count for
		// committed-divergence from now on, as the contract's "below both their high
		// watermarks" reads the HW Kafka's Replica holds (the checkpoint's, after a restart).
		if r.ConfirmHW() {
			h.HWConfirmed(r)
		}
	}
	rm.CompleteDelayedProduces(h, pid, r)
	rm.TryCompleteWatchers(h, r)
	r.releaseIdle() // the produces and fetches parked on it as a leader are answered
	if h.ShuttingDown() {
		return PartitionFetchState{}, false
	}
	return InitialFetchState(log, pid, ps.LeaderEpoch, rules.TruncateOnFetch), true
}

// MakeFollower is Partition.makeFollower of r, the broker's replica of pid; it reports whether
// the fetcher restarts (and so the follower truncates): from 2.1 on every new leader epoch
// (KAFKA-7395; 2.0.1's KAFKA-7164 on a jump of two or more), before only when the leader changed.
// Before 2.1 a new epoch with the same leader (the controller removed a dead replica from the
// ISR, say) updates the epoch and clears the ISR, and the fetcher goes on as it was.
func (rm *ReplicaManager) MakeFollower(h Host, rules *ReplicaRules, pid int32, r *Partition, ps protocol.LeaderAndIsrState) bool {
	if ps.PartitionEpoch < r.PartitionEpoch() {
		return false
	}
	r.SessionsChanged() // before its follower state goes
	newEpoch := ps.LeaderEpoch > r.LeaderEpoch()
	restart := newEpoch
	if !rules.FollowerRestartsOnNewEpoch {
		restart = r.Leader() != ps.Leader
	}
	r.Create()
	rm.noteHW(r)
	if newEpoch || r.IsLeader() {
		r.UnconfirmHW()
	}
	r.SetLeader(ps.Leader)
	r.SetLeaderEpoch(ps.LeaderEpoch)
	r.SetEpochStartOffset(-1)
	r.SetPartitionEpoch(ps.PartitionEpoch)
	if r.lead != nil { // a follower's ISR is empty, and it keeps no followers' state
		r.lead.state.Commit(nil)
		r.ClearRemotes()
		r.releaseIdle()
	}
	if !h.CountOnly(BecameFollower) {
		h.Emit(Event{Kind: BecameFollower, Pid: protocol.Some(pid), Epoch: protocol.Some(int64(r.LeaderEpoch())),
			Reason: "follower", Arg: [4]int64{int64(ps.Leader), int64(ps.LeaderEpoch)}})
	}
	return restart
}

// HandleStopReplica is ReplicaManager.stopReplicas for a StopReplica with deletePartition false
// (a controlled shutdown moves a follower out): it stops fetching the partitions named and
// answers. From 2.2 a request for an older registration of the broker is answered
// STALE_BROKER_EPOCH and not applied (KafkaApis.handleStopReplicaRequest's isBrokerEpochStale,
// 3.7.0); one from an older controller STALE_CONTROLLER_EPOCH, with no partitions (stopReplicas,
// 0.10.2.2 to 3.7.0); otherwise the broker takes the request's controller epoch and answers NONE
// for every partition, except, from 2.6 (StopReplicaPartitionErrors), KAFKA_STORAGE_ERROR for a
// replica on an offline log directory (HostedPartition.Offline). NB: 3.7.0's request also
// carries each partition's leader epoch, and its answer is FENCED_LEADER_EPOCH for a replica
// that knows a newer one; the engine's StopReplica carries no leader epoch (a controlled
// shutdown's carries the controller's latest, never older than the broker's: NONE; the
// controller reads no partition error of a stop that deletes nothing: docs/simplifications.md).
func (rm *ReplicaManager) HandleStopReplica(h Host, req *protocol.StopReplicaRequest) *protocol.StopReplicaResponse {
	resp := &protocol.StopReplicaResponse{}
	if resp.Error = rm.checkControllerRequest(h, req.BrokerEpoch, req.ControllerEpoch); resp.Error != protocol.ErrNone {
		return resp
	}
	storageErrors := h.ReplicaRules().StopReplicaPartitionErrors
	pids := make([]int32, 0, len(req.Partitions))
	resp.Partitions = make([]protocol.PartitionError, len(req.Partitions))
	for i, tp := range req.Partitions {
		resp.Partitions[i] = protocol.PartitionError{TP: tp}
		if _, r := h.ReplicaNamed(tp); storageErrors && r != nil && r.Offline() {
			resp.Partitions[i].Error = protocol.ErrKafkaStorage // HostedPartition.Offline: left alone
			continue
		}
		pids = append(pids, h.PidOf(tp))
	}
	rm.fetchers.RemoveFetcherForPartitions(pids)
	rm.fetchers.ShutdownIdleFetchers(h)
	return resp
}
