package engine

import (
	"fmt"
	"slices"
)

// The invariants of the scenario contract, checked as the run goes by the checker, an observer
// (observe.go): protocol code states what happened, the checker reads the state and decides. Each names what Kafka
// promises (under clean elections and at most min.insync.replicas-1 unclean shutdowns); scenarios
// that go beyond that (unclean election, older eras, power loss of the whole ISR) expect them to
// break, and say so.

// InvariantNames lists the invariants, in the contract's order.
var InvariantNames = []string{"acked-write-lost", "consumed-record-changed", "committed-divergence", "hw-regression", "epoch-regression"}

// Violation is the first break of an invariant on a partition.
type Violation struct {
	T         int64      `json:"t"`
	Name      string     `json:"name"`
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Replicas  []int32    `json:"replicas,omitempty"`
	Records   []offsetID `json:"records,omitempty"`
	Text      string     `json:"text"`
	// Cause is the event that made it (causes.go): for a lost or changed record, the truncation
	// that dropped the first record named or the election of a leader without it; for
	// committed-divergence, the latest truncation or election on either replica. Nil when the
	// partition's recent history holds none.
	Cause *Cause `json:"cause,omitempty"`
}

// checker watches the run for the contract's invariants. It owns its memory: the violations so
// far and, per partition, the invariants already reported broken there.
type checker struct {
	ignores
	e          *Engine
	violations []Violation
	broken     map[int32][]string // by pid
	// removals are each partition's recent truncations and leader changes, by pid, to name a
	// violation's cause (causes.go).
	removals map[int32][]removal
}

func (c *checker) hwMoved(r *replica, old int64) {
	now := r.log.HighWatermark()
	if now > old && r.hwConfirmed {
		c.checkCommittedRange(r, old, now)
	} else if r.isLeader() {
		p := r.p
		c.violate(p, "hw-regression", []int32{r.broker}, nil,
			fmt.Sprintf("leader %d of %s lowered its high watermark from %d to %d in leader epoch %d", r.broker, p.name(), old, now, r.leaderEpoch))
	}
}

func (c *checker) hwConfirmed(r *replica) {
	c.checkCommittedRange(r, r.log.LogStartOffset(), r.log.HighWatermark())
}

func (c *checker) logCut(r *replica, from int64) { c.checkLeaderLog(r.p, r.broker, from) }

func (c *checker) ackedAll(p *partition, base int64) {
	if p.leader >= 0 {
		c.checkLeaderLog(p, p.leader, base)
	}
}

func (c *checker) partitionWritten(p *partition, oldEpoch int32) {
	if p.leaderEpoch < oldEpoch {
		c.violate(p, "epoch-regression", nil, nil, fmt.Sprintf("the leader epoch of %s went down from %d to %d", p.name(), oldEpoch, p.leaderEpoch))
	}
}

// elected: a new leader's log is now what clients see.
func (c *checker) elected(p *partition) { c.checkLeaderLog(p, -1, 0) }

// violate records a violation the first time name breaks on p.
func (c *checker) violate(p *partition, name string, replicas []int32, records []offsetID, text string) {
	c.violateCaused(p, name, replicas, records, nil, text)
}

// violateCaused is violate naming the event that made the violation.
func (c *checker) violateCaused(p *partition, name string, replicas []int32, records []offsetID, cause *Cause, text string) {
	e := c.e
	if slices.Contains(c.broken[p.pid], name) {
		return
	}
	if c.broken == nil {
		c.broken = map[int32][]string{}
	}
	c.broken[p.pid] = append(c.broken[p.pid], name)
	v := Violation{T: e.now, Name: name, Topic: p.topic, Partition: p.index, Replicas: replicas, Records: records, Cause: cause, Text: text}
	c.violations = append(c.violations, v)
	e.emit(Event{Type: EvViolation, Topic: p.topic, Partition: Some(p.index), Name: name, Replicas: replicas, Cause: cause,
		Text: "violation " + name + ": " + text})
}

// Violations returns every violation so far, in order.
func (e *Engine) Violations() []Violation { return append([]Violation{}, e.check.violations...) }

// ViolationNames returns the set of invariant names broken so far, sorted.
func (e *Engine) ViolationNames() []string {
	var names []string
	for _, v := range e.check.violations {
		if !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
	}
	slices.Sort(names)
	return names
}

// checkLeaderLog checks that the log of the partition's leader (per the controller) still holds
// every record acknowledged with acks=all and every record consumed, at offsets ≥ from. changed
// is the broker whose log changed (-1: the leader changed); only the leader's log matters.
func (c *checker) checkLeaderLog(p *partition, changed int32, from int64) {
	e := c.e
	if p.leader < 0 || (changed >= 0 && changed != p.leader) {
		return
	}
	if e.brokers[p.leader].state == brokerDead {
		// NB: a dead leader the controller has not noticed yet serves nothing, so a power loss
		// there loses nothing by itself; the log is checked when a live leader is elected.
		return
	}
	if changed < 0 {
		from = 0
	}
	log := &p.replicaOn(p.leader).log
	if lost := missing(log, e.client(p).AckedAll(), from); len(lost) > 0 {
		c.violateCaused(p, "acked-write-lost", []int32{p.leader}, lost, c.causeOf(p, p.leader, lost[0]),
			fmt.Sprintf("%d records acknowledged with acks=all are not in the log of leader %d of %s (first: record %d at offset %d)",
				len(lost), p.leader, p.name(), lost[0].ID, lost[0].Offset))
	}
	if gone := missing(log, e.client(p).Consumed(), from); len(gone) > 0 {
		c.violateCaused(p, "consumed-record-changed", []int32{p.leader}, gone, c.causeOf(p, p.leader, gone[0]),
			fmt.Sprintf("%d records a consumer read are no longer at their offsets in the log of leader %d of %s (first: record %d at offset %d)",
				len(gone), p.leader, p.name(), gone[0].ID, gone[0].Offset))
	}
}

func missing(log interface {
	At(int64) (commitlogRecord, bool)
}, recs []offsetID, from int64) []offsetID {
	var out []offsetID
	for _, r := range recs {
		if r.Offset < from {
			continue
		}
		if got, ok := log.At(r.Offset); !ok || got.ID != r.ID {
			out = append(out, r)
		}
	}
	return out
}

// checkCommittedRange compares replica r's records in [from, to), now below its HW, with every
// other live replica's below that replica's HW (committed-divergence). Records below a replica's
// HW only change by a truncation that also lowers the HW, so checking each range when it becomes
// committed is enough.
func (c *checker) checkCommittedRange(r *replica, from, to int64) {
	e := c.e
	p := r.p
	for _, s := range p.replicas {
		// Only replicas in the same leader epoch are compared: a deposed leader cut off from the
		// cluster keeps its old HW until it hears of the new epoch.
		if s == r || e.brokers[s.broker].state == brokerDead || !s.hwConfirmed || s.leaderEpoch != r.leaderEpoch {
			continue
		}
		end := min(to, s.log.HighWatermark())
		for o := from; o < end; o++ {
			a, okA := r.log.At(o)
			b, okB := s.log.At(o)
			if okA && okB && a.ID != b.ID {
				c.violateCaused(p, "committed-divergence", []int32{r.broker, s.broker},
					[]offsetID{{Offset: o, ID: a.ID}, {Offset: o, ID: b.ID}}, c.causeOfDivergence(p, r.broker, s.broker, o),
					fmt.Sprintf("brokers %d and %d hold different records at offset %d of %s (records %d and %d), below both high watermarks",
						r.broker, s.broker, o, p.name(), a.ID, b.ID))
				return
			}
		}
	}
}
