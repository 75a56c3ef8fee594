package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// Follower is what a broker's fetcher threads ask of the rest of their broker and of the cluster
// as they work (AbstractFetcherThread.doWork: fetcher_work.go) and handle their answers
// (fetcher_answers.go), and what its fetcher manager does (fetcher_manager.go). A Broker is one:
// it answers what is the broker's (its replicas, the replica manager's changes to them) and asks
// the rest of its Cluster; the package's tests fake it whole.
type Follower interface {
	// Now is the simulated time; Rules the era's and the config's rules for fetching.
	Now() int64
	Rules() FetcherRules
	// Dead reports that the broker is down: its threads do no work.
	Dead() bool
	// BrokerID is the broker's id; BrokerEpoch its current registration's epoch (KIP-380), sent
	// in its Fetch.
	BrokerID() int32
	BrokerEpoch() int64
	// PidOf and TP translate between the wire's partition names and the broker's pids.
	PidOf(tp protocol.TP) int32
	TP(pid int32) protocol.TP
	// Replica is the broker's replica of pid.
	Replica(pid int32) *Partition
	// Send sends m, giving it its id. NewFetch is the storage for a thread's next Fetch, and
	// KeepFetch takes back one built but not sent.
	Send(m *protocol.Message)
	NewFetch() *FetchMessage
	KeepFetch(x *FetchMessage)
	// ScheduleWake has thread t work again at time at (its wake-up is recorded: t.Wake).
	ScheduleWake(t *FetcherThread, at int64)

	// The replica manager's changes to replica p (the one a fetch state keeps: no lookup by
	// pid) or to the replica of pid, each with its events: Truncate cuts its log (pid is p's,
	// which the caller has at hand: a truncation that moves nothing reads no more of p) to offset (Log.truncateTo); TruncateFullyAndStartAt empties it and
	// starts it at offset; Appended follows an append of n records (the flush count: the fetch
	// sessions are told by the caller);
	// LogStartMoved follows a move of its log start; SetHighWatermark takes the leader's HW.
	Truncate(pid int32, p *Partition, offset int64, why string)
	TruncateFullyAndStartAt(p *Partition, offset int64, why string)
	Appended(p *Partition, n int)
	LogStartMoved(pid int32)
	SetHighWatermark(p *Partition, hw int64)
	// HWMoved states the observers' fact that pid's records from old to its HW are now below
	// its HW (Cluster's): the fetcher states it for records appended below a HW a truncation
	// kept above the LEO (before 2.4), which no HW move covers.
	HWMoved(pid int32, old int64)
	// Emit records the threads' and the fetcher manager's events (PartitionFailed, FetcherAdded,
	// FetcherRemoved: events.go), as the broker's Cluster does.
	Emit(ev Event)
	// Exit is a fatal error in a thread (FatalExitError, with OutOfRangeFatal): the broker
	// process exits. The thread has stopped.
	Exit(pid int32, why string)
}

// FetcherRules are the rules a fetcher thread follows: those of the protocol era
// (inter.broker.protocol.version) and the replica.fetch settings.
type FetcherRules struct {
	// EpochRequests: ask OffsetsForLeaderEpoch before fetching (KIP-101, 0.11); EmptyCacheAsks:
	// ask even with an empty epoch cache, with epoch -1 (0.11 only).
	EpochRequests, EmptyCacheAsks bool
	// Fencing: requests carry the current leader epoch (KIP-320, 2.1).
	Fencing bool
	// TruncateOnFetch: fetches carry lastFetchedEpoch and answers name a divergence (KIP-595's
	// mechanism, 2.7).
	TruncateOnFetch bool
	// Sessions: fetches belong to an incremental fetch session (KIP-227, 1.1).
	Sessions bool
	// OutOfRangeFatal: a follower whose leader's log ends below its own exits rather than
	// truncate, unless UncleanElection (unclean.leader.election.enable) allows it (before 2.1).
	OutOfRangeFatal, UncleanElection bool
	// EpochCacheOnlyNewer: a fetched batch's epoch enters the epoch cache only if it is above the
	// latest (LeaderEpochFileCache.assign before 2.1, 0.11.0.2: "epoch > latestEpoch && offset >=
	// latestOffset", else only a warning); from 2.1 (KAFKA-7415) it replaces the entries from its
	// epoch or start offset on.
	EpochCacheOnlyNewer bool
	// ErrorKillsThread: an error while a partition's fetched data is processed (Log.append
	// refusing records that start below the log end, processPartitionData's "Offset mismatch")
	// ends the thread: AbstractFetcherThread.processFetchRequest rethrows it as a KafkaException
	// and ShutdownableThread.run catches it and returns (0.10.2.2, 0.11.0.2, 2.1.1). The thread
	// stays in its manager's map; every partition it fetched is fetched no more. From 2.3
	// (KIP-461, KAFKA-8346) only that partition is marked failed (markPartitionFailed).
	ErrorKillsThread bool
	// AppendFromLogStart: a follower whose log is empty at its log start, handed a batch that
	// starts below that start and reaches it, starts its log at the batch's first offset and
	// appends it (Partition.appendRecordsToFollowerOrFutureReplica's catch of
	// UnexpectedAppendOffsetException, 2.1, KAFKA-6975); before, it is refused as any other.
	AppendFromLogStart bool
	// AwaitAfterFailedFetch: after a failed Fetch the thread awaits BackoffMs, then delays its
	// partitions by BackoffMs (before 3.1, KAFKA-8529).
	AwaitAfterFailedFetch bool
	// BackoffMs is replica.fetch.backoff.ms (at least 1: a thread cannot loop at one instant);
	// MaxWaitMs and MinBytes are replica.fetch.wait.max.ms and replica.fetch.min.bytes.
	BackoffMs, MaxWaitMs, MinBytes int64
	// WalkAll (tests only) walks every partition at every turn, as Kafka's thread does: the
	// reference the change lists must match (the engine's fetcher_changes.go). Check (tests
	// only) is told what breaks the change lists' rule before every incremental build
	// (fetcher_check.go).
	WalkAll bool
	Check   func(problem string)
}

// RequestEpoch is the currentLeaderEpoch a follower sends: -1 before KIP-320.
func (r *FetcherRules) RequestEpoch(epoch int32) int32 {
	if r.Fencing {
		return epoch
	}
	return -1
}
