// Package check is the run's invariant checker: the scenario contract's invariants, checked by an
// observer of the facts protocol code states (a high watermark moved, a log was cut, a leader was
// elected, ...), never by protocol code itself. The checker owns its memory (the violations, the
// invariants already broken on each partition, each partition's recent truncations and leader
// changes to name a violation's cause) and reads the cluster only through Cluster, so it cannot
// change it.
package check

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/clients"
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/plural"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Names lists the invariants, in the contract's order. Each names what Kafka promises (under
// clean elections and at most min.insync.replicas-1 unclean shutdowns); scenarios that go beyond
// that (unclean election, older eras, power loss of the whole ISR) expect them to break, and say so.
var Names = []string{"acked-write-lost", "consumed-record-changed", "committed-divergence", "hw-regression", "epoch-regression"}

// Violation is the first break of an invariant on a partition.
type Violation struct {
	T         int64              `json:"t"`
	Name      string             `json:"name"`
	Topic     string             `json:"topic"`
	Partition int32              `json:"partition"`
	Replicas  []int32            `json:"replicas,omitempty"`
	Records   []clients.OffsetID `json:"records,omitempty"`
	Text      string             `json:"text"`
	// Cause is the event that made it (causes.go): for a lost or changed record, the truncation
	// that dropped the first record named or the election of a leader without it; for
	// committed-divergence, the latest truncation or election on either replica. Nil when the
	// partition's recent history holds none.
	Cause *Cause `json:"cause,omitempty"`
}

// Cluster is what the checker reads: the controller's record of each partition, each replica's
// log and role, whether a broker is dead, and the clients' records. Partitions are named by pid.
type Cluster interface {
	Now() int64
	// PartitionName is the partition's topic and index.
	PartitionName(pid int32) (topic string, index int32)
	// Leader is the controller's leader of the partition (-1 for none) and its leader epoch.
	Leader(pid int32) (leader, epoch int32)
	BrokerDead(b int32) bool
	// Replica is broker b's replica of the partition.
	Replica(pid, b int32) Replica
	// Replicas are the partition's replicas, one per host in assignment order, appended to buf:
	// a HW move compares the replica with every other, so they are read at once (the hosts'
	// list, then each replica), not host by host.
	Replicas(pid int32, buf []Replica) []Replica
	// AckedAll and Consumed are the records acknowledged with acks=all and the records consumed,
	// each in the order it happened, and how long a prefix of each is in offset order
	// (non-decreasing); records are only ever added at the end.
	AckedAll(pid int32) (recs []clients.OffsetID, sorted int)
	Consumed(pid int32) (recs []clients.OffsetID, sorted int)
}

// Replica is what the checker reads of one replica.
type Replica struct {
	Broker int32 // the broker holding it
	Log    *commitlog.Log
	// HWConfirmed: the replica's HW comes from its current leadership (see the engine's replica).
	HWConfirmed bool
	LeaderEpoch int32
	// HWEpoch is the leader epoch its HW comes from (the engine's replica's HWEpoch): a
	// follower's is the epoch of the leader that answered it, before 2.1 possibly newer than
	// its own LeaderEpoch.
	HWEpoch int32
	// IsLeader: the replica leads (as its broker knows it).
	IsLeader bool
}

// Checker checks the invariants. Its zero value is not ready: use New.
type Checker struct {
	c          Cluster
	violated   func(*Violation)
	violations []Violation
	broken     map[int32][]string // by pid
	removals   map[int32][]removal
	// reps holds the replicas of the partition being checked (replicas), reused.
	reps []Replica
}

// New returns a checker reading c; violated hears each violation as it is found (the engine
// records it as an event).
func New(c Cluster, violated func(*Violation)) *Checker {
	return &Checker{c: c, violated: violated}
}

// Violations returns every violation so far, in order (shared: do not change).
func (k *Checker) Violations() []Violation { return k.violations }

// Names returns the set of invariant names broken so far, sorted.
func (k *Checker) Names() []string {
	var names []string
	for _, v := range k.violations {
		if !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
	}
	slices.Sort(names)
	return names
}

func (k *Checker) name(pid int32) string {
	topic, index := k.c.PartitionName(pid)
	return fmt.Sprintf("%s-%d", topic, index)
}

// The facts, as protocol code states them.

// HWMoved: broker b's replica of pid moved its high watermark from old to what its log holds now.
func (k *Checker) HWMoved(pid, b int32, old int64) {
	rs := k.replicas(pid)
	r := replicaOf(rs, b)
	now := r.Log.HighWatermark()
	if now > old && r.HWConfirmed {
		k.checkCommittedRange(pid, r, rs, old, now)
	} else if r.IsLeader {
		k.violate(pid, "hw-regression", []int32{b}, nil,
			fmt.Sprintf("leader %d of %s lowered its high watermark from %d to %d in leader epoch %d", b, k.name(pid), old, now, r.LeaderEpoch))
	}
}

// HWConfirmed: replica r of pid learned a high watermark in its current leader epoch for the
// first time (its broker holds it as it states the fact: no lookup).
func (k *Checker) HWConfirmed(pid int32, r Replica) {
	// Its own replica first: at a cluster's start every replica confirms an empty range, and the
	// others are read only for a range to compare.
	if from, to := r.Log.LogStartOffset(), r.Log.HighWatermark(); from < to {
		k.checkCommittedRange(pid, &r, k.replicas(pid), from, to)
	}
}

// LogCut: broker b's log lost its records from offset from on (a truncation or a power loss).
func (k *Checker) LogCut(pid, b int32, from int64) { k.checkLeaderLog(pid, b, from) }

// AckedAll: the producer got an acks=all acknowledgement for a batch at offset base.
func (k *Checker) AckedAll(pid int32, base int64) {
	if leader, _ := k.c.Leader(pid); leader >= 0 {
		k.checkLeaderLog(pid, leader, base)
	}
}

// Consumed: a consumer's read of pid from offset from reached it. The records were the log of the
// broker that answered at the time it read them, but the partition's leader may have changed
// since (an election while the answer was on its way, or a consumer whose metadata still named
// the deposed leader): the contract's consumed-record-changed asks about the log of the
// partition's leader, so the records read are checked against it now, as an acks=all
// acknowledgement is (AckedAll).
func (k *Checker) Consumed(pid int32, from int64) {
	if leader, _ := k.c.Leader(pid); leader >= 0 {
		k.checkLeaderLog(pid, leader, from)
	}
}

// PartitionWritten: the controller wrote the partition's leader and ISR; the leader epoch was old.
func (k *Checker) PartitionWritten(pid, oldEpoch int32) {
	if _, epoch := k.c.Leader(pid); epoch < oldEpoch {
		k.violate(pid, "epoch-regression", nil, nil, fmt.Sprintf("the leader epoch of %s went down from %d to %d", k.name(pid), oldEpoch, epoch))
	}
}

// Elected: the partition has a new leader (or an offline partition's leader was elected again);
// its log is now what clients see.
func (k *Checker) Elected(pid int32) { k.checkLeaderLog(pid, -1, 0) }

// violate records a violation the first time name breaks on the partition.
func (k *Checker) violate(pid int32, name string, replicas []int32, records []clients.OffsetID, text string) {
	k.violateCaused(pid, name, replicas, records, nil, text)
}

// violateCaused is violate naming the event that made the violation.
func (k *Checker) violateCaused(pid int32, name string, replicas []int32, records []clients.OffsetID, cause *Cause, text string) {
	if slices.Contains(k.broken[pid], name) {
		return
	}
	if k.broken == nil {
		k.broken = map[int32][]string{}
	}
	k.broken[pid] = append(k.broken[pid], name)
	topic, index := k.c.PartitionName(pid)
	k.violations = append(k.violations, Violation{T: k.c.Now(), Name: name, Topic: topic, Partition: index,
		Replicas: replicas, Records: records, Cause: cause, Text: text})
	if k.violated != nil {
		k.violated(&k.violations[len(k.violations)-1])
	}
}

// checkLeaderLog checks that the log of the partition's leader (per the controller) still holds
// every record acknowledged with acks=all and every record consumed, at offsets ≥ from. changed
// is the broker whose log changed (-1: the leader changed); only the leader's log matters.
func (k *Checker) checkLeaderLog(pid, changed int32, from int64) {
	leader, _ := k.c.Leader(pid)
	if leader < 0 || (changed >= 0 && changed != leader) {
		return
	}
	if k.c.BrokerDead(leader) {
		// NB: a dead leader the controller has not noticed yet serves nothing, so a power loss
		// there loses nothing by itself; the log is checked when a live leader is elected.
		return
	}
	if changed < 0 {
		from = 0
	}
	log := k.c.Replica(pid, leader).Log
	acked, ackedSorted := k.c.AckedAll(pid)
	consumed, consumedSorted := k.c.Consumed(pid)
	if lost := missing(log, acked, from, ackedSorted); len(lost) > 0 {
		k.violateCaused(pid, "acked-write-lost", []int32{leader}, lost, k.causeOf(pid, leader, lost[0]),
			fmt.Sprintf("%s acknowledged with acks=all %s not in the log of leader %d of %s (first: record %d at offset %d)",
				plural.Of(len(lost), "record"), plural.Pick(len(lost), "is", "are"), leader, k.name(pid), lost[0].ID, lost[0].Offset))
	}
	if gone := missing(log, consumed, from, consumedSorted); len(gone) > 0 {
		k.violateCaused(pid, "consumed-record-changed", []int32{leader}, gone, k.causeOf(pid, leader, gone[0]),
			fmt.Sprintf("%s a consumer read %s no longer at %s offset%s in the log of leader %d of %s (first: record %d at offset %d)",
				plural.Of(len(gone), "record"), plural.Pick(len(gone), "is", "are"), plural.Pick(len(gone), "its", "their"), plural.Pick(len(gone), "", "s"), leader, k.name(pid), gone[0].ID, gone[0].Offset))
	}
}

// missing is the records of recs at offsets ≥ from that log does not hold, in recs' order;
// recs[:sorted] are in offset order (a list stays ordered unless records were lost: an
// acknowledged record's offset is then taken again), so those below from are skipped by a binary
// search instead of one by one: a partition's acknowledged records are checked at every
// acknowledgement, and a long run's lists would make that quadratic.
func missing(log *commitlog.Log, recs []clients.OffsetID, from int64, sorted int) []clients.OffsetID {
	var out []clients.OffsetID
	skip, _ := slices.BinarySearchFunc(recs[:sorted], from, func(r clients.OffsetID, o int64) int { return cmp.Compare(r.Offset, o) })
	for _, r := range recs[skip:] {
		if r.Offset < from {
			continue
		}
		if got, ok := log.At(r.Offset); !ok || got.ID != r.ID {
			out = append(out, r)
		}
	}
	return out
}

// replicas are the partition's replicas (Cluster.Replicas), in the checker's reused buffer: valid
// until the next call.
func (k *Checker) replicas(pid int32) []Replica {
	k.reps = k.c.Replicas(pid, k.reps[:0])
	return k.reps
}

// replicaOf is broker b's replica among rs (there is one: b holds the replica whose fact it is).
func replicaOf(rs []Replica, b int32) *Replica {
	for i := range rs {
		if rs[i].Broker == b {
			return &rs[i]
		}
	}
	panic("check: no replica on the broker stating the fact")
}

// checkCommittedRange compares replica r's records in [from, to), now below its HW, with every
// other live replica's of rs (the partition's) below that replica's HW (committed-divergence).
// Records below a replica's HW only change by a truncation that also lowers the HW, so checking
// each range when it becomes committed is enough.
func (k *Checker) checkCommittedRange(pid int32, r *Replica, rs []Replica, from, to int64) {
	if from >= to {
		return // nothing newly committed
	}
	b := r.Broker
	for i := range rs {
		s := &rs[i]
		h := s.Broker
		if h == b {
			continue
		}
		// Only replicas whose HWs come from the same leader epoch are compared: a deposed leader
		// cut off from the cluster keeps its old HW until it hears of the new epoch. A follower's
		// HW is the answering leader's epoch's, even when the follower never heard of that epoch
		// (before 2.1 a Fetch carries none: KAFKA-6880's zombie follower).
		if !s.HWConfirmed || s.HWEpoch != r.HWEpoch {
			continue
		}
		// Only live replicas are compared; whether h is dead is asked last, as the range below
		// h's HW is usually empty (a leader's HW moves before its followers learn it) and the
		// broker's state is a cache miss at scale.
		end := min(to, s.Log.HighWatermark())
		if end <= from || k.c.BrokerDead(h) {
			continue
		}
		for o := from; o < end; o++ {
			a, okA := r.Log.At(o)
			c, okC := s.Log.At(o)
			if okA && okC && a.ID != c.ID {
				held := fmt.Sprintf("records %d and %d", a.ID, c.ID)
				if a.Gap || c.Gap { // one holds no record there (commitlog.Record.Gap)
					held = recordOrGap(a) + " and " + recordOrGap(c)
				}
				k.violateCaused(pid, "committed-divergence", []int32{b, h},
					[]clients.OffsetID{{Offset: o, ID: a.ID}, {Offset: o, ID: c.ID}}, k.causeOfDivergence(pid, b, h, o),
					fmt.Sprintf("brokers %d and %d hold different records at offset %d of %s (%s), below both high watermarks",
						b, h, o, k.name(pid), held))
				return
			}
		}
	}
}

// recordOrGap names what a log holds at an offset: a record, or none (a Gap a truncation inside
// a batch left).
func recordOrGap(r commitlog.Record) string {
	if r.Gap {
		return "no record"
	}
	return fmt.Sprintf("record %d", r.ID)
}

// Opt is the optional number of a cause's broker.
type Opt = protocol.Opt[int32]
