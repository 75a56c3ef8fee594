package engine

import (
	"fmt"
	"slices"
	"strconv"
)

// The broker's replica manager: LeaderAndIsr handling (ReplicaManager.becomeLeaderOrFollower)
// and the two role changes (Partition.makeLeader, Partition.makeFollower), following the seeds'
// Kafka 3.5 code.

// resetMemory forgets what a crash forgets. The log, the HW checkpoint and the epoch cache are on
// disk and stay.
func (r *replica) resetMemory() {
	r.ResetMemory() // known, offline, HW confirmed, leader, leader epoch, partition epoch, epoch start offset, followers, ISR, produces
	r.watchers = nil
	r.fetchSessions = nil
}

func (e *Engine) handleLeaderAndIsr(b *broker, m *Message) {
	resp := e.becomeLeaderOrFollower(b, m.LeaderAndIsr)
	e.send(&Message{Type: MsgLeaderAndIsrResponse, From: b.id, To: m.From, ReplyTo: m.ID, LeaderAndIsrResponse: resp})
}

// becomeLeaderOrFollower applies a LeaderAndIsr request, with every rejection of the seeds' code.
func (e *Engine) becomeLeaderOrFollower(b *broker, req *LeaderAndIsrRequest) *LeaderAndIsrResponse {
	resp := &LeaderAndIsrResponse{}
	if e.era.brokerEpochs && req.BrokerEpoch < b.brokerEpoch { // KIP-380 (2.2): no broker epochs before
		resp.Error = ErrStaleBrokerEpoch
		e.emit(Event{Type: EvRole, Broker: Some(b.id), Name: resp.Error.String(),
			Text: fmt.Sprintf("broker %d rejected a LeaderAndIsr for broker epoch %d: it is at broker epoch %d (%s)", b.id, req.BrokerEpoch, b.brokerEpoch, resp.Error)})
		return resp
	}
	if req.ControllerEpoch < b.controllerEpoch {
		resp.Error = ErrStaleControllerEpoch
		e.emit(Event{Type: EvRole, Broker: Some(b.id), Name: resp.Error.String(),
			Text: fmt.Sprintf("broker %d rejected a LeaderAndIsr from controller epoch %d: it has seen controller epoch %d (%s)", b.id, req.ControllerEpoch, b.controllerEpoch, resp.Error)})
		return resp
	}
	b.controllerEpoch = req.ControllerEpoch
	leaders := make([]LeaderAndIsrState, 0, len(req.Partitions))
	followers := make([]LeaderAndIsrState, 0, len(req.Partitions))
	for _, ps := range req.Partitions {
		r := e.localReplica(b.id, ps.TP)
		errName := ErrNone
		switch {
		case r == nil || !slices.Contains(ps.Replicas, b.id):
			errName = ErrUnknownTopicOrPartition
		case r.Offline():
			errName = ErrKafkaStorage
		case ps.LeaderEpoch > r.LeaderEpoch():
			if ps.Leader == b.id {
				leaders = append(leaders, ps)
			} else {
				followers = append(followers, ps)
			}
		default:
			// Equal or older leader epoch: ignored.
			errName = ErrStaleControllerEpoch
		}
		resp.Partitions = append(resp.Partitions, PartitionError{TP: ps.TP, Error: errName})
	}
	e.makeLeaders(b, leaders)
	e.makeFollowers(b, followers, req.LiveLeaders)
	if !b.checkpointing {
		// ReplicaManager.startHighWaterMarksCheckPointThread, after the first LeaderAndIsr's role
		// changes: the task is scheduled with delay 0 (0.10.2.2 and 2.1.1: KafkaScheduler.schedule's
		// default delay; 3.7.0: `schedule("highwatermark-checkpoint", ..., 0L, interval)`), so the
		// first checkpoint is written at once, then every
		// replica.high.watermark.checkpoint.interval.ms.
		b.checkpointing = true
		e.checkpointHighWatermarks(b)
		e.schedule(checkpointTask{e.timer(b)}.due(e.now + e.cfg.HighWatermarkCheckpointMs))
	}
	e.shutdownIdleFetchers(b)
	return resp
}

func (e *Engine) makeLeaders(b *broker, states []LeaderAndIsrState) {
	if len(states) == 0 {
		return
	}
	pids := make([]int32, len(states))
	for i, ps := range states {
		pids[i] = e.pidOf(ps.TP)
	}
	e.removeFetcherForPartitions(b, pids)
	for _, ps := range states {
		e.makeLeader(b, e.localReplica(b.id, ps.TP), ps)
	}
}

// makeLeader is Partition.makeLeader.
func (e *Engine) makeLeader(b *broker, r *replica, ps LeaderAndIsrState) {
	e.makeLeaderIn(b, r, ps, nil)
}

// makeLeaderIn is makeLeader keeping the ISR, the followers' state and a new epoch cache entry in
// arrays cut from arena (the cluster's start: start.go), or in arrays of their own with arena
// nil.
func (e *Engine) makeLeaderIn(b *broker, r *replica, ps LeaderAndIsrState, arena *startArena) {
	if ps.PartitionEpoch < r.PartitionEpoch() {
		return
	}
	e.sessionsChanged(r) // before resetRemotes
	wasLeader := r.IsLeader()
	r.Create()
	r.State().Commit(arena.clone(ps.ISR))
	if ps.LeaderEpoch > r.LeaderEpoch() {
		start := r.Log().LogEndOffset()
		if e.era.assignEpochOnElection {
			r.Log().Cache().AssignIn(arena.entry(), ps.LeaderEpoch, start)
		}
		r.ResetRemotesIn(arena.remotes(len(r.p.hosts)-1), e.now, r.p.hosts, ps.ISR, wasLeader, start)
		r.SetLeaderEpoch(ps.LeaderEpoch)
		r.SetEpochStartOffset(start)
	}
	r.SetPartitionEpoch(ps.PartitionEpoch)
	r.SetLeader(b.id)
	if r.ConfirmHW() {
		e.noteHWConfirmed(r)
	}
	if p := r.p; e.tracing() { // nobody hears a role change but the trace
		e.emit(Event{Type: EvRole, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index), Reason: "leader",
			Epoch: Some(int64(r.LeaderEpoch())), ISR: r.State().ISR(), render: describeRole, arg: [2]int64{r.EpochStartOffset()}})
	}
	if e.maybeIncrementHW(r) {
		e.completeDelayedProduces(r)
	}
	e.tryCompleteWatchers(b, r)
}

func (e *Engine) makeFollowers(b *broker, states []LeaderAndIsrState, liveLeaders []int32) {
	var restart []*LeaderAndIsrState
	for i := range states {
		ps := &states[i]
		r := e.localReplica(b.id, ps.TP)
		if !slices.Contains(liveLeaders, ps.Leader) {
			// The new leader is not alive (or there is none): Kafka only creates the log and
			// keeps the old leader and epoch (ReplicaManager.makeFollowers).
			e.sessionsChanged(r)
			r.Create()
			continue
		}
		if e.makeFollower(b, r, *ps) {
			if restart == nil {
				restart = make([]*LeaderAndIsrState, 0, len(states)-i)
			}
			restart = append(restart, ps)
		}
	}
	if len(restart) == 0 {
		return
	}
	pids := make([]int32, len(restart))
	for i, ps := range restart {
		pids[i] = e.pidOf(ps.TP)
	}
	e.removeFetcherForPartitions(b, pids)
	for _, ps := range restart {
		r := e.localReplica(b.id, ps.TP)
		if !e.era.epochRequests && !e.era.truncateOnFetch {
			// Before KIP-101 a new follower truncates to its own high watermark at once, before
			// its parked requests complete and whether or not it is shutting down: 0.10.2.2's
			// ReplicaManager.makeFollowers calls logManager.truncateTo(... highWatermark) and then
			// tryCompleteDelayedProduce, and only the adding of fetchers waits on isShuttingDown.
			e.truncate(r, r.Log().HighWatermark(), "becoming follower: truncate to the own high watermark (pre-KIP-101)")
		}
		e.completeDelayedProduces(r)
		e.tryCompleteWatchers(b, r)
		if b.state == brokerShuttingDown {
			continue
		}
		st := e.era.initialFetchState(r.Log(), e.pidOf(ps.TP), ps.LeaderEpoch)
		e.addFetcher(b, ps.Leader, st)
	}
}

// makeFollower is Partition.makeFollower; it reports whether the fetcher restarts (and so the
// follower truncates): from 2.1 on every new leader epoch (KAFKA-7395; 2.0.1's KAFKA-7164 on a
// jump of two or more), before only when the leader changed. Before 2.1 a new epoch with the same
// leader (the controller removed a dead replica from the ISR, say) updates the epoch and clears the
// ISR, and the fetcher goes on as it was.
func (e *Engine) makeFollower(b *broker, r *replica, ps LeaderAndIsrState) bool {
	if ps.PartitionEpoch < r.PartitionEpoch() {
		return false
	}
	e.sessionsChanged(r) // before its follower state goes
	newEpoch := ps.LeaderEpoch > r.LeaderEpoch()
	restart := newEpoch
	if !e.era.followerRestartsOnNewEpoch {
		restart = r.Leader() != ps.Leader
	}
	r.Create()
	if newEpoch || r.IsLeader() {
		r.UnconfirmHW()
	}
	r.SetLeader(ps.Leader)
	r.SetLeaderEpoch(ps.LeaderEpoch)
	r.SetEpochStartOffset(-1)
	r.SetPartitionEpoch(ps.PartitionEpoch)
	r.State().Commit(nil)
	r.ClearRemotes()
	if p := r.p; e.tracing() {
		e.emit(Event{Type: EvRole, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index), Reason: "follower",
			Epoch: Some(int64(r.LeaderEpoch())), render: describeRole, arg: [2]int64{int64(ps.Leader), int64(ps.LeaderEpoch)}})
	}
	return restart
}

// handleStopReplica stops fetching (controlled shutdown moves a follower out).
func (e *Engine) handleStopReplica(b *broker, m *Message) {
	req := m.StopReplica
	if req.ControllerEpoch < b.controllerEpoch {
		return
	}
	pids := make([]int32, len(req.Partitions))
	for i, tp := range req.Partitions {
		pids[i] = e.pidOf(tp)
	}
	e.removeFetcherForPartitions(b, pids)
	e.shutdownIdleFetchers(b)
}

// truncate cuts a replica's log at t and records what was cut.
func (e *Engine) truncate(r *replica, t int64, reason string) {
	oldHW := r.Log().HighWatermark()
	oldLEO, oldStart := r.Log().LogEndOffset(), r.Log().LogStartOffset()
	cut := r.Log().TruncateTo(t)
	if r.Log().LogStartOffset() != oldStart {
		e.logStartMoved(r) // below the log start: the log starts anew at t, with or without records cut
	}
	if len(cut) == 0 && r.Log().LogEndOffset() == oldLEO {
		return
	}
	// Records cut, or an empty log started anew below its old start (Kafka's truncateTo calls
	// truncateFullyAndStartAt when the target is below the first segment): its end moved.
	e.sessionsChanged(r)
	e.emitTruncate(r, oldLEO, cut, reason)
	if hw := r.Log().HighWatermark(); hw != oldHW {
		e.hwChanged(r, oldHW, "truncation")
	}
	e.noteLogCut(r, t)
}

func (e *Engine) emitTruncate(r *replica, oldLEO int64, cut []commitlogRecord, reason string) {
	p := r.p
	to := r.Log().LogEndOffset()
	e.emit(Event{Type: EvTruncate, Broker: Some(r.Broker()), Topic: p.topic, Partition: Some(p.index),
		From: Some(oldLEO), To: Some(to), Records: cut, Reason: reason,
		Text: fmt.Sprintf("broker %d truncated %s from offset %d to %d (%d records dropped): %s", r.Broker(), p.name(), oldLEO, to, len(cut), reason)})
}

// checkpointTask writes every hosted replica's HW to replication-offset-checkpoint.
func (e *Engine) checkpointTask(b *broker) {
	e.checkpointHighWatermarks(b)
	e.schedule(checkpointTask{e.timer(b)}.due(e.now + e.cfg.HighWatermarkCheckpointMs))
}

func (e *Engine) checkpointHighWatermarks(b *broker) {
	for _, pid := range b.hosted {
		r := b.replicaOf(pid)
		if r.Known() && !r.Offline() {
			r.CheckpointHW(r.Log().HighWatermark())
		}
	}
}

// describeRole is a role change's text (made when read: Narrate): arg is the epoch start offset
// for a leader, the leader and its epoch for a follower.
// It appends with strconv rather than fmt: a large cluster's start narrates one per replica.
func describeRole(ev *Event) string {
	b := make([]byte, 0, 112)
	b = append(b, "broker "...)
	b = strconv.AppendInt(b, int64(ev.Broker.V), 10)
	if ev.Reason == "leader" {
		b = append(b, " became leader of "...)
	} else {
		b = append(b, " became follower of "...)
	}
	b = append(b, ev.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ev.Partition.V), 10)
	if ev.Reason == "leader" {
		b = append(b, " in leader epoch "...)
		b = strconv.AppendInt(b, ev.Epoch.V, 10)
		b = append(b, " (epoch start offset "...)
		b = strconv.AppendInt(b, ev.arg[0], 10)
		b = append(b, ", ISR "...)
		b = appendIDs(b, ev.ISR)
		b = append(b, ')')
		return string(b)
	}
	b = append(b, " under leader "...)
	b = strconv.AppendInt(b, ev.arg[0], 10)
	b = append(b, " in leader epoch "...)
	b = strconv.AppendInt(b, ev.arg[1], 10)
	return string(b)
}

// appendIDs appends ids as fmt's %v prints them: [1 2 3], and [] for none.
func appendIDs(b []byte, ids []int32) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']')
}
