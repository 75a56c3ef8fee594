package engine

import (
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

func (h *cluster) Clock() *int64 { return &h.e.now }

// setRules builds the brokers' rules (Engine.rules) from their inputs, keeping the tests'
// switches as they are. Their inputs are the era, the config, retry.backoff.ms's floor
// (retryBackoff) and generalStart, and each write of one rebuilds them: buildEngine (all of
// them), setConfig (the config: actions.go), and the test that turns generalStart off after the
// start (start_test.go). The era never changes once the cluster runs. TestRulesKeptUpToDate
// holds the kept rules to fresh ones at the end of every preset's run.
func (e *Engine) setRules() { e.rules = e.freshRules() }

// freshRules are the rules as their inputs make them now, with the tests' switches of the kept
// ones.
func (e *Engine) freshRules() brk.Rules {
	t := &e.rules
	return brk.Rules{
		Fetcher: brk.FetcherRules{EpochRequests: e.era.epochRequests, EmptyCacheAsks: e.era.emptyCacheAsks,
			Fencing: e.era.fencing, TruncateOnFetch: e.era.truncateOnFetch, Sessions: e.era.fetchSessions,
			BackoffMs: max(1, e.cfg.ReplicaFetchBackoffMs), MaxWaitMs: e.cfg.ReplicaFetchWaitMaxMs,
			MinBytes: e.cfg.ReplicaFetchMinBytes, OutOfRangeFatal: !e.era.outOfRangeNeverFatal,
			UncleanElection: e.cfg.UncleanLeaderElectionEnable, AwaitAfterFailedFetch: !e.era.noAwaitAfterFailedFetch,
			EpochCacheOnlyNewer: e.era.epochCacheOnlyNewer, ErrorKillsThread: !e.era.partitionFailsAlone,
			AppendFromLogStart: e.era.appendFromLogStart, WalkAll: t.Fetcher.WalkAll, Check: t.Fetcher.Check},
		Replica: brk.ReplicaRules{BrokerEpochs: e.era.brokerEpochs, AssignEpochOnElection: e.era.assignEpochOnElection,
			FollowerRestartsOnNewEpoch: e.era.followerRestartsOnNewEpoch,
			TruncateToHW:               !e.era.epochRequests && !e.era.truncateOnFetch, TruncateOnFetch: e.era.truncateOnFetch,
			ReelectionFetchTimeForAll: !e.era.reelectionFetchTimeInSyncOnly,
			NumReplicaFetchers:        e.cfg.NumReplicaFetchers, CheckpointIntervalMs: e.cfg.HighWatermarkCheckpointMs,
			NotLeaderForUnknownLocal: e.era.notLeaderForUnknownLocal, EpochAnswerNamesEpoch: e.era.epochAnswerNamesEpoch,
			TruncationKeepsHW: !e.era.truncationClampsHW, ShutdownAwaitsRequest: !e.era.fetcherShutdownClosesClient,
			EndTruncationKeepsEpochCache: !e.era.endTruncationTrimsEpochCache, RecordBatches: e.era.recordBatches,
			AppendChecksFetchesFirst: e.era.appendChecksFetchesFirst, PurgatoryAfterProduce: e.era.purgatoryAfterProduce,
			StopReplicaPartitionErrors: e.era.stopReplicaPartitionErrors,
			UnknownProducerError:       e.era.unknownProducerError,
			CheckpointCheck:            t.Replica.CheckpointCheck},
		LeaderFetch: brk.LeaderFetchRules{Sessions: e.era.fetchSessions, SessionTouchedByFetch: e.era.sessionTouchedByFetch,
			SessionKeepsLeaderEpoch:  e.era.sessionKeepsLeaderEpoch,
			NotLeaderForUnknownLocal: e.era.notLeaderForUnknownLocal, MaxBytes: e.cfg.ReplicaFetchMaxBytes,
			FailedReadResetsFollower: !e.era.failedReadKeepsFollower,
			RecordSizeBytes:          e.cfg.RecordSizeBytes, SessionSlots: e.cfg.MaxIncrementalFetchSessionSlots,
			ResponseMaxBytes: e.cfg.ReplicaFetchResponseMaxBytes,
			ReadAll:          t.LeaderFetch.ReadAll, Check: t.LeaderFetch.Check},
		Isr: brk.IsrRules{AlterPartition: e.era.alterPartition, ExpandNeedsEpochStart: e.era.expandNeedsEpochStart,
			LevelFollowerStaysInIsr: e.era.levelFollowerStaysInIsr, LagTimeMaxMs: e.cfg.ReplicaLagTimeMaxMs,
			NoEpochStartRule: t.Isr.NoEpochStartRule},
		HW: brk.HWRules{MinIsrGatesHW: e.era.minIsrGatesHW, MinIsrCappedAtReplicas: e.era.minIsrCappedAtReplicas,
			MinInsyncReplicas: e.cfg.MinInsyncReplicas, LagTimeMaxMs: e.cfg.ReplicaLagTimeMaxMs,
			CommittedISROnly: t.HW.CommittedISROnly, EveryFollowerFetch: !e.era.hwOnlyWhenFollowerMoved},
		Process: brk.ProcessRules{ControlledShutdownMaxRetries: e.cfg.ControlledShutdownMaxRetries,
			ControlledShutdownRetryBackoffMs: e.cfg.ControlledShutdownRetryBackoffMs,
			ControlledShutdownDisabled:       !e.cfg.ControlledShutdownEnable,
			BackoffAfterLastShutdownAttempt:  !e.era.noBackoffAfterLastShutdownAttempt,
			ControllerIdFromZooKeeper:        !e.era.controllerIdFromMetadataCache,
			LogDirFailureHandling:            e.era.logDirFailureHandling, RecoverAtFirstStart: e.generalStart,
			FlushOffsetCheckpointIntervalMs: e.cfg.LogFlushOffsetCheckpointIntervalMs, Recovery: e.era.recovery,
			CheckpointAtEveryTruncation: !e.era.checkpointOnlyWhenTruncated},
	}
}

// RuleBook lends the brokers the rules kept up to date (setRules): a Broker reads them in place.
func (h *cluster) RuleBook() *brk.Rules { return &h.e.rules }

// FlushIntervalMessages is read at each append: a config action can change it.
func (h *cluster) FlushIntervalMessages() int64 { return h.e.cfg.LogFlushIntervalMessages }

func (h *cluster) PidOf(tp TP) int32 { return h.e.pidOf(tp) }

// TP and Assignment read the topics and the packed replica lists, not the partition object (a
// cache miss at scale): a leader reads the replication factor at every produce and HW move.
func (h *cluster) TP(pid int32) TP { return h.e.tpOf(pid) }

func (h *cluster) Assignment(pid int32) []int32 { return h.e.hostsOf(pid) }

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

func (h *cluster) ScheduleIsrChangePropagation(at int64) {
	h.e.schedule(isrChangePropagationTask{h.e.timer(h.b)}.due(at))
}

func (h *cluster) ScheduleCheckpoint(at int64) { h.e.schedule(checkpointTask{h.e.timer(h.b)}.due(at)) }
func (h *cluster) ScheduleRecoveryPointCheckpoint(at int64) {
	h.e.schedule(recoveryPointTask{h.e.timer(h.b)}.due(at))
}

func (h *cluster) ScheduleAlterPartitionResend(pid int32, at int64) {
	h.e.schedule(alterPartitionResend{h.e.timer(h.b), pid}.due(at))
}

func (h *cluster) ScheduleShutdownRetry(at int64) {
	h.e.schedule(shutdownRetry{h.e.timer(h.b)}.due(at))
}

// Events, and the observers' facts.

// Emit records the broker's event as the engine's: the broker's id, the partition's names (the
// engine's), the fields as they are; the text made now, or when read for the kinds a large run
// emits by the thousand (Kind.Lazy). A run without a trace builds none but a truncation, whose
// text the checker keeps as a violation's cause (hearCause): it counts the rest.
func (h *cluster) Emit(be brk.Event) {
	e, k := h.e, be.Kind
	if !e.trace && !hearsCause(k.Type()) {
		e.eventCount++
		return
	}
	ev := Event{Type: k.Type(), Broker: Some(h.b.id), From: be.From, To: be.To, Epoch: be.Epoch,
		OldISR: be.OldISR, ISR: be.ISR, Records: be.Records, Reason: be.Reason, Name: be.Name}
	if be.Pid.Set {
		p := e.partitions[be.Pid.V]
		ev.Topic, ev.Partition = p.topic, Some(p.index)
	}
	if be.Follower.Set {
		ev.Replicas = []int32{be.Follower.V}
	}
	if k.Lazy() {
		ev.render, ev.arg = brokerRenders[k], [2]int64{be.Arg[0], be.Arg[1]}
	} else {
		ev.Text = be.Text(h.b.id, ev.Topic, ev.Partition.V)
	}
	e.emit(ev)
}

// CountOnly: a run without a trace only counts the events only a trace hears (brk.Kind.TraceOnly;
// none is a cause the checker keeps, hearsCause): the broker then builds none.
func (h *cluster) CountOnly(k brk.Kind) bool {
	if h.e.trace || !k.TraceOnly() {
		return false
	}
	h.e.eventCount++
	return true
}

// brokerRenders make a lazy broker event's text from the engine's event (Narrate), one per
// kind: the broker's event again, from the fields the trace keeps and arg.
var brokerRenders = func() []func(*Event) string {
	kinds := brk.Kinds()
	r := make([]func(*Event) string, len(kinds)+1)
	for _, k := range kinds {
		r[k] = func(ev *Event) string { return brokerText(k, ev) }
	}
	return r
}()

// brokerText is the text of the broker's event of kind k recorded as ev.
func brokerText(k brk.Kind, ev *Event) string {
	be := brk.Event{Kind: k, From: ev.From, To: ev.To, Epoch: ev.Epoch, OldISR: ev.OldISR, ISR: ev.ISR,
		Records: ev.Records, Reason: ev.Reason, Name: ev.Name, Arg: [4]int64{ev.arg[0], ev.arg[1]}}
	if len(ev.Replicas) == 1 {
		be.Follower = Some(ev.Replicas[0])
	}
	return be.Text(ev.Broker.V, ev.Topic, ev.Partition.V)
}

func (h *cluster) HWMoved(pid int32, old int64) { h.e.noteHWMoved(pid, h.b.id, old) }

func (h *cluster) IsrChanged(pid int32, old, isr []int32) {
	h.e.noteISRChanged(h.e.partitions[pid], old, isr)
}

func (h *cluster) LogCut(pid int32, to int64) { h.e.noteLogCut(pid, h.b.id, to) }

func (h *cluster) HWConfirmed(r *brk.Partition) { h.e.noteHWConfirmed(r) }

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

func (h *cluster) IsrEligible(b int32) bool { return h.e.isrEligible(h.b, b) }
func (h *cluster) ZooKeeperConnected() bool {
	return h.e.ctrl.Session(h.b.id).Connected
}

// UpdateIsr is the pre-2.7 leader's own ISR write, which ZooKeeper (the controller package's
// model) answers at once through the zookeeperAtOnce shortcut.
func (h *cluster) UpdateIsr(pid int32, newISR []int32, zkVersion int32) brk.IsrWrite {
	w := h.e.zk.updateIsr(h.b.id, pid, newISR, zkVersion)
	return brk.IsrWrite{Connected: w.Connected, Written: w.Written, Version: w.Version, LeaderEpoch: w.LeaderEpoch,
		Old: w.Old, ISR: w.ISR}
}

// PropagateIsrChanges is the pre-2.7 broker's ISR-change notification, which ZooKeeper (the
// controller package's model) answers at once through the zookeeperAtOnce shortcut.
func (h *cluster) PropagateIsrChanges(pids []int32) bool {
	return h.e.zk.propagateIsrChanges(h.b.id, pids)
}

func (h *cluster) NotifyLogDirFailure() { h.e.handleLogDirFailure(h.b.id) }
