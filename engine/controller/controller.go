// Package controller is Kafka's ZooKeeper-mode controller (KafkaController, the
// PartitionStateMachine and ReplicaStateMachine, the ControllerChannelManager) with the ZooKeeper
// it keeps its state in: each partition's znodes (leader, leader epoch, ISR, zkVersion, the
// assignment) and the brokers' sessions and registrations. The package owns that state: nothing
// outside it writes a znode or a session, and the rest of the cluster reads them through the
// accessors in read.go.
//
// The controller runs on one broker. Its state is ZooKeeper's, read and written without delay;
// what it tells brokers travels as LeaderAndIsr, UpdateMetadata and StopReplica over the network
// from its broker. Simplifications: ZooKeeper itself never fails and answers at once; an
// UpdateMetadata carries counts and the live brokers, which fill only the live brokers of a
// broker's metadata cache (broker/metadata_cache.go; brokers and clients learn leaders at once).
//
// What the controller needs of the rest of the cluster (the network, the agenda, the trace, the
// observers' facts, which partitions a broker hosts, whether its own broker's process runs) comes
// through Cluster, which the engine implements.
package controller

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// Cluster is what the controller and its ZooKeeper reach outside themselves. Each method is a
// path Kafka's controller has too (a socket, a scheduler, a log line) or a fact the run's
// observers must hear where it happens.
type Cluster interface {
	// Now is the simulated time: the controller's timers and ZooKeeper's session expiry are
	// set from it.
	Now() int64
	// Settings are the configs the controller reads. They are read at each use: a `config` step
	// can change them mid-run, as Kafka's dynamic configs do.
	Settings() Settings
	// Send puts a message from the controller's broker on the network: LeaderAndIsr,
	// UpdateMetadata and StopReplica (ControllerChannelManager), and the answers to AlterPartition and
	// ControlledShutdown. It gives m its id, which the controller keeps to match the answer.
	Send(m *protocol.Message)
	// ReassignmentWatchAt is the watch on a reassigned partition's state znode firing after a
	// leader's ISR write: the controller handles it as an event of its own (ReassignmentIsrChanged).
	ReassignmentWatchAt(at int64, pid int32)
	// IsrChangeWatchAt is the watch on /isr_change_notification firing after a broker's
	// ISR-change notification (before IBP 2.7): the controller handles it as an event of its own
	// (IsrChangeNotification).
	IsrChangeWatchAt(at int64)
	// SessionExpiryAt, AutoRebalanceAt and RetryAt set the controller's and ZooKeeper's timers
	// on the cluster's one agenda, which orders every happening of the run: a disconnected
	// session's expiry (generation gen), the leader-imbalance check of controller epoch epoch
	// (kafka-scheduler's auto-leader-rebalance-task), and the re-send of broker b's queue head
	// (RequestSendThread's backoff).
	SessionExpiryAt(at int64, b int32, gen uint64)
	AutoRebalanceAt(at int64, epoch int32)
	RetryAt(at int64, b int32, epoch int32)
	// Emit records a trace event (the state-change log and controller log lines Kafka writes).
	Emit(ev Event)
	// PartitionWritten, ISRChanged and Elected are the facts the run's observers (the invariant
	// checker, the tallies) hear where they happen: the controller wrote a partition's leader and
	// ISR (the leader epoch was oldEpoch); a partition's ISR changed from old to isr; a partition
	// has a new leader (or an offline partition's recorded leader was elected again).
	PartitionWritten(pid, oldEpoch int32)
	ISRChanged(pid int32, old, isr []int32)
	Elected(pid int32)
	// Hosted are the partitions broker b has a replica of, in pid order (ControllerContext's
	// partitionsOnBroker over the static assignment; shared, not to be changed).
	Hosted(b int32) []int32
	// Process is broker b's process: its incarnation (rising at every start) and whether it runs.
	// The controller lives in its broker's process and dies with it, while the broker's
	// ZooKeeper session outlives a crash until it expires.
	Process(b int32) (incarnation uint64, alive bool)
}

// Settings are the configs the controller reads.
type Settings struct {
	UncleanLeaderElectionEnable   bool
	AutoLeaderRebalanceEnable     bool
	LeaderImbalancePerBrokerPct   int64 // leader.imbalance.per.broker.percentage
	LeaderImbalanceCheckIntervalS int64 // leader.imbalance.check.interval.seconds
	ZookeeperSessionTimeoutMs     int64
}

// Era holds the rules of inter.broker.protocol.version the controller follows; fixed for a run.
type Era struct {
	// KeepLastIsrMember: the controller never removes the last ISR member (doRemoveReplicasFromIsr
	// from 1.1, KAFKA-5642); before, it kept it only while unclean leader election was off
	// (KafkaController.removeReplicaFromIsr in 0.10.2 and 0.11.0), and the ISR could become empty.
	KeepLastIsrMember bool
	// FailoverOfflinesDeadReplicas: a new controller moves the replicas on dead brokers to
	// OfflineReplica before it elects (ReplicaStateMachine.startup from 2.3, KAFKA-3143).
	FailoverOfflinesDeadReplicas bool
	// BrokerEpochs: registrations carry a broker epoch the controller checks (KIP-380, 2.2).
	BrokerEpochs bool
	// PreferredReelectsLeader: an operator's preferred election of a partition its preferred
	// replica already leads elects it again, at the next leader epoch (2.1.1: the
	// PreferredReplicaLeaderElection event hands every partition of /admin/preferred_replica_election
	// to PartitionStateMachine.leaderForPreferredReplica, which checks only that the preferred
	// replica is live and in the ISR). 0.10.2.2/0.11.0.2's PreferredReplicaPartitionLeaderSelector
	// throws LeaderElectionNotNeededException; from 2.2 (KAFKA-5692) the controller answers
	// ELECTION_NOT_NEEDED without electing.
	PreferredReelectsLeader bool
	// ReorderCompletesAtOnce: a reassignment that only reorders the replicas completes at once
	// (from 2.4, KIP-455: 3.7.0 ReplicaAssignment.isBeingReassigned is false). Before, it waits
	// until every replica is in the ISR (onPartitionReassignment's areReplicasInIsr, 0.10.2.2 to
	// 2.1.1), with a leader-epoch bump each time it runs (reassign.go).
	ReorderCompletesAtOnce bool
	// GroupByScala is the Scala version whose groupBy order the ReplicaStateMachine's batches
	// follow (GroupByBrokerOrder, GroupByScala212 for 2.1.1, GroupByScala213 for 3.7.0).
	GroupByScala int
	// RebalanceBatchesPerBroker: the leader-imbalance check elects a broker's partitions in one
	// onPreferredReplicaElection, so one LeaderAndIsr batch per imbalanced broker (KAFKA-7299,
	// 2.1.0: checkAndTriggerAutoLeaderRebalance). Before (0.10.2.2 checkAndTriggerPartitionRebalance,
	// 0.11.0.2 checkAndTriggerAutoLeaderRebalance), each partition is its own
	// onPreferredReplicaElection(Set(tp)): its own LeaderAndIsr, which waits in the broker's
	// request queue for the answer to the one before, in the order of a mutable.HashMap of
	// TopicAndPartition (topicAndPartitionMapOrder).
	RebalanceBatchesPerBroker bool
	// ControlledShutdownBatched: a controlled shutdown moves the broker's leaderships in one
	// batch, then stops and takes offline the replicas it follows in two more (doControlledShutdown
	// from 1.1, KAFKA-5642's rewrite; 2.1.1, 3.7.0). Before (0.10.2.2 shutdownBroker, 0.11.0.2
	// doControlledShutdown), one partition at a time, a batch each (controlledShutdownSerially).
	ControlledShutdownBatched bool
	// StopReplicaPerPartition: a controlled shutdown's StopReplica batches (the one for the
	// partitions the broker follows, and the one its OfflineReplica transitions add) go one request
	// per partition, after an empty one (1.1.0 to 2.2: doControlledShutdown and ReplicaStateMachine's
	// OfflineReplica pass addStopReplicaRequestForBrokers a callback, `(_, _) => ()`, and 2.1.1's
	// ControllerBrokerRequestBatch.sendRequestsToBrokers groups only the StopReplicas without one:
	// it sends the group, empty here, then each of the others alone). Each waits in the broker's
	// queue for the answer to the one before. 0.10.2.2 and 0.11.0.2 pass no callback (one request
	// per batch); from 2.3 (KAFKA-8294) the callbacks are gone, and 3.7.0 sends one request per
	// broker and batch (sendStopReplicaRequests).
	StopReplicaPerPartition bool
	// LeaderRecovery: an unclean election marks the partition RECOVERING (KIP-704, IBP 3.2:
	// Election.leaderForOffline's newRecoveringLeaderAndIsr when the new leader is not in the ISR,
	// 3.7.0 with isLeaderRecoverySupported), a clean election or other write keeps the state it
	// finds (newLeaderAndIsr), and the leader's first accepted AlterPartition writes RECOVERED
	// (Partition.makeLeader marks it RECOVERED locally; tryProcessAlterPartition writes the
	// request's leaderRecoveryState). Before (0.10.2.2 to 2.1.1), the partition state has no such
	// field.
	LeaderRecovery bool
	// UpdateMetadataNamesPartitions: sendUpdateMetadataRequest with no partitions sends none
	// (KAFKA-7537, 2.2: a failover's and a broker death's UpdateMetadata list only the brokers,
	// and onBrokerStartup sends the full one to the new brokers only); before, it sends every
	// partition's state (addUpdateMetadataRequestForBrokers' `if (partitions.isEmpty)
	// controllerContext.partitionLeadershipInfo.keySet`, 0.10.2.2 and 2.1.1).
	UpdateMetadataNamesPartitions bool
	// OfflineUpdateMetadataOnlyWithoutChange: onReplicasBecomeOffline sends its own UpdateMetadata
	// only when no replica went offline and no election succeeded (KAFKA-13225, 3.1; 3.7.0);
	// before, whenever no partition lost its leader (`partitionsWithoutLeader.isEmpty`, 0.10.2.2
	// onBrokerFailure, 2.1.1 onReplicasBecomeOffline).
	OfflineUpdateMetadataOnlyWithoutChange bool
	// FailoverDeletesIsrChangeNotifications: a new controller deletes the ISR-change
	// notifications waiting (2.1.1 onControllerFailover: deleteIsrChangeNotifications, from 1.1,
	// KAFKA-5642); before (0.10.2.2, 0.11.0.2 registerIsrChangeNotificationListener only
	// subscribes) they wait there until the next notification fires the watch.
	FailoverDeletesIsrChangeNotifications bool
}

// Topic is a topic as ZooKeeper holds it (/brokers/topics/<name>): each partition's replica list,
// whose head is the preferred leader. Partition ids (pids) run over the topics in order.
type Topic struct {
	Name       string
	Assignment [][]int32
}

// topic is a topic's name and its partitions' pids, first to first+count-1.
type topic struct {
	name         string
	first, count int32
}

// Controller is the ZooKeeper-mode controller and the ZooKeeper it keeps its state in. Its zero
// value is not ready: use New.
type Controller struct {
	c       Cluster
	era     Era
	topics  []topic
	brokers int
	zk      zooKeeper

	broker int32
	epoch  int32
	active bool
	// live is the broker epoch of each broker the controller counts as alive (0: not alive); nil
	// until the cluster has started.
	live         []int64
	shuttingDown []bool
	// offline marks replicas whose log directory failed (pid, broker).
	offline map[[2]int32]bool
	// partitionOffline is the OfflinePartition state of each partition (PartitionStateMachine):
	// its leader was lost, and no election has succeeded since. It is usually the same as having no
	// leader, but before 2.3 a new controller can leave a dead broker recorded as the leader of an
	// offline partition.
	partitionOffline []bool
	// batch collects LeaderAndIsr partitions per target broker during one controller action.
	batch map[int32][]int32
	// umd is the UpdateMetadata the batch's LeaderAndIsr partitions add (update_metadata.go).
	umd umdBatch
	// incarnation is its broker's process when it took over: the controller lives in that process.
	incarnation uint64
	// channels are the controller's per-broker request queues (ControllerChannelManager): one
	// request (LeaderAndIsr, UpdateMetadata or StopReplica) in flight per broker, the rest queued
	// behind it in order.
	channels []channel
	// reassigning are the partitions whose reordering reassignment waits for its replicas to join
	// the ISR (before 2.4: /admin/reassign_partitions); nil for none.
	reassigning map[int32]bool
	// deferred are operators' elections asked while no controller could act (deferred.go).
	deferred []deferredElection
	// unregistered: the controller's broker took over before registering (ElectBeforeRegistration)
	// and has not registered yet; it can act meanwhile.
	unregistered bool
	// isrWatchFired: the watch on /isr_change_notification fired and its handling is on the
	// agenda (IsrChangeWatchAt).
	isrWatchFired bool
}

// New returns the cluster's ZooKeeper with every partition led by the head of its assignment at
// leader epoch 0, every replica in the ISR, and no broker registered yet; the controller starts
// with Start, once the brokers have registered.
func New(c Cluster, era Era, brokers int, topics []Topic) *Controller {
	k := &Controller{c: c, era: era, brokers: brokers}
	k.zk.sessions = make([]session, brokers)
	n := 0
	for _, t := range topics {
		k.topics = append(k.topics, topic{name: t.Name, first: int32(n), count: int32(len(t.Assignment))})
		n += len(t.Assignment)
	}
	// Every znode's assignment and ISR are windows of one array (capped, so an append copies:
	// both are replaced, never changed in place), not two allocations per partition.
	m := 0
	for _, t := range topics {
		for _, reps := range t.Assignment {
			m += 2 * len(reps)
		}
	}
	slab := make([]int32, 0, m)
	k.zk.partitions = make([]znode, 0, n)
	for _, t := range topics {
		for _, reps := range t.Assignment {
			at := len(slab)
			slab = append(slab, reps...)
			slab = append(slab, reps...)
			assignment, isr := slab[at:at+len(reps):at+len(reps)], slab[at+len(reps):len(slab):len(slab)]
			slices.Sort(isr)
			k.zk.partitions = append(k.zk.partitions, znode{assignment: assignment, leader: reps[0], isr: isr})
		}
	}
	return k
}

// Start brings the controller up at time 0: broker 0 becomes controller in controller epoch 1,
// counting every registered broker as alive, and every broker applies its partitions' state at
// once (apply: no network round trip at time 0), in broker order. Broker 0 becoming controller is
// a controller failover like any other: its first leader-imbalance check comes 5 s later.
//
// req is apply's only during the call, to read: the next broker's request reuses its array, and
// its ISRs and replica lists are the znodes' own (a request that never travels needs no copies;
// at a million partitions they were most of the start's allocations).
func (k *Controller) Start(apply func(b int32, req *protocol.LeaderAndIsrRequest)) {
	inc, _ := k.c.Process(0)
	k.broker, k.epoch, k.active = 0, 1, true
	k.shuttingDown = make([]bool, k.brokers)
	k.offline = map[[2]int32]bool{}
	k.incarnation = inc
	k.live = make([]int64, k.brokers)
	for i := range k.brokers {
		k.live[i] = k.zk.sessions[i].epoch
	}
	k.partitionOffline = make([]bool, len(k.zk.partitions))
	req := &protocol.LeaderAndIsrRequest{}
	for b := range int32(k.brokers) {
		k.fillLeaderAndIsr(req, b, k.c.Hosted(b), true)
		apply(b, req)
	}
	k.scheduleAutoRebalance(firstRebalanceDelayMs)
}

// usable reports whether the controller can act: its broker runs and reaches ZooKeeper.
func (k *Controller) usable() bool {
	if !k.active {
		return false
	}
	s := k.zk.sessions[k.broker]
	_, alive := k.c.Process(k.broker)
	return (s.registered && s.connected || k.unregistered) && alive
}

// alive reports whether the controller's broker process runs (a controller whose broker died
// drops its queues).
func (k *Controller) alive() bool {
	_, alive := k.c.Process(k.broker)
	return alive
}

// replicaUsable: the broker is alive and not shutting down per the controller, and the replica's
// log directory works (liveBrokerIds in ControllerContext excludes shutting-down brokers).
func (k *Controller) replicaUsable(pid, b int32) bool {
	return k.live[b] != 0 && !k.shuttingDown[b] && !k.offline[[2]int32{pid, b}]
}

// replicaOnline is ControllerContext.isReplicaOnline with the shutting-down brokers included: the
// broker is registered and the replica's log directory works.
func (k *Controller) replicaOnline(pid, b int32) bool {
	return k.live[b] != 0 && !k.offline[[2]int32{pid, b}]
}

// shuttingDownIDs is ControllerContext.shuttingDownBrokerIds, in broker order.
func (k *Controller) shuttingDownIDs() []int32 {
	var ids []int32
	for b, down := range k.shuttingDown {
		if down {
			ids = append(ids, int32(b))
		}
	}
	return ids
}

// topicOf is the topic partition pid belongs to.
func (k *Controller) topicOf(pid int32) *topic {
	i := sort.Search(len(k.topics), func(i int) bool { return k.topics[i].first+k.topics[i].count > pid })
	return &k.topics[i]
}

// tp names partition pid on the wire.
func (k *Controller) tp(pid int32) protocol.TP {
	t := k.topicOf(pid)
	return protocol.TP{Topic: t.name, Partition: pid - t.first}
}

// name is "topic-index".
func (k *Controller) name(pid int32) string {
	t := k.topicOf(pid)
	return fmt.Sprintf("%s-%d", t.name, pid-t.first)
}

// pidOf is the partition tp names, or -1 if there is none.
func (k *Controller) pidOf(tp protocol.TP) int32 {
	for _, t := range k.topics {
		if t.name == tp.Topic {
			if tp.Partition < 0 || tp.Partition >= t.count {
				return -1
			}
			return t.first + tp.Partition
		}
	}
	return -1
}

// sortedKeys returns a map's keys in order (nil for none): no map order may reach state or output.
func sortedKeys[V any](m map[int32]V) []int32 { return slices.Sorted(maps.Keys(m)) }
