package engine

import (
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/netsim"
)

// The read API: what a driver (the page's view, a test) may know of the cluster, in Kafka's nouns.
// Small things come as values (BrokerInfo, FollowerInfo, Timer, ParkedRequest); large ones as
// read-only handles (PartitionInfo, ReplicaInfo, FetcherInfo) whose methods return values or
// copies, so a cluster of 100,000 partitions can be read one partition at a time without copying
// every log. A handle is valid until the engine moves on (Apply, Step, RunUntil). Messages are
// shared, not copied: the engine never writes to a message once it is sent, and neither may a
// reader.

// ControllerInfo is the active controller.
type ControllerInfo struct {
	Broker int32
	Epoch  int32
	Active bool
}

// Controller returns the controller's broker and epoch.
func (e *Engine) Controller() ControllerInfo {
	return ControllerInfo{Broker: e.ctrl.Broker(), Epoch: e.ctrl.Epoch(), Active: e.ctrl.Active()}
}

// Era returns the protocol era in force (inter.broker.protocol.version).
func (e *Engine) Era() string { return e.era.version }

// FollowerAtLogEndStaysInISR tells whether a follower at its leader's log end is in sync however
// long ago it last fetched: from 2.1 (KAFKA-7152, Replica.isCaughtUp); before, only the time
// since it last caught up counts, so a follower that stops fetching leaves the ISR even when
// nothing was produced.
func (e *Engine) FollowerAtLogEndStaysInISR() bool { return e.era.levelFollowerStaysInIsr }

// BrokerCount returns the number of brokers; their ids are 0 to BrokerCount()-1.
func (e *Engine) BrokerCount() int { return len(e.brokers) }

// BrokerInfo is one broker's process and ZooKeeper registration.
type BrokerInfo struct {
	ID         int32
	State      string // running, shutting-down or dead
	Dead       bool
	Isolated   bool
	DiskFailed bool
	// StartsOnExpiry: restarted before its old ZooKeeper session expired, in an era without
	// broker epochs: it starts when that session expires.
	StartsOnExpiry  bool
	Registered      bool // its ZooKeeper session holds a registration
	BrokerEpoch     int64
	ControllerEpoch int32 // the highest it has seen
}

// Broker returns broker id.
func (e *Engine) Broker(id int32) BrokerInfo {
	b := e.brokers[id]
	return BrokerInfo{ID: b.id, State: b.State().String(), Dead: b.Dead(), Isolated: b.isolated,
		DiskFailed: b.DiskFailed(), StartsOnExpiry: b.startsOnExpiry, Registered: e.ctrl.Registered(b.id),
		BrokerEpoch: b.brokerEpoch, ControllerEpoch: b.rm.ControllerEpoch()}
}

// FetcherInfo is a read-only handle on one replica fetcher thread.
type FetcherInfo struct {
	f *fetcher
}

// Fetchers returns a broker's replica fetcher threads.
func (e *Engine) Fetchers(broker int32) []FetcherInfo {
	fs := *e.brokers[broker].fetchers
	out := make([]FetcherInfo, len(fs))
	for i, f := range fs {
		out[i] = FetcherInfo{f}
	}
	return out
}

// Leader is the broker the thread fetches from.
func (f FetcherInfo) Leader() int32 { return f.f.Leader() }

// ID is the fetcher id (num.replica.fetchers).
func (f FetcherInfo) ID() int32 { return f.f.ID() }

// InFlight is the id of the Fetch in flight, 0 for none.
func (f FetcherInfo) InFlight() uint64 { return f.f.InFlight() }

// Dead reports that the thread's run() ended (before Kafka 2.3, an error processing a
// partition's fetched data: a KafkaException): it fetches nothing, and its manager keeps it, so
// its partitions wait until it is replaced (it is stopped once it has none).
func (f FetcherInfo) Dead() bool { return f.f.Died() }

// Len is the number of partitions the thread fetches.
func (f FetcherInfo) Len() int { return f.f.Len() }

// At returns the i-th partition's fetch state (in partition id order).
func (f FetcherInfo) At(i int) FetchState { return fetchInfo(f.f.At(i)) }

// Find returns the fetch state of partition pid, if the thread fetches it.
func (f FetcherInfo) Find(pid int32) (FetchState, bool) {
	st := f.f.State(pid)
	if st == nil {
		return FetchState{}, false
	}
	return fetchInfo(st), true
}

// FetchState is a fetcher's state for one partition (PartitionFetchState).
type FetchState struct {
	Partition        int32 // the partition id (PartitionInfo.ID)
	FetchOffset      int64
	LeaderEpoch      int32
	LastFetchedEpoch int32 // -1: none
	Truncating       bool
	DelayUntil       int64 // backoff deadline
}

func fetchInfo(st *fetchState) FetchState {
	return FetchState{Partition: st.Pid(), FetchOffset: st.FetchOffset(), LeaderEpoch: st.Epoch(),
		LastFetchedEpoch: st.LastFetchedEpoch(), Truncating: st.Truncating(), DelayUntil: st.DelayUntil()}
}

// PartitionInfo is a read-only handle on one partition: the controller's znode and every replica.
type PartitionInfo struct {
	e *Engine
	p *partition
}

// Partition returns the partition with id pid (0 to PartitionCount()-1, in topic order).
func (e *Engine) Partition(pid int32) PartitionInfo { return PartitionInfo{e, e.partitions[pid]} }

// PartitionID returns the id of a topic partition, false if the cluster has none.
func (e *Engine) PartitionID(tp TP) (int32, bool) {
	pid := e.pidOf(tp)
	return pid, pid >= 0
}

// TopicPartitions returns a topic's partition count, -1 if there is no such topic.
func (e *Engine) TopicPartitions(topic string) int { return e.topicPartitions(topic) }

// ID is the partition id (its place in topic order); TP, Topic and Index name it.
func (p PartitionInfo) ID() int32     { return p.p.pid }
func (p PartitionInfo) TP() TP        { return p.p.tp() }
func (p PartitionInfo) Topic() string { return p.p.topic }
func (p PartitionInfo) Index() int32  { return p.p.index }

// Name is "topic-index".
func (p PartitionInfo) Name() string { return p.p.name() }

// ReplicationFactor is the number of replicas.
func (p PartitionInfo) ReplicationFactor() int { return len(p.p.hosts) }

// Assignment is the controller's replica list; its head is the preferred leader.
func (p PartitionInfo) Assignment() []int32 { return p.e.ctrl.Assignment(p.p.pid) }

// Leader is the controller's leader, -1 for none, with its leader and partition epochs.
func (p PartitionInfo) Leader() int32         { return p.e.ctrl.Leader(p.p.pid) }
func (p PartitionInfo) LeaderEpoch() int32    { return p.e.ctrl.LeaderEpoch(p.p.pid) }
func (p PartitionInfo) PartitionEpoch() int32 { return p.e.ctrl.PartitionEpoch(p.p.pid) }

// ISR is the controller's ISR; ISRSize its length.
func (p PartitionInfo) ISR() []int32 { return p.e.ctrl.ISR(p.p.pid) }
func (p PartitionInfo) ISRSize() int { return p.e.ctrl.ISRSize(p.p.pid) }

// Recovering is set by an unclean election (KIP-704).
func (p PartitionInfo) Recovering() bool { return p.e.ctrl.Recovering(p.p.pid) }

// MinISR is min.insync.replicas as it applies here (at most the replication factor).
func (p PartitionInfo) MinISR() int { return p.e.effectiveMinIsr(p.p) }

// Replicas returns every replica, in the original assignment order.
func (p PartitionInfo) Replicas() []ReplicaInfo {
	out := make([]ReplicaInfo, len(p.p.hosts))
	for i, b := range p.p.hosts {
		out[i] = ReplicaInfo{p.e, p.e.replicaOn(p.p.pid, b)}
	}
	return out
}

// ReplicaOn returns broker b's replica, false if b holds none.
func (p PartitionInfo) ReplicaOn(b int32) (ReplicaInfo, bool) {
	r := p.e.replicaOn(p.p.pid, b)
	return ReplicaInfo{p.e, r}, r != nil
}

// Acked counts the records acknowledged to producers (acks 1 and all).
func (p PartitionInfo) Acked() int64 { return p.e.client(p.p).Acked() }

// AckedRecord is a record acknowledged to a producer: its offset and id.
type AckedRecord struct {
	Offset, ID int64
}

// AckedAll returns the latest n records acknowledged with acks=all, in ack order; AckedOne those
// with acks=1.
func (p PartitionInfo) AckedAll(n int) []AckedRecord { return lastAcked(p.e.client(p.p).AckedAll(), n) }
func (p PartitionInfo) AckedOne(n int) []AckedRecord { return lastAcked(p.e.client(p.p).AckedOne(), n) }

func lastAcked(recs []offsetID, n int) []AckedRecord {
	recs = recs[max(0, len(recs)-n):]
	out := make([]AckedRecord, len(recs))
	for i, r := range recs {
		out[i] = AckedRecord(r)
	}
	return out
}

// ReplicaInfo is a read-only handle on one broker's replica: its log and, on a leader, what it
// knows of its followers.
type ReplicaInfo struct {
	e *Engine
	r *replica
}

// Broker, LeaderEpoch and the log's offsets; HWCheckpoint is the HW on disk, EpochStartOffset the
// leader's start offset of its epoch (-1 unless leader).
func (r ReplicaInfo) Broker() int32           { return r.r.Broker() }
func (r ReplicaInfo) LeaderEpoch() int32      { return r.r.LeaderEpoch() }
func (r ReplicaInfo) LogStartOffset() int64   { return r.r.Log().LogStartOffset() }
func (r ReplicaInfo) LogEndOffset() int64     { return r.r.Log().LogEndOffset() }
func (r ReplicaInfo) HighWatermark() int64    { return r.r.Log().HighWatermark() }
func (r ReplicaInfo) RecoveryPoint() int64    { return r.r.Log().RecoveryPoint() }
func (r ReplicaInfo) HWCheckpoint() int64     { return r.r.HWCheckpoint() }
func (r ReplicaInfo) EpochStartOffset() int64 { return r.r.EpochStartOffset() }

// EpochCache is the leader epoch cache's entries; Records the log's records.
func (r ReplicaInfo) EpochCache() []commitlog.EpochEntry {
	return slices.Clone(r.r.Log().Cache().Entries())
}
func (r ReplicaInfo) Records() []commitlog.Record { return slices.Clone(r.r.Log().Records()) }

// RecordAt returns the record at an offset, false if the log does not hold that offset.
func (r ReplicaInfo) RecordAt(offset int64) (commitlog.Record, bool) { return r.r.Log().At(offset) }

// Down: the replica's broker is dead. Offline: its log directory failed. Known: a LeaderAndIsr
// created it since its broker started. IsLeader: it leads.
func (r ReplicaInfo) Down() bool     { return r.e.brokers[r.r.Broker()].Dead() }
func (r ReplicaInfo) Offline() bool  { return r.r.Offline() }
func (r ReplicaInfo) Known() bool    { return r.r.Known() }
func (r ReplicaInfo) IsLeader() bool { return r.r.IsLeader() }

// ISR is the ISR as the leader sees it (committed); MaximalISR adds a replica joining (KIP-497).
func (r ReplicaInfo) ISR() []int32        { return slices.Clone(r.r.State().ISR()) }
func (r ReplicaInfo) MaximalISR() []int32 { return slices.Clone(r.r.State().MaximalISR()) }

// PendingISRChange names the ISR change in flight: "expand", "shrink" or "".
func (r ReplicaInfo) PendingISRChange() string {
	switch {
	case !r.r.State().IsInflight():
		return ""
	case r.r.State().Expanding():
		return "expand"
	}
	return "shrink"
}

// FollowerInfo is what a leader knows of a follower (its remote replica state).
type FollowerInfo struct {
	Broker           int32
	LogEndOffset     int64 // -1: unknown
	LastCaughtUpTime int64
	LastFetchTime    int64
	CaughtUp         bool
}

// Followers returns the leader's remote replica states, in assignment order.
func (r ReplicaInfo) Followers() []FollowerInfo {
	out := make([]FollowerInfo, len(r.r.Remotes()))
	for i := range r.r.Remotes() {
		out[i] = r.follower(&r.r.Remotes()[i])
	}
	return out
}

// Follower returns what the leader knows of broker b, false if b is not a follower.
func (r ReplicaInfo) Follower(b int32) (FollowerInfo, bool) {
	rr := r.r.Remote(b)
	if rr == nil {
		return FollowerInfo{}, false
	}
	return r.follower(rr), true
}

func (r ReplicaInfo) follower(rr *brk.Replica) FollowerInfo {
	lastFetch, lastCaughtUp := r.r.FollowerTimes(rr)
	return FollowerInfo{Broker: rr.Broker(), LogEndOffset: rr.LogEndOffset(), LastCaughtUpTime: lastCaughtUp,
		LastFetchTime: lastFetch, CaughtUp: r.e.caughtUp(r.r, rr)}
}

// Tallies are run-wide counts of committed ISR changes and leader changes, and the replica fetch
// traffic per follower → leader pair (Flows, in broker order).
type Tallies struct {
	ISRShrinks, ISRExpands, LeaderChanges int64
	Flows                                 []Flow
}

// Flow is the replica fetch traffic from follower From to leader To since time 0: Fetch requests
// sent and records returned.
type Flow struct {
	From, To         int32
	Fetches, Records int64
}

// Tallies returns the run-wide tallies.
func (e *Engine) Tallies() Tallies {
	t := Tallies{ISRShrinks: e.tally.isrShrinks, ISRExpands: e.tally.isrExpands, LeaderChanges: e.tally.leaderChanges}
	e.tally.eachFlow(func(k netsim.Link, f *flow) {
		t.Flows = append(t.Flows, Flow{From: k.From, To: k.To, Fetches: f.fetches, Records: f.records})
	})
	return t
}

// Consumes returns copies of the latest n consume operations; ConsumeCount counts them all.
func (e *Engine) Consumes(n int) []ConsumeOp {
	all := e.clients.ConsumeOps()
	ops := all[max(0, len(all)-n):]
	out := make([]ConsumeOp, len(ops))
	for i, c := range ops {
		out[i] = *c
	}
	return out
}

func (e *Engine) ConsumeCount() int { return len(e.clients.ConsumeOps()) }
