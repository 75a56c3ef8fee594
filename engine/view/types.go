// Package view is what a page sees of the cluster: the View (brokers, partitions, replicas, the
// messages in flight, parked requests, deadlines, verdicts), an overview of a large cluster with
// a few things in focus, and the events an overview shows. It reads the engine only through its
// read API (engine/read.go); the engine does not know a page exists.
package view

import (
	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// View is the whole state at one instant, as the page draws it. It shares nothing with the
// engine's state (messages aside, which are immutable).
type View struct {
	T    int64  `json:"t"`
	Seed uint64 `json:"seed"`
	Era  string `json:"era"`
	// Config is every setting in force (Kafka names and sim.*).
	Config map[string]any `json:"config"`
	// EraDefaults names the settings in force at their era's own default where that differs from
	// 3.7's (EraDefaults), with 3.7's value, so the page can say what the era changed.
	EraDefaults map[string]any  `json:"eraDefaults,omitempty"`
	Controller  ControllerView  `json:"controller"`
	Brokers     []BrokerView    `json:"brokers"`
	Summary     Summary         `json:"summary"`
	Partitions  []PartitionView `json:"partitions"`
	// States has one letter per partition (in topic order) when the view is an overview:
	// h healthy, u under-replicated, m under min.insync.replicas, o offline (no leader).
	States string `json:"states,omitempty"`
	// Leaders, in an overview asked for it (Options.Leaders), has each partition's leader as
	// two base-36 digits ("0h" is broker 17; "--" no leader), in topic order.
	Leaders    string              `json:"leaders,omitempty"`
	Messages   []*protocol.Message `json:"messages"`
	Violations []engine.Violation  `json:"violations"`
	Produces   []engine.ProduceOp  `json:"produces"` // the latest 200
	// Clients counts every client operation so far (the lists hold only the latest).
	Clients  ClientCounts       `json:"clients"`
	Consumes []engine.ConsumeOp `json:"consumes"` // the latest 200
	Stats    engine.Stats       `json:"stats"`
	// Traffic is the replica fetch traffic between brokers since time 0.
	Traffic Traffic `json:"traffic"`
	// MessagesOmitted counts the messages in flight an overview leaves out: those that neither
	// carry a focused partition nor go to or from a focused broker.
	MessagesOmitted int `json:"messagesOmitted,omitempty"`
	// Pending lists the nearest deadlines the cluster waits on (pending.go), by time.
	Pending []Pending `json:"pending"`
}

// ClientCounts counts producer and consumer operations.
type ClientCounts struct {
	Produces int `json:"produces"`
	Open     int `json:"open"`
	Acked    int `json:"acked"`
	Failed   int `json:"failed"`
	Consumes int `json:"consumes"`
}

// ControllerView is the active controller.
type ControllerView struct {
	Broker int32 `json:"broker"`
	Epoch  int32 `json:"epoch"`
	Active bool  `json:"active"`
}

// BrokerView is one broker.
type BrokerView struct {
	ID         int32  `json:"id"`
	State      string `json:"state"`
	Isolated   bool   `json:"isolated"`
	DiskFailed bool   `json:"diskFailed"`
	Registered bool   `json:"registered"`
	// StartsOnExpiry: restarted before its old ZooKeeper session expired, in an era without
	// broker epochs (before 2.2): it starts when that session expires.
	StartsOnExpiry  bool  `json:"startsOnExpiry,omitempty"`
	BrokerEpoch     int64 `json:"brokerEpoch"`
	ControllerEpoch int32 `json:"controllerEpoch"`
	Leaders         int   `json:"leaders"`
	// UnderReplicated counts the partitions it leads that are under-replicated (or under min ISR).
	UnderReplicated int           `json:"underReplicated"`
	Fetchers        []FetcherView `json:"fetchers"`
	// An overview lists parked requests only for focused brokers, and those carrying a focused
	// partition; the counts are of all of them.
	ParkedFetches      []Parked `json:"parkedFetches"`
	ParkedProduces     []Parked `json:"parkedProduces"`
	ParkedFetchCount   int      `json:"parkedFetchCount"`
	ParkedProduceCount int      `json:"parkedProduceCount"`
}

// FetcherView is one replica fetcher thread.
type FetcherView struct {
	Leader   int32  `json:"leader"`
	ID       int32  `json:"id"`
	InFlight uint64 `json:"inFlight"` // the Fetch in flight (an overview: focused ones only)
	Count    int    `json:"count"`    // partitions carried (an overview lists only focused ones)
	// Dead: the thread's run() ended (before Kafka 2.3, on an error processing a partition's
	// data): its partitions are not fetched (their state "stopped") until it is replaced.
	Dead       bool             `json:"dead,omitempty"`
	Partitions []FetchStateView `json:"partitions"`
}

// FetchStateView is one partition of a fetcher.
type FetchStateView struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	FetchOffset      int64  `json:"fetchOffset"`
	LeaderEpoch      int32  `json:"leaderEpoch"`
	LastFetchedEpoch int32  `json:"lastFetchedEpoch"`
	State            string `json:"state"` // fetching, truncating, delayed, or stopped (a dead thread's)
	DelayedUntil     int64  `json:"delayedUntil,omitempty"`
}

// Parked is a request waiting in purgatory.
type Parked struct {
	Message  uint64 `json:"message"`
	From     int32  `json:"from"`
	Deadline int64  `json:"deadline"`
	Topics   []TP   `json:"partitions"`
	Count    int    `json:"count"` // partitions in the request (an overview omits the list)
	// Session is an incremental fetch's session, which it waits on: Count is the session's
	// partitions, and the request lists only those that changed.
	Session int32 `json:"session,omitempty"`
	// RequiredOffset is the HW an acks=all produce waits for.
	RequiredOffset int64 `json:"requiredOffset,omitempty"`
}

// Summary counts partition states across the cluster.
type Summary struct {
	Partitions      int   `json:"partitions"`
	UnderReplicated int   `json:"underReplicated"`
	UnderMinIsr     int   `json:"underMinIsr"`
	Offline         int   `json:"offline"`
	Acked           int64 `json:"acked"`
	// HWLag sums, over partitions with a live leader, the leader's log end minus its high
	// watermark: records written but not yet committed. MaxHWLag is the largest, Lagging how many
	// partitions have any.
	HWLag    int64 `json:"hwLag"`
	MaxHWLag int64 `json:"maxHwLag"`
	Lagging  int   `json:"lagging"`
	// Run-wide counts of committed ISR changes and leader changes.
	ISRShrinks    int64 `json:"isrShrinks"`
	ISRExpands    int64 `json:"isrExpands"`
	LeaderChanges int64 `json:"leaderChanges"`
}

// PartitionView is one partition: the controller's state and every replica.
type PartitionView struct {
	Topic          string        `json:"topic"`
	Partition      int32         `json:"partition"`
	Assignment     []int32       `json:"assignment"`
	Leader         int32         `json:"leader"`
	LeaderEpoch    int32         `json:"leaderEpoch"`
	PartitionEpoch int32         `json:"partitionEpoch"`
	ISR            []int32       `json:"isr"`
	Recovering     bool          `json:"recovering"`
	Acked          int64         `json:"acked"`
	State          string        `json:"state"`
	Replicas       []ReplicaView `json:"replicas"`
	// Verdicts judge the latest 200 acknowledged records (verdicts.go); left out with NoRecords
	// and in views listing more than maxVerdictPartitions partitions.
	Verdicts []Verdict `json:"verdicts,omitempty"`
}

// ReplicaView is one broker's replica.
type ReplicaView struct {
	Broker           int32                  `json:"broker"`
	Role             string                 `json:"role"` // leader, follower, unknown (not yet told), offline, down
	LeaderEpoch      int32                  `json:"leaderEpoch"`
	LogStartOffset   int64                  `json:"logStartOffset"`
	LogEndOffset     int64                  `json:"logEndOffset"`
	HighWatermark    int64                  `json:"highWatermark"`
	RecoveryPoint    int64                  `json:"recoveryPoint"`
	HWCheckpoint     int64                  `json:"hwCheckpoint"`
	EpochStartOffset int64                  `json:"epochStartOffset"`
	EpochCache       []commitlog.EpochEntry `json:"epochCache"`
	Records          []commitlog.Record     `json:"records,omitempty"`
	ISR              []int32                `json:"isr,omitempty"`
	MaximalISR       []int32                `json:"maximalIsr,omitempty"`
	Pending          string                 `json:"pending,omitempty"` // expand or shrink in flight
	Followers        []FollowerView         `json:"followers,omitempty"`
}

// FollowerView is what a leader knows of a follower.
type FollowerView struct {
	Broker           int32 `json:"broker"`
	LogEndOffset     int64 `json:"logEndOffset"`
	LastCaughtUpTime int64 `json:"lastCaughtUpTime"` // -1: never
	LastFetchTime    int64 `json:"lastFetchTime"`
	CaughtUp         bool  `json:"caughtUp"`
}
