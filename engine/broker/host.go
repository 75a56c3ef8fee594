package broker

import (
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Host is what a broker's replica manager (replica_manager.go) and fetcher threads ask of the
// rest of their broker and of the cluster: what the threads ask (Follower), the broker's replicas
// by name and in order, and what the broker asks of the cluster (Cluster). A Broker is one; the
// package's tests fake it whole.
type Host interface {
	Follower
	Cluster
	// ReplicaNamed is the broker's replica of tp and its pid (nil: the broker has none); Hosted
	// lists the broker's pids in order.
	ReplicaNamed(tp protocol.TP) (int32, *Partition)
	Hosted() []int32
	// ShuttingDown: the broker is in a controlled shutdown (it adds no fetchers).
	ShuttingDown() bool
}

// Cluster is what a Broker asks of the cluster it runs in, which the engine implements per
// broker (as controller.Cluster is the controller's): time, the era's and the config's rules
// (read at each use: a config step may change them), the partitions' names and the static
// assignment, the network (Send, with the storage of a fetch round's messages, which the engine
// reuses once done: recycle.go), timers on the run's agenda, its process's state (running,
// shutting down, dead, and its registration's broker epoch), events and the observers' facts,
// and the named shortcuts to the cluster's state (the active controller, an ISR member's
// eligibility, and before 2.7 ZooKeeper's answer to the leader's own ISR write).
type Cluster interface {
	// What a fetcher thread asks of the cluster (Follower says what each is).
	Now() int64
	Rules() FetcherRules
	BrokerEpoch() int64
	PidOf(tp protocol.TP) int32
	TP(pid int32) protocol.TP
	Send(m *protocol.Message)
	NewFetch() *FetchMessage
	KeepFetch(x *FetchMessage)
	ScheduleWake(t *FetcherThread, at int64)
	Failed(pid int32, why string)
	FetcherStarted(id, leader int32)
	FetcherStopped(id, leader int32)
	// FlushIntervalMessages is log.flush.interval.messages.
	FlushIntervalMessages() int64
	// ReplicaRules are the era's and the config's rules for the replica manager.
	ReplicaRules() ReplicaRules
	// Assignment is pid's replica list in the original assignment order (the followers' state
	// keeps that order).
	Assignment(pid int32) []int32

	// The leader's side of Fetch (leader_fetch.go, delayed_fetch.go): the rules; the answers'
	// sending, whose storage is the engine's (it reuses a fetch round's messages once done):
	// SendFetchResponse sends a full answer, SendSessionAnswer an incremental one whose
	// partitions are in a buffer the replica manager reuses (copied out at their size); and a
	// parked fetch's timeout.
	LeaderFetchRules() LeaderFetchRules
	SendFetchResponse(req *protocol.Message, resp protocol.FetchResponse)
	SendSessionAnswer(req *protocol.Message, resp protocol.FetchResponse)
	ScheduleFetchTimeout(df *DelayedFetch, at int64)
	// HWConfirmed is the observers' fact that pid's HW now comes from the current leadership.
	HWConfirmed(pid int32)
	// LeaderAndIsrRejected says a LeaderAndIsr was refused whole: err with the request's epoch
	// and the broker's (broker epochs, or controller epochs). BecameLeader and BecameFollower say
	// a role changed (the engine writes them only when it records the trace).
	LeaderAndIsrRejected(err protocol.KafkaError, requested, current int64)
	BecameLeader(pid int32)
	BecameFollower(pid int32, leader, leaderEpoch int32)
	// ScheduleCheckpoint has the HW checkpoint task run at time at.
	ScheduleCheckpoint(at int64)

	// The ISR's changes (isr_change.go): the rules; whether a broker may be in the ISR (alive and
	// registered, 3.3+: the metadata the broker holds, at once); the active controller (-1:
	// none); the change asked for (an event); the pre-2.7 ZooKeeper write, which ZooKeeper's
	// model answers at once (the engine's zookeeperAtOnce shortcut), with its events and fact;
	// and the change's and the shrink task's timers.
	IsrRules() IsrRules
	IsrEligible(broker int32) bool
	// The leader's HW (high_watermark.go): the rules, and a HW move, with its events and facts
	// (the trace, the checker; a Broker tells the sessions caching the partition first),
	// naming the follower whose fetch moved it (-1: none).
	HWRules() HWRules
	HWChanged(pid int32, old int64, role string, follower int32)
	// A truncation (truncation.go): its event (the records cut), and the checker's fact.
	Truncated(pid int32, oldLEO int64, cut []commitlog.Record, why string)
	LogCut(pid int32, to int64)
	// The produce path (produce.go): a leader's append (an event), a parked produce's storage
	// and its timeout.
	LeaderAppended(pid int32, base int64)
	NewDelayedProduce(m *protocol.Message, base int64, n int) *DelayedProduce
	ScheduleProduceTimeout(dp *DelayedProduce, at int64)
	ActiveController() int32
	IsrChangeAsked(pid int32, verb string, isr, newISR []int32)
	UpdateIsr(pid int32, newISR []int32, zkVersion int32) IsrWrite
	IsrWriteSkipped(pid int32, verb string, newISR []int32, cachedVersion int32, w IsrWrite)
	IsrWritten(pid int32, verb string, w IsrWrite)
	ScheduleAlterPartitionResend(pid int32, at int64)
	ScheduleIsrShrink(at int64)

	// The process (kafka_server.go): the rules; the ZooKeeper registration, which gives the
	// broker epoch (RegisterBroker: KafkaZkClient.registerBroker, once ZooKeeper is reachable:
	// an isolated broker registers when healed); the controlled shutdown asked of the
	// controller in the broker's own process (the partitions still led, and whether the broker
	// runs the usable controller) and the timer of its next attempt; the controller's hearing
	// of a failed log directory (through ZooKeeper's log dir event notification); a gone
	// process's requests forgotten and those to it failed by the network, with its ZooKeeper
	// session closed (clean) or left to expire; and the events.
	ProcessRules() ProcessRules
	RegisterBroker()
	ControlledShutdownInProcess() (remaining []protocol.TP, ok bool)
	ScheduleShutdownRetry(at int64)
	NotifyLogDirFailure()
	ProcessGone(clean bool)
	Restarted()
	Crashed(powerLoss bool)
	ShutdownBegan()
	// ShutdownAttemptFailed: attempt got err, or left led partitions led; last: no attempt
	// follows, only the backoff.
	ShutdownAttemptFailed(attempt int, err protocol.KafkaError, led int, last bool)
	// StoppedAnyway: the attempts all failed, led partitions left (-1: not known).
	StoppedAnyway(attempts, led int)
	ShutdownCompleted()
	// LogDirFailed: the log directory failed, the broker halting (before KIP-112) or its
	// offline replicas gone offline.
	LogDirFailed(halt bool, offline int)
	// Exiting: a thread's fatal error on pid; the broker exits.
	Exiting(pid int32, why string)
}

// ReplicaRules are the rules the replica manager follows: those of the protocol era and the
// settings it reads.
type ReplicaRules struct {
	// BrokerEpochs: a LeaderAndIsr for an older broker epoch is refused (KIP-380, 2.2).
	BrokerEpochs bool
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
	// NumReplicaFetchers is num.replica.fetchers; CheckpointIntervalMs is
	// replica.high.watermark.checkpoint.interval.ms.
	NumReplicaFetchers, CheckpointIntervalMs int64
	// NotLeaderForUnknownLocal: a request for a partition without its Partition object yet is
	// answered NOT_LEADER (2.0); before, UNKNOWN_TOPIC_OR_PARTITION.
	NotLeaderForUnknownLocal bool
	// EpochAnswerNamesEpoch: an OffsetsForLeaderEpoch answer names (epoch, end offset) (KIP-279,
	// 2.0); before, an offset only.
	EpochAnswerNamesEpoch bool
}
