package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// The broker's process (KafkaServer): its start with the log's recovery, a crash, its controlled
// shutdown, a failed log directory, and an exit on a fatal error. What is the cluster's is asked
// of Cluster: the ZooKeeper registration (and its broker epoch), the controller's own answer
// when it is the controller, the network's forgetting a gone process's requests, the timers and
// the events. The engine's side keeps what is not the broker's: its incarnation (whose timers
// and connections are whose), its isolation, and a restart's wait for its old ZooKeeper session
// before broker epochs (engine/broker.go).

// State is the process's state (KafkaServer's BrokerState, the three the model tells apart).
type State uint8

const (
	Running State = iota
	ShuttingDown
	Dead
)

func (s State) String() string { return [...]string{"running", "shutting-down", "dead"}[s] }

// ProcessRules are the era's and the config's rules for the process, read at each use (a config
// step may change them).
type ProcessRules struct {
	// ControlledShutdownMaxRetries and ControlledShutdownRetryBackoffMs are
	// controlled.shutdown.max.retries and controlled.shutdown.retry.backoff.ms.
	ControlledShutdownMaxRetries, ControlledShutdownRetryBackoffMs int64
	// ControlledShutdownDisabled is controlled.shutdown.enable false (Kafka's default is true,
	// so the zero value is Kafka's).
	ControlledShutdownDisabled bool
	// BackoffAfterLastShutdownAttempt: KafkaServer.controlledShutdown sleeps the backoff after
	// every failed attempt, the last one included, so a broker whose attempts all fail stops one
	// backoff after its last (`if (!shutdownSucceeded) { Thread.sleep(...) }` in 0.10.2.2,
	// 0.11.0.2 and 2.1.1); from 3.1.0 (#11246) only while retries remain.
	BackoffAfterLastShutdownAttempt bool
	// LogDirFailureHandling: a failed log directory takes its replicas offline (KIP-112, 1.0);
	// before, the broker halts.
	LogDirFailureHandling bool
	// RecoverAtFirstStart has the cluster's first start walk the replicas as a restart does (to
	// no effect: they are fresh); the engine's tests force it to hold its bulk start equal.
	RecoverAtFirstStart bool
	// FlushOffsetCheckpointIntervalMs is log.flush.offset.checkpoint.interval.ms, the period of
	// LogManager's recovery-point checkpoint task (recovery_point.go).
	FlushOffsetCheckpointIntervalMs int64
	// Recovery is the era's rule for a log's recovery point after an unclean start.
	Recovery RecoveryRule
	// CheckpointAtEveryTruncation: LogManager.truncateTo writes the recovery-point checkpoint
	// after every call, truncating or not (0.10.2.2, 0.11.0.2); from 2.0 only when a log was
	// truncated (`if (truncated) checkpointLogRecoveryOffsets()`, 2.1.1; affectedLogs, 3.7.0).
	CheckpointAtEveryTruncation bool
	// ControllerIdFromZooKeeper: each controlled-shutdown attempt first reads the controller's id
	// and registration from ZooKeeper (KafkaServer.controlledShutdown: zkUtils.getController in
	// 0.10.2.2 and 0.11.0.2, zkClient.getControllerId in 2.1.1), a read that retries until the
	// connection is back (ZkClient.retryUntilConnected, KafkaZkClient.retryRequestUntilConnected
	// → ZooKeeperClient.waitUntilConnected with no time limit): a broker cut off from ZooKeeper
	// waits in it, sends nothing, and counts no failure until the cut heals. From 3.0
	// (KAFKA-9189) the id comes from the metadata cache.
	ControllerIdFromZooKeeper bool
}

// State is the process's state, which Running, ShuttingDown (in a controlled shutdown: its
// replica manager adds no fetchers) and Dead (its threads do no work) read; DiskFailed: its log
// directory failed since it started; ShutdownAttempts: its controlled shutdown's attempts so far.
// The engine reads them for any broker (they are the process's, as its liveness is anyone's to
// see), a Broker's handlers for their own.
func (b *Broker) State() State          { return b.state }
func (b *Broker) Running() bool         { return b.state == Running }
func (b *Broker) ShuttingDown() bool    { return b.state == ShuttingDown }
func (b *Broker) Dead() bool            { return b.state == Dead }
func (b *Broker) DiskFailed() bool      { return b.diskFailed }
func (b *Broker) ShutdownAttempts() int { return b.shutdownAttempts }

// Startup is KafkaServer.startup from the disk state: the replica manager starts (its
// isr-expiration task every half replica.lag.time.max.ms), with restart the log manager
// recovering every replica, then the broker registers with ZooKeeper.
func (b *Broker) Startup(restart bool) {
	b.state = Running
	b.diskFailed = false
	b.started(restart || b.ProcessRules().RecoverAtFirstStart)
	b.ScheduleIsrShrink(b.Now() + max(1, b.IsrRules().LagTimeMaxMs/2))
	if !b.IsrRules().AlterPartition { // before IBP 2.7: the isr-change-propagation task
		b.rm.IsrChangesStarted(b)
	}
	b.ScheduleRecoveryPointCheckpoint(b.Now() + InitialTaskDelayMs) // LogManager.startup
	if restart {
		b.Emit(Event{Kind: Restarted})
	}
	b.RegisterBroker()
}

// Crash is the process dying (with powerLoss, its machine too): its memory is gone, the log
// stays on disk (with powerLoss, but for what was not flushed), and the cluster forgets its
// requests; its ZooKeeper session lives until it expires.
func (b *Broker) Crash(powerLoss bool) {
	b.state = Dead
	b.stopped()
	cause := "process killed"
	if powerLoss {
		cause = "power loss: unflushed records dropped"
	}
	b.Emit(Event{Kind: Crashed, Reason: cause})
	if powerLoss {
		b.losePageCache()
	}
	b.ProcessGone(false)
}

// PowerLoss is the machine of a broker whose process is already gone losing power: the page
// cache goes with the records past each log's last flush (the cluster hears each truncation).
func (b *Broker) PowerLoss() { b.losePageCache() }

// Shutdown is KafkaServer.shutdown: first controlledShutdown, the controller moving the
// broker's leaderships away (retried up to controlled.shutdown.max.retries times), then the
// stop with the logs flushed.
func (b *Broker) Shutdown() {
	b.state = ShuttingDown
	b.shutdownAttempts = 0
	b.shutdownAwaitsZk = false
	if b.ProcessRules().ControlledShutdownDisabled {
		// KafkaServer.controlledShutdown runs only `if (startupComplete.get() &&
		// config.controlledShutdownEnable)` (0.10.2.2, 2.1.1, 3.7.0): without it the rest of
		// KafkaServer.shutdown runs at once, leadership stays where it is, and the controller
		// hears of the broker from its closed ZooKeeper session.
		b.Emit(Event{Kind: ShutdownGaveUp, Reason: "controlled.shutdown.enable false", Arg: [4]int64{-1}})
		b.shutdownCompleted()
		return
	}
	b.Emit(Event{Kind: ShutdownBegan})
	if b.ProcessRules().ControlledShutdownMaxRetries < 1 {
		// No attempt at all: doControlledShutdown's `while (!shutdownSucceeded && remainingRetries
		// > 0)` never runs with controlled.shutdown.max.retries 0, and KafkaServer.controlledShutdown
		// warns "Proceeding to do an unclean shutdown" (0.10.2.2, 2.1.1, 3.7.0): the broker stops at
		// once, leading what it led, and the controller hears of it from its closed session.
		b.stopAfterAttempts(0)
		return
	}
	b.controlledShutdownAttempt()
}

// controlledShutdownAttempt is one attempt of KafkaServer.controlledShutdown: a
// ControlledShutdown to the active controller, over the network also when the broker is the
// controller (NetworkClientUtils.sendAndReceive to the controller's node, 3.7.0;
// networkClient.blockingSendAndReceive, 0.10.2.2: no in-process path), so the leaderships move
// one latency after the shutdown began. With no controller it stops at once.
func (b *Broker) controlledShutdownAttempt() {
	b.shutdownAttempts++
	if b.ProcessRules().ControllerIdFromZooKeeper && !b.ZooKeeperConnected() {
		b.shutdownAwaitsZk = true // ZooKeeperReconnected goes on
		return
	}
	b.sendControlledShutdown()
}

// sendControlledShutdown is the rest of an attempt, the controller known: the ControlledShutdown.
func (b *Broker) sendControlledShutdown() {
	c := b.ActiveController()
	if c < 0 {
		b.shutdownCompleted()
		return
	}
	b.Send(&protocol.Message{Type: protocol.MsgControlledShutdown, From: b.id, To: c,
		ControlledShutdown: &protocol.ControlledShutdownRequest{BrokerID: b.id, BrokerEpoch: b.BrokerEpoch()}})
}

// controlledShutdownAnswered stops the broker once the controller moved every leadership, or
// after controlled.shutdown.max.retries attempts with controlled.shutdown.retry.backoff.ms
// between them: a partition without another ISR member stays led by it until then, and the
// broker stops anyway.
func (b *Broker) controlledShutdownAnswered(err protocol.KafkaError, remaining []protocol.TP) {
	if b.state != ShuttingDown {
		return
	}
	if err == protocol.ErrNone && len(remaining) == 0 {
		b.shutdownCompleted()
		return
	}
	rules := b.ProcessRules()
	if b.shutdownAttempts >= int(rules.ControlledShutdownMaxRetries) {
		if !rules.BackoffAfterLastShutdownAttempt {
			b.stopAfterAttempts(len(remaining))
			return
		}
		// The backoff after the last failed attempt too; ControlledShutdownRetry then stops it.
		b.shutdownAttemptFailed(&rules, err, len(remaining), true)
	} else {
		b.shutdownAttemptFailed(&rules, err, len(remaining), false)
	}
	b.ScheduleShutdownRetry(b.Now() + max(1, rules.ControlledShutdownRetryBackoffMs))
}

// ControlledShutdownRetry is the end of the backoff after a failed attempt: the next attempt,
// or after the last one (before 3.1) the stop.
func (b *Broker) ControlledShutdownRetry() {
	if b.state != ShuttingDown {
		return
	}
	if b.shutdownAttempts >= int(b.ProcessRules().ControlledShutdownMaxRetries) {
		b.stopAfterAttempts(-1)
		return
	}
	b.controlledShutdownAttempt()
}

// stopAfterAttempts stops a broker whose controlled-shutdown attempts all failed, leaving
// partitions (led, or -1: not known here) behind.
func (b *Broker) stopAfterAttempts(led int) {
	b.Emit(Event{Kind: ShutdownGaveUp, Reason: "retries exhausted", Arg: [4]int64{int64(b.shutdownAttempts), int64(led)}})
	b.shutdownCompleted()
}

// shutdownCompleted is the rest of KafkaServer.shutdown: the fetchers stop, the logs are
// flushed, the HWs checkpointed, and the ZooKeeper session is closed.
func (b *Broker) shutdownCompleted() {
	if b.state != ShuttingDown {
		return
	}
	b.shutDown()
	b.state = Dead
	reason := "controlled shutdown"
	if b.ProcessRules().ControlledShutdownDisabled && b.shutdownAttempts == 0 {
		reason = "clean shutdown"
	}
	b.Emit(Event{Kind: ShutdownCompleted, Reason: reason})
	b.ProcessGone(true)
}

// LogDirFailure is the broker's log directory failing. Before KIP-112 (1.0) the broker halts
// (Exit.halt: no controlled shutdown, its ZooKeeper session lives until it expires;
// simplification: 0.10.2 and 0.11.0 halt at the first write that fails, here at once); from
// it, every replica goes offline (ReplicaManager.handleLogDirFailure) and the controller hears
// of it through ZooKeeper.
func (b *Broker) LogDirFailure() {
	b.diskFailed = true
	if !b.ProcessRules().LogDirFailureHandling {
		b.Emit(Event{Kind: LogDirFailed, Reason: "halt"})
		b.Crash(false)
		return
	}
	n := b.failLogDir()
	b.Emit(Event{Kind: LogDirFailed, Arg: [4]int64{int64(n)}})
	b.NotifyLogDirFailure()
}

// Exit is a fetcher thread's fatal error (FatalExitError): the process exits, which runs its
// shutdown hook, KafkaServer.shutdown, whose first step is the controlled shutdown.
// Simplification: in 0.10.2 the exit is System.exit called from the fetcher thread, which the
// hook's fetcher shutdown then waits for, so the broker could hang after its controlled
// shutdown with its ZooKeeper session alive (KAFKA-4039, fixed in 0.11 by FatalExitError); the
// broker stops as 0.11 does.
func (b *Broker) Exit(pid int32, why string) {
	b.Emit(Event{Kind: FatalExit, Pid: protocol.Some(pid), Reason: "fatal", Why: why})
	if b.state == Running {
		b.Shutdown()
	}
}

// The process's effects on the replicas.

// started is the broker's side of its process starting: the replica manager starts over, with
// no fetcher; with recover (a restart), the fetch sessions are gone and every replica forgets
// what a crash forgets and recovers its log: its HW from the HW checkpoint, its recovery point
// by the era's rule (recoverLogs, recovery_point.go).
func (b *Broker) started(recover bool) {
	b.rm.Started()
	b.fetchers = nil
	if !recover {
		return
	}
	b.rm.LoseFetchSessions(b)
	b.recoverLogs()
	for i := range b.replicas {
		r := &b.replicas[i]
		r.ResetMemory()
		b.rm.noteHW(r)
	}
}

// stopped is the broker's side of its process stopping (a crash or the end of a controlled
// shutdown): its fetchers and fetch sessions are gone, and the requests parked on its replicas
// unanswered.
func (b *Broker) stopped() {
	b.fetchers = nil
	b.rm.zkBlocked = nil
	b.lisr = nil
	b.rm.LoseFetchSessions(b)
	for i := range b.replicas {
		b.replicas[i].DropParked()
	}
}

// losePageCache is a power loss after the crash: every replica drops the records past its last
// flush (the cluster hears each truncation).
func (b *Broker) losePageCache() {
	for i := range b.replicas {
		r := &b.replicas[i]
		oldLEO := r.Log().LogEndOffset()
		if lost := r.Log().LosePageCache(); len(lost) > 0 {
			emitTruncated(b.cluster, r.pid, r, oldLEO, lost, "power loss: the page cache is gone")
			b.LogCut(r.pid, r.Log().LogEndOffset())
			b.noteSlot(int32(i))
		}
		b.rm.noteHW(r)
	}
}

// shutDown is the end of a controlled shutdown: logs flushed and closed (closeLogs:
// LogManager.shutdown, not for a failed log directory), HWs checkpointed, then stopped.
func (b *Broker) shutDown() {
	b.closeLogs()
	b.rm.CheckpointHighWatermarks(b)
	b.stopped()
}

// failLogDir takes every replica offline with KIP-112's handling, and its fetchers stop. It
// returns how many replicas went offline. ReplicaManager.handleLogDirFailure (2.1.1, 3.7.0) only
// marks the partitions offline (markPartitionOffline; Partition.markOffline) and completes no
// delayed operation: nothing calls tryCompleteDelayedFetch or tryCompleteDelayedProduce for
// them. So a fetch parked on a failed replica stays parked until its max wait (or another
// partition it waits on completes it); DelayedFetch.onComplete then reads the partition and
// answers KAFKA_STORAGE_ERROR (DelayedFetch.tryComplete's Case D, were it checked again). A
// produce parked for acks=all stays until its timeout answers it REQUEST_TIMED_OUT: the
// controller sends the failed replica no LeaderAndIsr (it is not online) and its StopReplica is
// ignored for an offline partition (stopReplicas: "partition is in an offline log directory"),
// so nothing calls DelayedProduce.tryComplete again before the produce expires. The sessions
// caching the replica still see it changed (SessionsChanged): the answer at the max wait
// carries its error.
func (b *Broker) failLogDir() int {
	for i := range b.replicas {
		r := &b.replicas[i]
		r.SessionsChanged()
		r.SetOffline()
	}
	b.fetchers.RemoveFetcherForPartitions(b.hosted)
	b.fetchers.ShutdownIdleFetchers(b)
	return len(b.hosted)
}
