package engine

import "github.com/highwater-sim/highwater/engine/netsim"

// The outbox: while the loop runs an agenda item, what a handler does to the world outside its
// node (a message sent, a timer set, a trace event) is appended here, and the loop carries it out
// when the handler returns, in the order it was appended (like etcd raft's Ready). The handler's
// own state changes at once; message ids are assigned at once (a requester keeps its request's
// id), and a request is in flight from then on. The network's part of a send (the latency and its
// jitter draw, the link's FIFO order, holding it on a cut link) happens when the loop drains the
// outbox, as do the agenda pushes and the events, so the order of every draw, every agenda
// sequence number and every event is the order of the handler's calls: the trace is the one the
// handlers would make acting in place.
//
// Actions (Apply) use the outbox too. A held message released by a healed link is an effect of its
// own (effResend): its retransmission draws the link's jitter and takes its place in the link's
// FIFO order, so it must come in the order of the action's sends, not before all of them.

type effectKind uint8

const (
	effSend   effectKind = iota // transmit msg
	effTimer                    // push it on the agenda
	effEvent                    // record outEvents[ev]
	effResend                   // resend resends[ev], a held message its healed link lets through
)

// effect is one effect, in order; what it carries is in its kind's list, at ev. Pointer-free, as
// are the timers' agenda entries: the effects of every agenda item are appended and dropped
// without the write barrier's bulk copies (issue 12: costly under WebAssembly).
type effect struct {
	kind effectKind
	up   bool   // effSend: the link was up when the handler sent
	ev   int32  // the effect's place in its kind's list: sends, timers, events or resends
	gen  uint64 // effSend: the receiver's incarnation when the handler sent
}

type outbox struct {
	active  bool // an agenda item is running: effects wait here
	effs    []effect
	sends   []*Message
	timers  []entry // agenda entries, their pointers already in the agenda's refs
	events  []Event
	resends []netsim.Held
	// recycle is the storage of the fetch rounds' messages, reused once done (recycle.go): the
	// outbox sends them. produce is the producers' requests' (clients.go).
	recycle recycler
	produce producePool
}

// schedule sets a timer: on the agenda now, or when the running item's outbox is drained.
func (e *Engine) schedule(it item) {
	if e.out.active {
		e.out.timers = append(e.out.timers, entry{})
		e.agenda.enter(&it, &e.out.timers[len(e.out.timers)-1])
		e.out.effs = append(e.out.effs, effect{kind: effTimer, ev: int32(len(e.out.timers) - 1)})
		return
	}
	e.agenda.push(&it)
}

// drainOutbox carries out the running item's effects in order.
func (e *Engine) drainOutbox() {
	e.out.active = false
	for i := range e.out.effs {
		f := &e.out.effs[i]
		switch f.kind {
		case effSend:
			e.transmit(e.out.sends[f.ev], f.gen, f.up)
		case effTimer:
			e.agenda.pushEntry(&e.out.timers[f.ev])
		case effEvent:
			e.events = append(e.events, e.out.events[f.ev])
		case effResend:
			e.resend(e.out.resends[f.ev])
		}
	}
	// The sends are not cleared: the next item's overwrite them, and until then they keep alive
	// only messages just sent (clearing costs a bulk write barrier per item).
	e.out.sends = e.out.sends[:0]
	e.out.timers = e.out.timers[:0]
	e.out.effs = e.out.effs[:0]
	if len(e.out.resends) > 0 {
		clear(e.out.resends)
		e.out.resends = e.out.resends[:0]
	}
	if len(e.out.events) > 0 {
		clear(e.out.events)
		e.out.events = e.out.events[:0]
	}
}
