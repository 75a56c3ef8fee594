package engine

import (
	"fmt"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// cluster is broker b's brk.Cluster: what its brk.Broker asks of the engine, in brk.Cluster's
// groups and order (time and rules; the network and the storage it lends; timers on the agenda;
// events; the observers' facts; the named shortcuts). Each broker has one, made with it, so a
// thread's turn allocates none. It reaches no other broker (TestBrokerReachesOnlyItself).
type cluster struct {
	e *Engine
	b *broker
}

// Time and rules.

func (h *cluster) Now() int64 { return h.e.now }

// Rules reads the era and the config at each turn: a config action can change the settings.
func (h *cluster) Rules() brk.FetcherRules {
	e := h.e
	return brk.FetcherRules{EpochRequests: e.era.epochRequests, EmptyCacheAsks: e.era.emptyCacheAsks,
		Fencing: e.era.fencing, TruncateOnFetch: e.era.truncateOnFetch, Sessions: e.era.fetchSessions,
		BackoffMs: max(1, e.cfg.ReplicaFetchBackoffMs), MaxWaitMs: e.cfg.ReplicaFetchWaitMaxMs,
		MinBytes: e.cfg.ReplicaFetchMinBytes, OutOfRangeFatal: !e.era.outOfRangeNeverFatal,
		UncleanElection: e.cfg.UncleanLeaderElectionEnable, WalkAll: e.followerWalkAll, Check: e.followerCheck}
}

func (h *cluster) ReplicaRules() brk.ReplicaRules {
	e := h.e
	return brk.ReplicaRules{BrokerEpochs: e.era.brokerEpochs, AssignEpochOnElection: e.era.assignEpochOnElection,
		FollowerRestartsOnNewEpoch: e.era.followerRestartsOnNewEpoch,
		TruncateToHW:               !e.era.epochRequests && !e.era.truncateOnFetch, TruncateOnFetch: e.era.truncateOnFetch,
		NumReplicaFetchers: e.cfg.NumReplicaFetchers, CheckpointIntervalMs: e.cfg.HighWatermarkCheckpointMs,
		NotLeaderForUnknownLocal: e.era.notLeaderForUnknownLocal, EpochAnswerNamesEpoch: e.era.epochAnswerNamesEpoch}
}

// LeaderFetchRules reads the era and the config at each fetch: a config action can change the
// settings.
func (h *cluster) LeaderFetchRules() brk.LeaderFetchRules {
	e := h.e
	return brk.LeaderFetchRules{Sessions: e.era.fetchSessions, SessionTouchedByFetch: e.era.sessionTouchedByFetch,
		NotLeaderForUnknownLocal: e.era.notLeaderForUnknownLocal, MaxBytes: e.cfg.ReplicaFetchMaxBytes,
		RecordSizeBytes: e.cfg.RecordSizeBytes, SessionSlots: e.cfg.MaxIncrementalFetchSessionSlots,
		ReadAll: e.sessionReadAll, Check: e.sessionCheck}
}

func (h *cluster) IsrRules() brk.IsrRules {
	e := h.e
	return brk.IsrRules{AlterPartition: e.era.alterPartition, ExpandNeedsEpochStart: e.era.expandNeedsEpochStart,
		LevelFollowerStaysInIsr: e.era.levelFollowerStaysInIsr, LagTimeMaxMs: e.cfg.ReplicaLagTimeMaxMs,
		RetryBackoffMs: e.retryBackoff(), NoEpochStartRule: e.unsafe.noEpochStartRule}
}

func (h *cluster) HWRules() brk.HWRules { return h.e.hwRules() }

// ProcessRules reads the era and the config at each use: a config action can change them.
func (h *cluster) ProcessRules() brk.ProcessRules {
	e := h.e
	return brk.ProcessRules{ControlledShutdownMaxRetries: e.cfg.ControlledShutdownMaxRetries,
		ControlledShutdownRetryBackoffMs: e.cfg.ControlledShutdownRetryBackoffMs,
		BackoffAfterLastShutdownAttempt:  !e.era.noBackoffAfterLastShutdownAttempt,
		LogDirFailureHandling:            e.era.logDirFailureHandling, RecoverAtFirstStart: e.generalStart}
}

// FlushIntervalMessages is read at each append: a config action can change it.
func (h *cluster) FlushIntervalMessages() int64 { return h.e.cfg.LogFlushIntervalMessages }

func (h *cluster) PidOf(tp TP) int32 { return h.e.pidOf(tp) }

func (h *cluster) TP(pid int32) TP { return h.e.partitions[pid].tp() }

func (h *cluster) Assignment(pid int32) []int32 { return h.e.partitions[pid].hosts }

// The network and the storage it lends.

func (h *cluster) Send(m *Message) { h.e.send(m) }

// NewFetch hands out the engine's spare Fetch storage, a new one if there is none; KeepFetch
// takes one built but not sent back as the spare (one for the whole cluster: a thread that builds
// a Fetch sends it at once).
func (h *cluster) NewFetch() *brk.FetchMessage {
	if x := h.e.spareFetch; x != nil {
		h.e.spareFetch = nil
		return x
	}
	return &brk.FetchMessage{}
}

func (h *cluster) KeepFetch(x *brk.FetchMessage) { h.e.spareFetch = x }

func (h *cluster) SendFetchResponse(m *Message, resp FetchResponse) {
	h.e.sendFetchResponse(h.b, m, resp)
}

func (h *cluster) SendSessionAnswer(m *Message, resp FetchResponse) {
	h.e.sendSessionAnswer(h.b, m, resp)
}

func (h *cluster) NewDelayedProduce(m *Message, base int64, n int) *brk.DelayedProduce {
	return h.e.delayedProduces.New(m, base, n)
}

// ProcessGone is the network's part of a process gone: its requests in flight are forgotten
// (its connections are gone) and those to it fail; a crash cuts its ZooKeeper connection (the
// session expires unless it comes back in time), a clean shutdown closes the session.
func (h *cluster) ProcessGone(clean bool) {
	h.e.forgetRequestsOf(h.b.id)
	h.e.resetRequestsTo(h.b.id)
	if clean {
		h.e.deregister(h.b.id)
	} else {
		h.e.disconnect(h.b.id)
	}
}

// Timers on the agenda (engine.go's handle fires each into the brk.Broker's entry point).

func (h *cluster) ScheduleWake(t *brk.FetcherThread, at int64) {
	h.e.schedule(fetcherWake{h.e.timer(h.b), fetcherKey(t.Leader(), t.ID())}.due(at))
}

func (h *cluster) ScheduleFetchTimeout(df *brk.DelayedFetch, at int64) {
	h.e.schedule(delayedFetchDone{h.e.timer(h.b), df, df.Seq()}.due(at))
}

func (h *cluster) ScheduleProduceTimeout(dp *brk.DelayedProduce, at int64) {
	h.e.schedule(delayedProduceDone{h.e.timer(h.b), dp}.due(at))
}

func (h *cluster) ScheduleIsrShrink(at int64) { h.e.schedule(isrShrinkTask{h.e.timer(h.b)}.due(at)) }

func (h *cluster) ScheduleCheckpoint(at int64) { h.e.schedule(checkpointTask{h.e.timer(h.b)}.due(at)) }

func (h *cluster) ScheduleAlterPartitionResend(pid int32, at int64) {
	h.e.schedule(alterPartitionResend{h.e.timer(h.b), pid}.due(at))
}

func (h *cluster) ScheduleShutdownRetry(at int64) {
	h.e.schedule(shutdownRetry{h.e.timer(h.b)}.due(at))
}

// Events.

func (h *cluster) Failed(pid int32, why string) {
	p := h.e.partitions[pid]
	h.e.emit(Event{Type: EvFailed, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: why,
		Text: fmt.Sprintf("broker %d stopped fetching %s: %s", h.b.id, p.name(), why)})
}

func (h *cluster) FetcherStarted(id, leader int32) {
	h.e.emit(Event{Type: EvFetcher, Broker: Some(h.b.id), Reason: "started",
		Text: fmt.Sprintf("broker %d started fetcher %d for leader broker %d", h.b.id, id, leader)})
}

func (h *cluster) FetcherStopped(id, leader int32) {
	h.e.emit(Event{Type: EvFetcher, Broker: Some(h.b.id), Reason: "stopped",
		Text: fmt.Sprintf("broker %d stopped idle fetcher %d for leader broker %d", h.b.id, id, leader)})
}

// Exiting is a thread's fatal error: the broker process exits (brk.Broker.Exit).
func (h *cluster) Exiting(pid int32, why string) {
	p := h.e.partitions[pid]
	h.e.emit(Event{Type: EvFailed, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: "fatal",
		Text: fmt.Sprintf("broker %d exits: %s: %s", h.b.id, p.name(), why)})
}

func (h *cluster) LeaderAndIsrRejected(err KafkaError, requested, current int64) {
	b := h.b
	text := fmt.Sprintf("broker %d rejected a LeaderAndIsr from controller epoch %d: it has seen controller epoch %d (%s)", b.id, requested, current, err)
	if err == ErrStaleBrokerEpoch {
		text = fmt.Sprintf("broker %d rejected a LeaderAndIsr for broker epoch %d: it is at broker epoch %d (%s)", b.id, requested, current, err)
	}
	h.e.emit(Event{Type: EvRole, Broker: Some(b.id), Name: err.String(), Text: text})
}

// BecameLeader and BecameFollower write a role change, only into a recorded trace: nobody else
// hears it, and a large cluster's start has one per replica.
func (h *cluster) BecameLeader(pid int32) {
	if e := h.e; e.tracing() {
		r, p := h.b.Replica(pid), e.partitions[pid]
		e.emit(Event{Type: EvRole, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: "leader",
			Epoch: Some(int64(r.LeaderEpoch())), ISR: r.State().ISR(), render: describeRole, arg: [2]int64{r.EpochStartOffset()}})
	}
}

func (h *cluster) BecameFollower(pid int32, leader, leaderEpoch int32) {
	if e := h.e; e.tracing() {
		r, p := h.b.Replica(pid), e.partitions[pid]
		e.emit(Event{Type: EvRole, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: "follower",
			Epoch: Some(int64(r.LeaderEpoch())), render: describeRole, arg: [2]int64{int64(leader), int64(leaderEpoch)}})
	}
}

// LeaderAppended writes a leader's append, only into a recorded trace (a large run appends by
// the hundred thousand).
func (h *cluster) LeaderAppended(pid int32, base int64) {
	if e := h.e; e.tracing() {
		r, p := h.b.Replica(pid), e.partitions[pid]
		e.emit(Event{Type: EvAppend, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index),
			From: Some(base), To: Some(r.Log().LogEndOffset()), Epoch: Some(int64(r.LeaderEpoch())),
			render: describeAppend})
	}
}

func (h *cluster) IsrChangeAsked(pid int32, verb string, isr, newISR []int32) {
	p := h.e.partitions[pid]
	h.e.emit(Event{Type: EvISRPending, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index),
		OldISR: isr, ISR: newISR, Reason: verb,
		Text: fmt.Sprintf("leader %d asks to %s the ISR of %s: %v → %v", h.b.id, verb, p.name(), isr, newISR)})
}

func (h *cluster) IsrWriteSkipped(pid int32, verb string, newISR []int32, cached int32, w brk.IsrWrite) {
	p, r := h.e.partitions[pid], h.b.Replica(pid)
	why := fmt.Sprintf("cached zkVersion %d, ZooKeeper has %d", cached, w.Version)
	if !w.Connected {
		why = "no ZooKeeper connection"
	}
	h.e.emit(Event{Type: EvISRPending, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index),
		OldISR: r.State().ISR(), ISR: newISR, Reason: verb, Name: "skipped",
		Text: fmt.Sprintf("leader %d could not %s the ISR of %s to %v in ZooKeeper (%s): skipped", h.b.id, verb, p.name(), newISR, why)})
}

func (h *cluster) IsrWritten(pid int32, verb string, w brk.IsrWrite) {
	p := h.e.partitions[pid]
	h.e.noteISRChanged(p, w.Old, w.ISR)
	h.e.emit(Event{Type: EvISRChange, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), OldISR: w.Old,
		ISR: w.ISR, Epoch: Some(int64(w.LeaderEpoch)), Reason: "leader " + verb,
		Text: fmt.Sprintf("leader %d wrote the ISR of %s to ZooKeeper: %v → %v (zkVersion %d)", h.b.id, p.name(), w.Old, w.ISR, w.Version)})
}

func (h *cluster) Restarted() {
	h.e.emit(Event{Type: EvBrokerUp, Broker: Some(h.b.id),
		Text: fmt.Sprintf("broker %d started from its disk state", h.b.id)})
}

func (h *cluster) Crashed(powerLoss bool) {
	cause := "process killed"
	if powerLoss {
		cause = "power loss: unflushed records dropped"
	}
	h.e.emit(Event{Type: EvBrokerDown, Broker: Some(h.b.id), Reason: cause,
		Text: fmt.Sprintf("broker %d is down (%s)", h.b.id, cause)})
}

func (h *cluster) ShutdownBegan() {
	h.e.emit(Event{Type: EvShutdown, Broker: Some(h.b.id),
		Text: fmt.Sprintf("broker %d begins a controlled shutdown", h.b.id)})
}

func (h *cluster) ShutdownAttemptFailed(attempt int, err KafkaError, led int, last bool) {
	id, backoff := h.b.id, h.e.cfg.ControlledShutdownRetryBackoffMs
	if last {
		h.e.emit(Event{Type: EvShutdown, Broker: Some(id), Reason: "retry",
			Text: fmt.Sprintf("broker %d's controlled shutdown attempt %d (the last): %d partitions still led; it stops after %d ms", id, attempt, led, backoff)})
		return
	}
	why := fmt.Sprintf("%d partitions still led (no other ISR member to take them)", led)
	if err != ErrNone {
		why = err.String()
	}
	h.e.emit(Event{Type: EvShutdown, Broker: Some(id), Reason: "retry",
		Text: fmt.Sprintf("broker %d's controlled shutdown attempt %d: %s; retrying in %d ms", id, attempt, why, backoff)})
}

func (h *cluster) StoppedAnyway(attempts, led int) {
	text := fmt.Sprintf("broker %d stops anyway after %d controlled-shutdown attempts (%d partitions still led)", h.b.id, attempts, led)
	if led < 0 {
		text = fmt.Sprintf("broker %d stops anyway after %d controlled-shutdown attempts and the backoff after the last", h.b.id, attempts)
	}
	h.e.emit(Event{Type: EvShutdown, Broker: Some(h.b.id), Reason: "retries exhausted", Text: text})
}

func (h *cluster) ShutdownCompleted() {
	h.e.emit(Event{Type: EvBrokerDown, Broker: Some(h.b.id), Reason: "controlled shutdown",
		Text: fmt.Sprintf("broker %d stopped (controlled shutdown; logs flushed)", h.b.id)})
}

func (h *cluster) LogDirFailed(halt bool, offline int) {
	if halt {
		h.e.emit(Event{Type: EvLogDirFailure, Broker: Some(h.b.id), Reason: "halt",
			Text: fmt.Sprintf("broker %d's log directory failed: before KIP-112 (inter.broker.protocol.version 1.0) the broker halts", h.b.id)})
		return
	}
	h.e.emit(Event{Type: EvLogDirFailure, Broker: Some(h.b.id),
		Text: fmt.Sprintf("broker %d's log directory failed: its %d replicas are Offline", h.b.id, offline)})
}

// The observers' facts, with their events.

func (h *cluster) HWChanged(pid int32, old int64, role string, follower int32) {
	h.e.hwChangedBy(h.b.Replica(pid), old, role, follower)
}

func (h *cluster) Truncated(pid int32, oldLEO int64, cut []commitlogRecord, why string) {
	h.e.emitTruncate(h.b.Replica(pid), oldLEO, cut, why)
}

func (h *cluster) LogCut(pid int32, to int64) { h.e.noteLogCut(h.b.Replica(pid), to) }

func (h *cluster) HWConfirmed(pid int32) { h.e.noteHWConfirmed(h.b.Replica(pid)) }

// Named shortcuts to the cluster's state (shortcuts.go).

// RegisterBroker registers the broker with ZooKeeper unless it is isolated (it registers when
// healed: heal).
func (h *cluster) RegisterBroker() {
	if !h.b.isolated {
		h.e.register(h.b)
	}
}

func (h *cluster) BrokerEpoch() int64 { return h.b.brokerEpoch }

func (h *cluster) ActiveController() int32 { return h.e.metadata.activeController() }

func (h *cluster) IsrEligible(b int32) bool { return h.e.isrEligible(b) }

// UpdateIsr is the pre-2.7 leader's own ISR write, which ZooKeeper (the controller package's
// model) answers at once through the zookeeperAtOnce shortcut.
func (h *cluster) UpdateIsr(pid int32, newISR []int32, zkVersion int32) brk.IsrWrite {
	w := h.e.zk.updateIsr(h.b.id, pid, newISR, zkVersion)
	return brk.IsrWrite{Connected: w.Connected, Written: w.Written, Version: w.Version, LeaderEpoch: w.LeaderEpoch,
		Old: w.Old, ISR: w.ISR}
}

func (h *cluster) ControlledShutdownInProcess() ([]TP, bool) { return h.e.shutdownInProcess(h.b.id) }

func (h *cluster) NotifyLogDirFailure() { h.e.handleLogDirFailure(h.b.id) }
