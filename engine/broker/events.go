package broker

import (
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Event is a trace event the broker states (Kafka's state-change and server log lines), handed
// to Cluster.Emit as data: the engine records it as one of its events with the same fields, the
// broker's id and the partition's name, and its text is made here (Text), from the event alone.
// So a broker feature with a new event touches this package only: a kind in the table below, its
// fields, and its text.
//
// It is passed by value (an interface call would move a pointer to the heap) and holds nothing
// the broker changes afterwards but for the slices it shares, which are the broker's and read as
// they are when the text is made: a kind made when read (Lazy) shares none that change.
type Event struct {
	Kind Kind
	// Pid is the partition (unset: the broker's own event).
	Pid protocol.Opt[int32]
	// From and To are a change's old and new values (offsets); Epoch a leader epoch.
	From, To, Epoch protocol.Opt[int64]
	OldISR, ISR     []int32
	Records         []commitlog.Record
	Reason          string
	// Name is an error's name (LeaderAndIsrRejected), or "skipped" (IsrWriteSkipped).
	Name string
	// Follower is the follower whose fetch moved a leader's high watermark (the trace's
	// replicas).
	Follower protocol.Opt[int32]
	// Arg is what the text names beyond the fields the trace keeps; a kind made when read uses
	// Arg[0] and Arg[1] only (the engine keeps those with the event).
	Arg [4]int64
	// Why is the error a fatal exit or a failed shutdown attempt names (its text only: the trace
	// keeps no field for it).
	Why string
}

// Kind is what a broker event says: one of the kinds table's.
type Kind uint8

// The broker's event kinds, in the table's order.
const (
	_ Kind = iota
	// PartitionFailed: a fetcher thread stopped fetching a partition (markPartitionFailed).
	PartitionFailed
	// FetcherAdded and FetcherRemoved: the fetcher manager started a thread, or stopped an idle
	// one; Arg: the thread's id and its leader.
	FetcherAdded
	FetcherRemoved
	// FetcherDied: a fetcher thread's run() ended on an error processing partition Pid's data
	// (Reason), before 2.3; Arg: the thread's id, its leader and how many partitions it held.
	FetcherDied
	// FatalExit: a thread's fatal error, the process exits (Why).
	FatalExit
	// LeaderAndIsrRejected: a LeaderAndIsr refused whole; Arg: the request's epoch, the
	// broker's, the error (a broker epoch's or a controller epoch's).
	LeaderAndIsrRejected
	// BecameLeader (Arg: the epoch start offset) and BecameFollower (Arg: the leader and its
	// epoch), written only into a recorded trace.
	BecameLeader
	BecameFollower
	// LeaderAppend: a leader's append, From its base offset To its log end.
	LeaderAppend
	// DuplicateBatch: an idempotent producer's retried batch the leader already has, From its
	// base offset To its end (not appended again).
	DuplicateBatch
	// IsrChangeAsked: the leader asks the controller (AlterPartition).
	IsrChangeAsked
	// IsrWriteSkipped and IsrWritten: before 2.7 the leader's own ZooKeeper write failed (Arg:
	// the cached zkVersion, ZooKeeper's, and 1 when connected) or succeeded (Arg: the version).
	IsrWriteSkipped
	IsrWritten
	// Restarted, Crashed, ShutdownBegan, ShutdownAttemptFailed (Arg: the attempt, partitions
	// still led, the backoff, 1 for the last; Name: the error, if any), ShutdownGaveUp (Arg: the
	// attempts, partitions still led or -1), ShutdownCompleted, LogDirFailed (Arg: the replicas
	// offline; Reason "halt" before KIP-112): the process.
	Restarted
	Crashed
	ShutdownBegan
	ShutdownAttemptFailed
	ShutdownGaveUp
	ShutdownCompleted
	LogDirFailed
	// HighWatermarkMoved: From the old HW To the new one (Arg: the follower's fetch offset).
	HighWatermarkMoved
	// Truncated: a log cut From its old end To its new one, Records the records cut.
	Truncated
	numKinds
)

// The trace's types of the broker's events (the engine's table, EventTypes, lists them with the
// rest). EvISRChange is also the controller's (controller.EvISRChange).
const (
	EvFailed        = "partition-failed"
	EvFetcher       = "fetcher"
	EvRole          = "become-leader-or-follower"
	EvAppend        = "append"
	EvISRPending    = "isr-pending"
	EvISRChange     = "isr-change"
	EvBrokerUp      = "broker-up"
	EvBrokerDown    = "broker-down"
	EvShutdown      = "shutdown"
	EvLogDirFailure = "log-dir-failure"
	EvHighWatermark = "high-watermark"
	EvTruncate      = "truncate"
)

// kinds is the table of the kinds: the name, the trace's type, and whether the text is made when
// read (Lazy: the events a large run emits by the thousand, made from the fields the trace keeps
// and Arg[0:2]) or when emitted; and whether the event goes only into a recorded trace
// (TraceOnly: nobody else hears it, a run without a trace builds none of it but its count).
var kinds = [numKinds]struct {
	name, typ       string
	lazy, traceOnly bool
}{
	PartitionFailed:       {"PartitionFailed", EvFailed, true, false},
	FetcherAdded:          {"FetcherAdded", EvFetcher, true, false},
	FetcherRemoved:        {"FetcherRemoved", EvFetcher, true, false},
	FetcherDied:           {"FetcherDied", EvFetcher, false, false},
	FatalExit:             {"FatalExit", EvFailed, false, false},
	LeaderAndIsrRejected:  {"LeaderAndIsrRejected", EvRole, false, false},
	BecameLeader:          {"BecameLeader", EvRole, true, true},
	BecameFollower:        {"BecameFollower", EvRole, true, true},
	LeaderAppend:          {"LeaderAppend", EvAppend, true, true},
	DuplicateBatch:        {"DuplicateBatch", EvAppend, true, true},
	IsrChangeAsked:        {"IsrChangeAsked", EvISRPending, false, false},
	IsrWriteSkipped:       {"IsrWriteSkipped", EvISRPending, false, false},
	IsrWritten:            {"IsrWritten", EvISRChange, false, false},
	Restarted:             {"Restarted", EvBrokerUp, false, false},
	Crashed:               {"Crashed", EvBrokerDown, false, false},
	ShutdownBegan:         {"ShutdownBegan", EvShutdown, false, false},
	ShutdownAttemptFailed: {"ShutdownAttemptFailed", EvShutdown, false, false},
	ShutdownGaveUp:        {"ShutdownGaveUp", EvShutdown, false, false},
	ShutdownCompleted:     {"ShutdownCompleted", EvBrokerDown, false, false},
	LogDirFailed:          {"LogDirFailed", EvLogDirFailure, false, false},
	HighWatermarkMoved:    {"HighWatermarkMoved", EvHighWatermark, true, true},
	Truncated:             {"Truncated", EvTruncate, false, false},
}

// Kinds lists every kind, in the table's order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Kind(1); k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

func (k Kind) String() string { return kinds[k].name }

// Type is the trace's type of k's events.
func (k Kind) Type() string { return kinds[k].typ }

// Lazy: k's text is made when read, from the fields the trace keeps and Arg[0:2].
func (k Kind) Lazy() bool { return kinds[k].lazy }

// TraceOnly: k's events go only into a recorded trace.
func (k Kind) TraceOnly() bool { return kinds[k].traceOnly }

// flag is 1 for true, for Arg.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rejected is a LeaderAndIsr refused whole with err: its epoch requested, the broker's current.
func rejected(err protocol.KafkaError, requested, current int64) Event {
	return Event{Kind: LeaderAndIsrRejected, Name: err.String(), Arg: [4]int64{requested, current, int64(err)}}
}

// leaderVerb is an ISR write's reason: the verb, said of the leader (constants: no string built).
func leaderVerb(verb string) string {
	if verb == "expand" {
		return "leader expand"
	}
	return "leader shrink"
}

// shutdownAttemptFailed states a failed controlled-shutdown attempt: err, or led partitions left
// led; last: only the backoff follows.
func (b *Broker) shutdownAttemptFailed(rules *ProcessRules, err protocol.KafkaError, led int, last bool) {
	ev := Event{Kind: ShutdownAttemptFailed, Reason: "retry",
		Arg: [4]int64{int64(b.shutdownAttempts), int64(led), rules.ControlledShutdownRetryBackoffMs, flag(last)}}
	if err != protocol.ErrNone {
		ev.Why = err.String()
	}
	b.Emit(ev)
}

// emitHWMoved states a HW move of p (pid) from old: its event, naming the follower whose fetch
// moved a leader's HW (-1: none), built only if the cluster records it (CountOnly), then the
// observers' fact.
func emitHWMoved(c Cluster, pid int32, p *Partition, old int64, role string, follower int32) {
	if !c.CountOnly(HighWatermarkMoved) {
		ev := Event{Kind: HighWatermarkMoved, Pid: protocol.Some(pid), From: protocol.Some(old),
			To: protocol.Some(p.Log().HighWatermark()), Reason: role}
		if follower >= 0 {
			if rr := p.Remote(follower); rr != nil {
				ev.Follower, ev.Arg[0] = protocol.Some(follower), rr.LogEndOffset()
			}
		}
		c.Emit(ev)
	}
	c.HWMoved(pid, old)
}

// emitTruncated states a truncation of p (pid) from oldLEO to its log's end, cutting cut.
func emitTruncated(c Cluster, pid int32, p *Partition, oldLEO int64, cut []commitlog.Record, why string) {
	c.Emit(Event{Kind: Truncated, Pid: protocol.Some(pid), From: protocol.Some(oldLEO),
		To: protocol.Some(p.Log().LogEndOffset()), Records: cut, Reason: why})
}
