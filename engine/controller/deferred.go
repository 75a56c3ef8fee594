package controller

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// An operator's election asked while no controller can act on it: the controller's broker is
// cut off from ZooKeeper (isolated) or dead, or no controller runs. Kafka does not refuse it:
//   - before 2.2 the tools write the request to ZooKeeper (/admin/preferred_replica_election,
//     with /admin/reassign_partitions for a chosen leader) and the controller acts on the znode's
//     watch: when its connection comes back within its session (the watch fires on reconnection),
//     or when a new controller takes over (onControllerFailover reads the pending reassignments,
//     then the pending preferred elections: maybeTriggerPartitionReassignment and
//     maybeTriggerPreferredReplicaElection in 0.10.2.2, fetchPendingPreferredReplicaElections in
//     2.1.1);
//   - from 2.2 (KIP-183; 3.7's kafka-leader-election.sh) the admin client sends ElectLeaders to the
//     controller. A controller cut off from ZooKeeper, but reachable by clients, takes it, and its
//     event thread waits for ZooKeeper (KafkaZkClient.retryRequestsUntilConnected): the election
//     happens if it reconnects within its session, and is lost if the session expired (the ZooKeeper
//     call throws, the request is never answered). With no live controller, the admin client waits
//     for one (ControllerNodeProvider) up to default.api.timeout.ms and then sends it there.

// adminAPITimeoutMs is the admin client's default.api.timeout.ms (AdminClientConfig, 60000 in
// 3.7.0), the deadline of KafkaAdminClient.electLeaders' call waiting for a controller
// (ControllerNodeProvider).
const adminAPITimeoutMs = 60_000

// deferredElection is an election ElectLeaders could not run: the partition, the chosen leader
// (nil: preferred), unclean, when it was asked, and whether a live controller cut off from
// ZooKeeper took it.
type deferredElection struct {
	pid         int32
	target      *int32
	unclean     bool
	at          int64
	takenByLive bool
}

// deferElection keeps an election asked while the controller cannot act (ElectLeaders with
// !usable()).
func (k *Controller) deferElection(pid int32, target *int32, unclean bool) {
	d := deferredElection{pid: pid, unclean: unclean, at: k.c.Now()}
	if target != nil {
		t := *target
		d.target = &t
	}
	_, alive := k.c.Process(k.broker)
	why := "no controller is running"
	if k.active && alive && k.zk.sessions[k.broker].registered {
		d.takenByLive = true
		why = fmt.Sprintf("broker %d, the controller, is cut off from ZooKeeper", k.broker)
	} else if k.active {
		why = fmt.Sprintf("broker %d, the controller, is down", k.broker)
	}
	k.deferred = append(k.deferred, d)
	t := k.topicOf(pid)
	k.c.Emit(Event{Type: EvController, Topic: t.name, Partition: protocol.Some(pid - t.first), Reason: "election waits",
		Text: fmt.Sprintf("election for %s waits for a controller: %s", k.name(pid), why)})
}

// runDeferredElections runs the elections that waited, once a controller can act: the controller
// that took them reconnected within its session, or a new one took over (failover). From 2.2 a
// new controller gets only those no live controller had taken, asked within the admin client's
// timeout; the others are lost.
func (k *Controller) runDeferredElections(failover bool) {
	if len(k.deferred) == 0 || !k.usable() {
		return
	}
	list := k.deferred
	k.deferred = nil
	for _, d := range list {
		if failover && k.era.BrokerEpochs && (d.takenByLive || k.c.Now()-d.at > adminAPITimeoutMs) {
			t := k.topicOf(d.pid)
			k.c.Emit(Event{Type: EvElectFailed, Topic: t.name, Partition: protocol.Some(d.pid - t.first), Name: protocol.ErrRequestTimedOut.String(),
				Text: fmt.Sprintf("election for %s not done: the controller that took it lost its ZooKeeper session, or none came within %d ms (REQUEST_TIMED_OUT)", k.name(d.pid), adminAPITimeoutMs)})
			continue
		}
		if failover && !k.era.BrokerEpochs && !d.unclean && k.preferredAlreadyLeads(d) {
			// Before 2.2 a new controller drops the pending preferred elections whose preferred
			// replica already leads (0.10.2.2 initializePreferredReplicaElection, 2.1.1
			// fetchPendingPreferredReplicaElections: "check if they are already completed"),
			// without electing again.
			continue
		}
		k.ElectLeaders(d.pid, d.target, d.unclean)
	}
}

// preferredAlreadyLeads reports whether d's preferred replica (its chosen leader, already at the
// head of the assignment, or the head) leads.
func (k *Controller) preferredAlreadyLeads(d deferredElection) bool {
	p := &k.zk.partitions[d.pid]
	if d.target != nil && *d.target != p.assignment[0] {
		return false // the reassignment that puts it first runs (and bumps the leader epoch)
	}
	return p.leader == p.assignment[0]
}
