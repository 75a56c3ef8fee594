package engine

import "github.com/highwater-sim/highwater/engine/commitlog"

// Causes of violations. Finding that an acknowledged record is gone happens late: when a replica
// that lost it becomes leader, or when a producer's acknowledgement arrives. The page's "jump to
// cause" needs the moment it was lost instead: the truncation that dropped the record from the
// replica now leading, or the election that picked a leader that never had it. So each partition
// keeps its recent truncations and leader changes, which the checker learns from the events
// themselves (emit hands it every event, traced or not), so every path that truncates or elects
// is covered.

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

// heard is the checker hearing an event: it remembers a truncation or leader change of a
// partition.
func (c *checker) heard(ev *Event) {
	if ev.Type != EvTruncate && ev.Type != EvLeaderChange {
		return
	}
	e := c.e
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
	if c.removals == nil {
		c.removals = map[int32][]removal{}
	}
	rms := c.removals[p.pid]
	if len(rms) == maxRemovals {
		rms = append(rms[:0], rms[1:]...)
	}
	c.removals[p.pid] = append(rms, rm)
}

// causeOf names what removed record rec from the log of leader: the latest truncation on that
// broker that dropped it, else the latest election of that broker (a leader that never had it).
func (c *checker) causeOf(p *partition, leader int32, rec offsetID) *Cause {
	rms := c.removals[p.pid]
	for i := len(rms) - 1; i >= 0; i-- {
		rm := &rms[i]
		if rm.cause.Type != EvTruncate || rm.broker != leader {
			continue
		}
		if k := rec.Offset - rm.from; k >= 0 && k < int64(len(rm.cut)) && rm.cut[k].ID == rec.ID {
			cause := rm.cause
			return &cause
		}
	}
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == EvLeaderChange && rm.broker == leader {
			cause := rm.cause
			return &cause
		}
	}
	return nil
}

// causeOfDivergence names what let brokers a and b hold different records at offset o: the latest
// truncation on either that cut at or below o (a power loss, a truncation to the wrong point),
// else the latest election of either.
func (c *checker) causeOfDivergence(p *partition, a, b int32, o int64) *Cause {
	rms := c.removals[p.pid]
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == EvTruncate && (rm.broker == a || rm.broker == b) && rm.from <= o {
			cause := rm.cause
			return &cause
		}
	}
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == EvLeaderChange && (rm.broker == a || rm.broker == b) {
			cause := rm.cause
			return &cause
		}
	}
	return nil
}
