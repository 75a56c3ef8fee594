package engine

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/check"
)

// The contract's invariants are checked by package check, an observer of the facts protocol code
// states (observe.go). This file is the engine's side of it: the facts handed on with partitions
// and replicas named by id, the cluster as the checker reads it (check.Cluster), and the
// violations it finds recorded as events.

// InvariantNames lists the invariants, in the contract's order.
var InvariantNames = check.Names

// Violation is the first break of an invariant on a partition.
type Violation = check.Violation

// Cause is the event that made a violation.
type Cause = check.Cause

// newChecker builds the run's checker on e's state.
func newChecker(e *Engine) *check.Checker {
	return check.New(checkCluster{e}, func(v *Violation) {
		e.emit(Event{Type: EvViolation, Topic: v.Topic, Partition: Some(v.Partition), Name: v.Name, Replicas: v.Replicas,
			Cause: v.Cause, Text: "violation " + v.Name + ": " + v.Text})
	})
}

// checkObserver hands the facts to the checker.
type checkObserver struct {
	ignores
	k *check.Checker
	e *Engine
}

func (o checkObserver) hwMoved(pid, b int32, old int64)          { o.k.HWMoved(pid, b, old) }
func (o checkObserver) hwConfirmed(r *replica)                   { o.k.HWConfirmed(r.Pid(), checkReplica(o.e, r)) }
func (o checkObserver) logCut(pid, b int32, from int64)          { o.k.LogCut(pid, b, from) }
func (o checkObserver) ackedAll(pid int32, base int64)           { o.k.AckedAll(pid, base) }
func (o checkObserver) consumed(pid int32, from int64)           { o.k.Consumed(pid, from) }
func (o checkObserver) partitionWritten(p *partition, old int32) { o.k.PartitionWritten(p.pid, old) }
func (o checkObserver) elected(p *partition)                     { o.k.Elected(p.pid) }

// hearCause tells the checker of a truncation or leader change, traced or not: it keeps each
// partition's recent ones to name a violation's cause.
func (e *Engine) hearCause(ev *Event) {
	if !hearsCause(ev.Type) {
		return
	}
	p := e.partitionOf(ev.Topic, ev.Partition.V)
	if p == nil {
		return
	}
	if ev.Type == EvTruncate {
		e.checker.Truncated(p.pid, ev.Broker.V, ev.To.V, ev.Records, ev.Text)
	} else {
		e.checker.LeaderChanged(p.pid, ev.Broker, int32(ev.To.V), ev.Text)
	}
}

// hearsCause: the checker keeps the text of an event of type typ as a violation's cause, so it
// is made with the trace off too (broker_cluster.go's Emit).
func hearsCause(typ string) bool { return typ == EvTruncate || typ == EvLeaderChange }

// checkCluster is the cluster as the checker reads it.
type checkCluster struct{ e *Engine }

func (c checkCluster) Now() int64 { return c.e.now }

func (c checkCluster) PartitionName(pid int32) (string, int32) {
	p := c.e.partitions[pid]
	return p.topic, p.index
}

func (c checkCluster) Leader(pid int32) (int32, int32) {
	return c.e.ctrl.Leader(pid), c.e.ctrl.LeaderEpoch(pid)
}

func (c checkCluster) BrokerDead(b int32) bool { return c.e.brokers[b].Dead() }

func (c checkCluster) Replica(pid, b int32) check.Replica {
	return checkReplica(c.e, c.e.replicaOn(pid, b))
}

// Replicas reads the hosts' replicas through the index's one line for the partition
// (brk.HostIndex.HostsOf), not through a lookup per host.
func (c checkCluster) Replicas(pid int32, buf []check.Replica) []check.Replica {
	brokers, hosts, n := c.e.brokers, c.e.index.HostsOf(pid), len(buf)
	buf = slices.Grow(buf, len(hosts))[:n+len(hosts)]
	for i, h := range hosts {
		fillCheckReplica(c.e, &buf[n+i], brokers[h.Broker()].ReplicaAt(h.Slot()))
	}
	return buf
}

// fillCheckReplica sets d to what the checker reads of r (in place: a HW move reads every
// replica of its partition).
func fillCheckReplica(e *Engine, d *check.Replica, r *replica) {
	d.Broker, d.LeaderEpoch, d.HWConfirmed, d.IsLeader = r.Broker(), r.LeaderEpoch(), r.HWConfirmed(), r.IsLeader()
	d.HWEpoch = hwEpoch(e, r)
	d.Log = r.Log()
}

// hwEpoch is the leader epoch r's HW comes from, for committed-divergence: a leader's own, and a
// follower's own too from 2.1, where its Fetch carries its epoch and a leader in another epoch
// fences it (KIP-320). Before 2.1 a Fetch carries no epoch: a leader answers a follower that
// missed its LeaderAndIsr (0.10.2.2 and 0.11.0.2 ReplicaManager.readFromLocalLog asks only that it
// leads), and the follower takes that leader's HW (ReplicaFetcherThread.processPartitionData:
// min(own LEO, leader HW)), so the HW is the epoch of the live leader it fetches from: KAFKA-6880's
// zombie follower.
func hwEpoch(e *Engine, r *replica) int32 {
	if r.IsLeader() || e.era.fencing {
		return r.LeaderEpoch()
	}
	if l := r.Leader(); l >= 0 && l != r.Broker() && !e.brokers[l].Dead() {
		if lr := e.replicaOn(r.Pid(), l); lr != nil && lr.IsLeader() {
			return lr.LeaderEpoch()
		}
	}
	return r.LeaderEpoch()
}

func checkReplica(e *Engine, r *replica) check.Replica {
	var d check.Replica
	fillCheckReplica(e, &d, r)
	return d
}

func (c checkCluster) AckedAll(pid int32) ([]offsetID, int) {
	p := c.e.clients.Partition(pid)
	return p.AckedAll(), p.AckedAllSorted()
}

func (c checkCluster) Consumed(pid int32) ([]offsetID, int) {
	p := c.e.clients.Partition(pid)
	return p.Consumed(), p.ConsumedSorted()
}

// Violations returns every violation so far, in order.
func (e *Engine) Violations() []Violation { return append([]Violation{}, e.checker.Violations()...) }

// ViolationNames returns the set of invariant names broken so far, sorted.
func (e *Engine) ViolationNames() []string { return e.checker.Names() }
