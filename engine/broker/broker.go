package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// Broker is a Kafka broker's replication state: its replicas (Partition objects) by pid, its
// ReplicaManager (with the FetchSessionCache of the followers fetching from it) and its fetcher
// manager. It is the Host its replica manager and fetcher threads are handed: what is the
// broker's (its replicas by pid and by name, a truncation or append on one, a HW move's news
// to the sessions, a log start's move to its threads) it answers itself, and the rest it asks
// of the cluster it runs in (Cluster, embedded). Its entry points are its KafkaApis (Handle,
// RequestFailed, its timers: kafka_apis.go) and its process's, KafkaServer's (Startup, Crash,
// Shutdown, LogDirFailure: kafka_server.go).
type Broker struct {
	cluster // Cluster, embedded unexported: the engine hands it in once (NewBroker)
	id      int32
	// clock is the cluster's time (Cluster.Clock), read by Now; names the partitions' names
	// (static, as index: every broker's is the cluster's one table), read by PidOf and TP.
	clock *int64
	names *TopicNames
	// rules are the cluster's rules (Cluster.RuleBook), read in place at each use.
	rules *Rules
	// hosted are the partitions it has a replica of, in pid order, and replicas those replicas,
	// in the same order (side by side: a fetcher walks its partitions in pid order); index finds
	// a partition's place in both (Replica).
	hosted   []int32
	replicas []Partition
	index    *HostIndex
	fetchers FetcherManager
	rm       ReplicaManager
	// lisr is the LeaderAndIsr handling held by a fetcher thread's shutdown (kafka_apis.go,
	// heldLeaderAndIsr), or nil.
	lisr *heldLeaderAndIsr
	// The process (kafka_server.go): its state, whether its log directory failed, and the
	// attempts of its controlled shutdown.
	state            State
	diskFailed       bool
	shutdownAttempts int
	// shutdownAwaitsZk: a controlled-shutdown attempt waits for ZooKeeper to read the controller
	// (ProcessRules.ControllerIdFromZooKeeper), taken up by ZooKeeperReconnected.
	shutdownAwaitsZk bool
	// The log directory's files of LogManager (recovery_point.go): the recovery-point checkpoint
	// and the clean-shutdown marker, on disk; the replicas whose recovery point may differ from
	// the checkpoint, in memory.
	recovery recoveryPoints
}

// cluster names Cluster so that a Broker embeds it unexported.
type cluster = Cluster

// A Broker is its replica manager's and fetcher threads' Host.
var _ Host = (*Broker)(nil)

// NewBroker is broker id, hosting n replicas (AddReplica places them), found through index, in
// cluster c.
func NewBroker(id int32, c Cluster, index *HostIndex, names *TopicNames, n int) *Broker {
	b := &Broker{cluster: c, id: id, clock: c.Clock(), rules: c.RuleBook(), names: names, index: index,
		replicas: make([]Partition, n), hosted: make([]int32, 0, n)}
	b.rm = NewReplicaManager(id, &b.fetchers)
	return b
}

// The rules, read in place where the cluster keeps them (a config step may change them).

func (b *Broker) Rules() FetcherRules                { return b.rules.Fetcher }
func (b *Broker) ReplicaRules() ReplicaRules         { return b.rules.Replica }
func (b *Broker) LeaderFetchRules() LeaderFetchRules { return b.rules.LeaderFetch }
func (b *Broker) IsrRules() IsrRules                 { return b.rules.Isr }
func (b *Broker) HWRules() HWRules                   { return b.rules.HW }
func (b *Broker) ProcessRules() ProcessRules         { return b.rules.Process }

// AddReplica places the broker's next replica, of partition pid (pids come in order): a fresh
// one, set up in its zeroed slot (Init is NewPartition). It returns its slot, for the index.
func (b *Broker) AddReplica(pid int32) int32 {
	slot := int32(len(b.hosted))
	b.replicas[slot].Init(b.id, pid)
	b.hosted = append(b.hosted, pid)
	return slot
}

func (b *Broker) BrokerID() int32 { return b.id }

// Now is the simulated time, read where the cluster keeps it (Cluster.Clock).
func (b *Broker) Now() int64 { return *b.clock }

// PidOf and TP translate between the wire's partition names and pids (TopicNames).
func (b *Broker) PidOf(tp protocol.TP) int32 { return b.names.PidOf(tp) }
func (b *Broker) TP(pid int32) protocol.TP   { return b.names.TP(pid) }

// Hosted lists the broker's pids in order; ReplicaAt is the replica of the i-th.
func (b *Broker) Hosted() []int32                 { return b.hosted }
func (b *Broker) ReplicaAt(i int) *Partition      { return &b.replicas[i] }
func (b *Broker) ReplicaManager() *ReplicaManager { return &b.rm }
func (b *Broker) Fetchers() *FetcherManager       { return &b.fetchers }

// Replica is the broker's replica of partition pid, or nil.
func (b *Broker) Replica(pid int32) *Partition {
	if pid < 0 {
		return nil
	}
	if slot := b.index.slot(pid, b.id); slot >= 0 {
		return &b.replicas[slot]
	}
	return nil
}

// ReplicaNamed is the broker's replica of tp and its pid (nil: the broker has none).
func (b *Broker) ReplicaNamed(tp protocol.TP) (int32, *Partition) {
	pid := b.PidOf(tp)
	return pid, b.Replica(pid)
}

// The replica manager's changes a fetcher thread asks for (Follower).

// They take the replica itself (a fetch state keeps it), not its pid: no lookup.

func (b *Broker) Truncate(pid int32, p *Partition, offset int64, why string) {
	truncated, rp := offset < p.log.LogEndOffset(), p.log.RecoveryPoint()
	b.rm.Truncate(b, pid, p, offset, why)
	b.logTruncated(p, truncated, rp)
}

func (b *Broker) TruncateFullyAndStartAt(p *Partition, offset int64, why string) {
	rp := p.log.RecoveryPoint()
	b.rm.TruncateFullyAndStartAt(b, p.pid, p, offset, why)
	b.logTruncated(p, true, rp)
}

func (b *Broker) SetHighWatermark(p *Partition, hw int64) {
	b.rm.SetFollowerHW(b, p.pid, p, hw)
}

// Appended counts n records appended to replica p toward log.flush.interval.messages, and
// flushes the log when they reach it.
func (b *Broker) Appended(p *Partition, n int) {
	if p.Appended(b.FlushIntervalMessages()) {
		p.Log().Flush()
		b.noteRecoveryPoint(p)
	}
}

// LogStartMoved tells the leader's sessions caching the partition (a Fetch answer carries the
// log start) and the broker's threads fetching it (a Fetch carries it too).
func (b *Broker) LogStartMoved(pid int32) {
	b.Replica(pid).SessionsChanged()
	b.fetchers.LogStartMoved(pid)
}

// Emit hands ev to the cluster unless the cluster only counts events of its kind (CountOnly,
// which counted it): a trace-only event its caller built is not copied on to be counted.
func (b *Broker) Emit(ev Event) {
	if !b.cluster.CountOnly(ev.Kind) {
		b.cluster.Emit(ev)
	}
}

// HWChanged tells the sessions caching the partition its HW moved, then the cluster: its event
// and the observers' fact (emitHWMoved).
func (b *Broker) HWChanged(r *Partition, old int64, role string, follower int32) {
	r.SessionsChanged()
	emitHWMoved(b.cluster, r.pid, r, old, role, follower)
}

// HostIndex finds a broker's replica of a partition: partition pid's hosts are
// at[start[pid]:start[pid+1]], each a broker and the index of its replica among that broker's
// replicas. It is the static assignment every broker knows (no reassignment is modelled); about
// 28 bytes per partition at RF 3, where an index per broker would cost 4 bytes per partition
// per broker (4 GB for 1,000 brokers × 1,000,000 partitions). A lookup is on the fetch and
// produce paths: a broker and its slot share a cache line, and when every partition has the
// same replication factor rf (else 0) a partition's hosts start at pid·rf, so a lookup reads one
// line where start, broker and slot arrays cost three misses.
type HostIndex struct {
	start []int32
	rf    int32
	at    []hostSlot
}

// hostSlot is a host of a partition: the broker and the index of its replica among the broker's.
type hostSlot struct{ broker, slot int32 }

// NewHostIndex is the index of partitions whose hosts start at start[pid] (start[n] is the
// count of replicas); Place fills it.
func NewHostIndex(start []int32) *HostIndex {
	return &HostIndex{start: start, rf: UniformRF(start), at: make([]hostSlot, start[len(start)-1])}
}

// Place records that host i (in pid's assignment order) is broker, whose replica is in slot.
func (x *HostIndex) Place(pid int32, i int, broker, slot int32) {
	x.at[int(x.start[pid])+i] = hostSlot{broker, slot}
}

// slot is broker's slot for pid's replica, or -1. With a uniform replication factor it reads
// start not at all (its line would be a second miss per lookup).
func (x *HostIndex) slot(pid, broker int32) int32 {
	var hosts []hostSlot
	if rf := int(x.rf); rf > 0 {
		lo := int(pid) * rf
		hosts = x.at[lo : lo+rf]
	} else {
		hosts = x.at[x.start[pid]:x.start[pid+1]]
	}
	for _, h := range hosts {
		if h.broker == broker {
			return h.slot
		}
	}
	return -1
}

// UniformRF is the replication factor of every partition whose hosts start at start[pid], or 0
// if they differ (the engine's packed host lists use it too).
func UniformRF(start []int32) int32 {
	n := int32(len(start) - 1)
	if n <= 0 || start[n]%n != 0 {
		return 0
	}
	rf := start[n] / n
	for pid := range n {
		if start[pid+1]-start[pid] != rf {
			return 0
		}
	}
	return rf
}
