package engine

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/netsim"
)

// The engine's side of messages on a cut link (engine/netsim holds them and knows TCP's
// retransmission times): arming the requester's timeout, releasing held messages when a link
// heals, and discarding what was given up on or whose sender crashed.

// hold keeps a message its link will not pass now, and arms its request's timeout. Only links
// between brokers are ever cut (linkUp), so both ends are brokers.
func (e *Engine) hold(m *Message, toGen uint64) {
	e.net.Hold(netsim.Held{M: m, Sent: m.Sent, FromGen: e.brokers[m.From].incarnation, ToGen: toGen})
	e.emit(Event{Type: EvHeld, Message: m, Reason: "link down",
		Text: fmt.Sprintf("%s #%d from %s to %s held: the link is cut (TCP keeps retransmitting it)", m.Type, m.ID, NodeName(m.From), NodeName(m.To))})
	req := m
	if !isRequest(m.Type) {
		req = e.pending.get(m.ReplyTo)
	}
	if req == nil {
		return
	}
	e.scheduleFailure(req, true, max(e.now, req.Sent+e.timeoutFor(req)))
}

// releaseHeld sends on what links that are up again held, link by link in broker order.
func (e *Engine) releaseHeld() {
	for _, k := range e.net.HeldLinks() {
		if !e.linkUp(k.From, k.To) {
			continue
		}
		for _, h := range e.net.TakeHeld(k) {
			if e.out.active {
				e.out.resends = append(e.out.resends, h)
				e.out.effs = append(e.out.effs, effect{kind: effResend, ev: int32(len(e.out.resends) - 1)})
				continue
			}
			e.resend(h)
		}
	}
}

// resend puts a held message back on its healed link, to arrive after TCP's next retransmission,
// unless its request was given up on or its sender crashed meanwhile. Both are checked again when
// it arrives (givenUp).
func (e *Engine) resend(h netsim.Held) {
	m := h.M
	if e.givenUp(m, h) {
		return
	}
	at := netsim.NextRetransmit(h.Sent, e.now)
	c := *m // a copy: the trace's send event keeps the message as it first left
	c.Sent = at
	c.Deliver = e.net.Retransmits(m, at+e.latency(m.From, m.To))
	e.emit(Event{Type: EvReleased, Message: &c,
		Text: fmt.Sprintf("%s #%d from %s to %s gets through: the link is back, and TCP retransmits it at %d ms", m.Type, m.ID, NodeName(m.From), NodeName(m.To), at)})
	e.net.Resent(&c, h)
	e.schedule(deliverMsg{&c, h.ToGen}.due(c.Deliver))
}

// givenUp reports whether a held message must not be delivered: its request timed out (or was
// answered) meanwhile, so its connection is closed, or its sender crashed, taking the connection
// with it (a response's requester then learns it at once).
func (e *Engine) givenUp(m *Message, h netsim.Held) bool {
	reqID := m.ID
	if !isRequest(m.Type) {
		reqID = m.ReplyTo
	}
	req := e.pending.get(reqID)
	switch {
	case req == nil:
		return true
	case e.brokers[m.From].Dead() || e.brokers[m.From].incarnation != h.FromGen:
		if !isRequest(m.Type) {
			e.reset(req)
		}
		return true
	}
	return false
}
