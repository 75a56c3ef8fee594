package engine

import "github.com/highwater-sim/highwater/engine/commitlog"

// Causes of violations. Finding that an acknowledged record is gone happens late: when a replica
// that lost it becomes leader, or when a producer's acknowledgement arrives. The page's "jump to
// cause" needs the moment it was lost instead: the truncation that dropped the record from the
// replica now leading, or the election that picked a leader that never had it. So each partition
// keeps its recent truncations and leader changes, learnt from the events themselves (emit), so
// that every path that truncates or elects is covered.

// Cause is the event that made a violation.
type Cause struct {
	T      int64      `json:"t"`
	Type   string     `json:"type"` // truncate or leader-change
	Broker Opt[int32] `json:"broker,omitzero"`
	Text   string     `json:"text"`
}

// removal is a truncation (broker cut records from offset `from`) or a leader change (to leader).
type removal struct {
	cause  Cause
	broker int32
	from   int64
	cut    []commitlog.Record
}

// maxRemovals bounds the history a partition keeps: a cause older than that many truncations and
// leader changes is not named (the violation still is).
const maxRemovals = 64

// noteRemoval remembers a truncation or leader change of a partition.
func (e *Engine) noteRemoval(ev *Event) {
	if ev.Type != EvTruncate && ev.Type != EvLeaderChange {
		return
	}
	p := e.partitionOf(ev.Topic, ev.Partition.V)
	if p == nil {
		return
	}
	rm := removal{cause: Cause{T: e.now, Type: ev.Type, Broker: ev.Broker, Text: ev.Text}}
	if ev.Type == EvTruncate {
		rm.broker, rm.from, rm.cut = ev.Broker.V, ev.To.V, ev.Records
	} else {
		rm.broker = int32(ev.To.V)
	}
	if len(p.removals) == maxRemovals {
		p.removals = append(p.removals[:0], p.removals[1:]...)
	}
	p.removals = append(p.removals, rm)
}

// causeOf names what removed record rec from the log of leader: the latest truncation on that
// broker that dropped it, else the latest election of that broker (a leader that never had it).
func (p *partition) causeOf(leader int32, rec offsetID) *Cause {
	for i := len(p.removals) - 1; i >= 0; i-- {
		rm := &p.removals[i]
		if rm.cause.Type != EvTruncate || rm.broker != leader {
			continue
		}
		if k := rec.Offset - rm.from; k >= 0 && k < int64(len(rm.cut)) && rm.cut[k].ID == rec.ID {
			c := rm.cause
			return &c
		}
	}
	for i := len(p.removals) - 1; i >= 0; i-- {
		if rm := &p.removals[i]; rm.cause.Type == EvLeaderChange && rm.broker == leader {
			c := rm.cause
			return &c
		}
	}
	return nil
}

// causeOfDivergence names what let brokers a and b hold different records at offset o: the latest
// truncation on either that cut at or below o (a power loss, a truncation to the wrong point),
// else the latest election of either.
func (p *partition) causeOfDivergence(a, b int32, o int64) *Cause {
	for i := len(p.removals) - 1; i >= 0; i-- {
		if rm := &p.removals[i]; rm.cause.Type == EvTruncate && (rm.broker == a || rm.broker == b) && rm.from <= o {
			c := rm.cause
			return &c
		}
	}
	for i := len(p.removals) - 1; i >= 0; i-- {
		if rm := &p.removals[i]; rm.cause.Type == EvLeaderChange && (rm.broker == a || rm.broker == b) {
			c := rm.cause
			return &c
		}
	}
	return nil
}
