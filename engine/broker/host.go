package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// Host is what a broker's replica manager (replica_manager.go) and fetcher threads ask of the
// rest of their broker and of the cluster: what the threads ask (Follower), the broker's replicas
// by name and in order, and what the broker asks of the cluster (Cluster). A Broker is one; the
// package's tests fake it whole.
type Host interface {
	Follower
	Cluster
	// The rules the replica manager reads (the fetcher threads' are Follower's Rules): a Broker
	// reads them in the cluster's RuleBook.
	ReplicaRules() ReplicaRules
	LeaderFetchRules() LeaderFetchRules
	IsrRules() IsrRules
	HWRules() HWRules
	ProcessRules() ProcessRules
	// ReplicaNamed is the broker's replica of tp and its pid (nil: the broker has none); Hosted
	// lists the broker's pids in order.
	ReplicaNamed(tp protocol.TP) (int32, *Partition)
	Hosted() []int32
	// ShuttingDown: the broker is in a controlled shutdown (it adds no fetchers).
	ShuttingDown() bool
	// HWChanged: replica p's HW moved from old, the follower whose fetch moved a leader's HW named
	// (-1: none); a Broker tells the sessions caching the partition, then the cluster
	// (emitHWMoved: the event and the fact).
	HWChanged(p *Partition, old int64, role string, follower int32)
}

// Cluster is what a Broker asks of the cluster it runs in, which the engine implements per
// broker (broker_cluster.go; as controller.Cluster is the controller's). Nothing it returns is
// another broker's state (TestBrokerReachesOnlyItself). Its methods, by what they are:
type Cluster interface {
	// Time and rules: the simulated time; the era's and the config's rules (RuleBook); the
	// partitions' names and the static assignment.
	Now() int64
	// Clock is where the simulated time is kept, for a Broker's Now to read in place: the time
	// is read at nearly every step, where Now through the embedded interface is two calls and a
	// copy deep (issue 12). The broker never writes it.
	Clock() *int64
	// RuleBook is where the cluster keeps its brokers' rules up to date (a config step rebuilds
	// them there): a Broker keeps the pointer and reads them in place at each use.
	RuleBook() *Rules
	// FlushIntervalMessages is log.flush.interval.messages (read at each append, alone: the
	// append path builds no rules).
	FlushIntervalMessages() int64
	PidOf(tp protocol.TP) int32
	TP(pid int32) protocol.TP
	// Assignment is pid's replica list in the original assignment order (the followers' state
	// keeps that order).
	Assignment(pid int32) []int32

	// The network: Send, and the storage the engine lends and reuses once done (recycle.go): a
	// thread's next Fetch (NewFetch; KeepFetch takes back one built but not sent), the answers
	// to a Fetch (SendFetchResponse a full answer, SendSessionAnswer an incremental one whose
	// partitions are in a buffer the replica manager reuses, copied out at their size), a parked
	// produce (NewDelayedProduce), a produce's answer (SendProduceAnswer). ProcessGone is the network's part of the process gone: its
	// requests forgotten and those to it failed, its ZooKeeper session closed (clean) or left to
	// expire (a crash).
	Send(m *protocol.Message)
	NewFetch() *FetchMessage
	KeepFetch(x *FetchMessage)
	SendFetchResponse(req *protocol.Message, resp protocol.FetchResponse)
	SendSessionAnswer(req *protocol.Message, resp protocol.FetchResponse)
	NewDelayedProduce(m *protocol.Message, base int64, n int) *DelayedProduce
	SendProduceAnswer(req *protocol.Message, resp protocol.ProduceResponse)
	// RecordHeader is the idempotent producer's epoch and sequence of record id's batch, and
	// whether it is an idempotent batch's: Kafka's RecordBatch header, which the engine's log
	// records do not carry (their ids do name their batch; the clients keep its header).
	RecordHeader(id int64) (producerEpoch int16, seq int32, ok bool)
	ProcessGone(clean bool)

	// Timers on the run's agenda, each fired into the Broker's entry point for it (FetcherWake,
	// DelayedFetchExpired, DelayedProduceExpired, IsrExpiration, IsrChangePropagation, HighWatermarkCheckpoint,
	// AlterPartitionResend, ControlledShutdownRetry) while the incarnation that set it lives.
	ScheduleWake(t *FetcherThread, at int64)
	ScheduleFetchTimeout(df *DelayedFetch, at int64)
	ScheduleProduceTimeout(dp *DelayedProduce, at int64)
	ScheduleIsrShrink(at int64)
	// ScheduleIsrChangePropagation: the replica manager's isr-change-propagation task, before
	// IBP 2.7 (IsrChangePropagation).
	ScheduleIsrChangePropagation(at int64)
	ScheduleCheckpoint(at int64)
	// ScheduleRecoveryPointCheckpoint: LogManager's kafka-recovery-point-checkpoint task
	// (RecoveryPointCheckpoint).
	ScheduleRecoveryPointCheckpoint(at int64)
	ScheduleAlterPartitionResend(pid int32, at int64)
	ScheduleShutdownRetry(at int64)

	// Events and the observers' facts. Emit records an event the broker built (events.go: the
	// engine converts it, its text made here); the facts go to the checker, with or without a
	// trace, each after or before its event as the broker states them: HWMoved (pid's HW moved
	// from old: after its HighWatermarkMoved), IsrChanged (before 2.7, the leader's own ZooKeeper
	// write changed the committed ISR: before its IsrWritten), LogCut (pid's log cut at to: after
	// its Truncated), HWConfirmed (replica p's HW now comes from the current leadership: the
	// replica itself, which the caller holds, read by the checker without a lookup). CountOnly
	// reports that the cluster only counts events of kind k (a run without a trace, for the
	// kinds only a trace hears: Kind.TraceOnly), and then has counted one: the broker builds
	// none (an event is some 200 bytes, built and copied to be counted).
	Emit(ev Event)
	CountOnly(k Kind) bool
	HWMoved(pid int32, old int64)
	IsrChanged(pid int32, old, isr []int32)
	LogCut(pid int32, to int64)
	HWConfirmed(p *Partition)

	// Named shortcuts to the cluster's state (the engine's shortcuts.go): the ZooKeeper
	// registration (RegisterBroker: KafkaZkClient.registerBroker once ZooKeeper is reachable, an
	// isolated broker registering when healed) and the broker epoch it gave (KIP-380); the active
	// controller (-1: none); whether a broker may be in the ISR (alive and registered; 3.3+, the
	// metadata the broker holds, at once); before 2.7 the leader's own ISR write, which
	// ZooKeeper answers at once; and the controller's hearing of a failed log directory (through ZooKeeper's
	// log dir event notification).
	RegisterBroker()
	BrokerEpoch() int64
	ActiveController() int32
	IsrEligible(broker int32) bool
	// ZooKeeperConnected reports whether the broker reaches ZooKeeper (not isolated).
	ZooKeeperConnected() bool
	UpdateIsr(pid int32, newISR []int32, zkVersion int32) IsrWrite
	// PropagateIsrChanges writes /isr_change_notification/isr_change_NNN naming pids (shared:
	// read at once, not kept), which ZooKeeper answers at once; false without a ZooKeeper
	// connection (nothing written).
	PropagateIsrChanges(pids []int32) bool
	NotifyLogDirFailure()
}

// Rules are a broker's rules, each part as its users read it: those of the protocol era and
// the config, and the tests' switches. The cluster keeps them in one place (Cluster.RuleBook)
// and lends them to each Broker once, which reads them in place at each use (Broker.Rules and
// the rest): a use builds and copies nothing through the cluster (issue 12).
type Rules struct {
	Fetcher     FetcherRules
	Replica     ReplicaRules
	LeaderFetch LeaderFetchRules
	Isr         IsrRules
	HW          HWRules
	Process     ProcessRules
}

// ReplicaRules are the rules the replica manager follows: those of the protocol era and the
// settings it reads.
type ReplicaRules struct {
	// BrokerEpochs: a LeaderAndIsr for an older broker epoch is refused (KIP-380, 2.2).
	BrokerEpochs bool
	// StopReplicaPartitionErrors: a StopReplica answers KAFKA_STORAGE_ERROR for a replica on an
	// offline log directory and does not touch it (ReplicaManager.stopReplicas, 2.6, 3.7.0).
	StopReplicaPartitionErrors bool
	// AssignEpochOnElection: a new leader writes (its epoch, its LEO) into its epoch cache
	// (Partition.makeLeader from 2.1, KAFKA-7415).
	AssignEpochOnElection bool
	// FollowerRestartsOnNewEpoch: a follower's fetcher restarts on every new leader epoch
	// (KAFKA-7395, 2.1); before only when the leader changed.
	FollowerRestartsOnNewEpoch bool
	// TruncateToHW: a new follower truncates to its own HW at once (before KIP-101, 0.11).
	TruncateToHW bool
	// TruncateOnFetch: a new follower starts Fetching with its latest epoch (KIP-595's
	// mechanism, 2.7); otherwise Truncating at its HW.
	TruncateOnFetch bool
	// AppendChecksFetchesFirst: a leader's append checks the parked fetches before its HW moves
	// (appendRecordsToLeader in 0.10.2.2 and 0.11.0.2); PurgatoryAfterProduce: the purgatories
	// are checked after the produce is parked, produces first (3.7.0's
	// addCompletePurgatoryAction). Otherwise (2.1.1) HW, fetches, produces, then the produce.
	AppendChecksFetchesFirst, PurgatoryAfterProduce bool
	// RecordBatches: a produce is one batch (message format v2, 0.11.0; commitlog.Record.Cont),
	// which a follower's fetch hands out whole; before, every record is its own.
	RecordBatches bool
	// NumReplicaFetchers is num.replica.fetchers; CheckpointIntervalMs is
	// replica.high.watermark.checkpoint.interval.ms.
	NumReplicaFetchers, CheckpointIntervalMs int64
	// NotLeaderForUnknownLocal: a request for a partition without its Partition object yet is
	// answered NOT_LEADER (2.0); before, UNKNOWN_TOPIC_OR_PARTITION.
	NotLeaderForUnknownLocal bool
	// EpochAnswerNamesEpoch: an OffsetsForLeaderEpoch answer names (epoch, end offset) (KIP-279,
	// 2.0); before, an offset only.
	EpochAnswerNamesEpoch bool
	// TruncationKeepsHW: a follower's truncation leaves its HW as it was, even above its new LEO,
	// until its next fetch answer (before 2.4: Replica.highWatermark was not the Log's).
	TruncationKeepsHW bool
	// EndTruncationKeepsEpochCache: a truncation at or past the LEO changes nothing, the
	// leader-epoch cache included (Log.truncateTo before 2.7, KAFKA-10706); from 2.7 it removes
	// the cache's entries from the LEO on.
	EndTruncationKeepsEpochCache bool
	// UnknownProducerError answers an idempotent batch with a sequence other than 0 from a
	// producer the leader's log has no batch of: OUT_OF_ORDER_SEQUENCE_NUMBER (0.11.0.2
	// ProducerIdEntry.Empty's epoch -1 is a new epoch), UNKNOWN_PRODUCER_ID (1.0 to 2.3,
	// ProducerAppendInfo.checkSequence, 2.1.1), or none: any sequence is accepted (3.7.0:
	// `currentEntry.producerEpoch() == NO_PRODUCER_EPOCH`).
	UnknownProducerError protocol.KafkaError
	// ShutdownAwaitsRequest: stopping a fetcher thread waits for the request it is blocked in
	// (an answer, or its timeout), and the LeaderAndIsr that stopped it waits with it (before
	// 1.1: ReplicaFetcherThread.initiateShutdown closing its client came with KAFKA-6051).
	ShutdownAwaitsRequest bool
	// ReelectionFetchTimeForAll: a leader staying on at a new leader epoch sets every follower's
	// lastFetchTimeMs to now, ISR member or not (Replica.resetLastCaughtUpTime, before 3.3);
	// from 3.3 (Replica.resetReplicaState, a5f7c82a867) only an ISR member's, the others' to 0.
	ReelectionFetchTimeForAll bool
	// CheckpointCheck, when set (tests only), hears of every known, online replica whose
	// checkpoint does not hold its HW after a checkpoint (checkpoint_check.go).
	CheckpointCheck func(problem string)
}
