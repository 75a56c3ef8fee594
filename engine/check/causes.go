package check

import (
	"github.com/highwater-sim/highwater/engine/clients"
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Causes of violations. Finding that an acknowledged record is gone happens late: when a replica
// that lost it becomes leader, or when a producer's acknowledgement arrives. The page's "jump to
// cause" needs the moment it was lost instead: the truncation that dropped the record from the
// replica now leading, or the election that picked a leader that never had it. So each partition
// keeps its recent truncations and leader changes, which the checker hears as they happen
// (Truncated, LeaderChanged: the engine tells it of every such event, traced or not), so every
// path that truncates or elects is covered.

// Cause is the event that made a violation: its time, type (truncate or leader-change), broker
// and text, as the trace has them.
type Cause struct {
	T      int64  `json:"t"`
	Type   string `json:"type"`
	Broker Opt    `json:"broker,omitzero"`
	Text   string `json:"text"`
}

// The event types a cause can have (the engine's own names for them).
const (
	CauseTruncate     = "truncate"
	CauseLeaderChange = "leader-change"
)

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

// Truncated: broker b (the event's broker) cut the partition's records from offset from on; cut
// are the records dropped and text the event's.
func (k *Checker) Truncated(pid int32, b int32, from int64, cut []commitlog.Record, text string) {
	k.remember(pid, removal{cause: Cause{T: k.c.Now(), Type: CauseTruncate, Broker: protocol.Some(b), Text: text}, broker: b, from: from, cut: cut})
}

// LeaderChanged: leader became the partition's leader; broker and text are the event's.
func (k *Checker) LeaderChanged(pid int32, broker Opt, leader int32, text string) {
	k.remember(pid, removal{cause: Cause{T: k.c.Now(), Type: CauseLeaderChange, Broker: broker, Text: text}, broker: leader})
}

func (k *Checker) remember(pid int32, rm removal) {
	if k.removals == nil {
		k.removals = map[int32][]removal{}
	}
	rms := k.removals[pid]
	if len(rms) == maxRemovals {
		rms = append(rms[:0], rms[1:]...)
	}
	k.removals[pid] = append(rms, rm)
}

// causeOf names what removed record rec from the log of leader: the latest truncation on that
// broker that dropped it, else the latest election of that broker (a leader that never had it).
func (k *Checker) causeOf(pid, leader int32, rec clients.OffsetID) *Cause {
	rms := k.removals[pid]
	for i := len(rms) - 1; i >= 0; i-- {
		rm := &rms[i]
		if rm.cause.Type != CauseTruncate || rm.broker != leader {
			continue
		}
		if n := rec.Offset - rm.from; n >= 0 && n < int64(len(rm.cut)) && rm.cut[n].ID == rec.ID {
			cause := rm.cause
			return &cause
		}
	}
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == CauseLeaderChange && rm.broker == leader {
			cause := rm.cause
			return &cause
		}
	}
	return nil
}

// causeOfDivergence names what let brokers a and b hold different records at offset o: the latest
// truncation on either that cut at or below o (a power loss, a truncation to the wrong point),
// else the latest election of either.
func (k *Checker) causeOfDivergence(pid, a, b int32, o int64) *Cause {
	rms := k.removals[pid]
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == CauseTruncate && (rm.broker == a || rm.broker == b) && rm.from <= o {
			cause := rm.cause
			return &cause
		}
	}
	for i := len(rms) - 1; i >= 0; i-- {
		if rm := &rms[i]; rm.cause.Type == CauseLeaderChange && (rm.broker == a || rm.broker == b) {
			cause := rm.cause
			return &cause
		}
	}
	return nil
}
