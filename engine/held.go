package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// Messages on a cut link. A network partition drops packets, but TCP does not give up: it keeps
// retransmitting what it has not had acknowledged. So a message sent on (or still crossing) a cut
// link is held, and it gets through once the link heals, in order with the rest of its
// connection. The requester still gives up when its request times out (replica.socket.timeout.ms,
// request.timeout.ms): Kafka's NetworkClient then closes the connection, and whatever of that
// request was held is discarded. A peer that crashed meanwhile takes its connection with it.
//
// Simplification: held messages go out one latency after the heal; TCP's retransmission backoff
// (which can add seconds) is not modelled.

// heldMsg is a message waiting for its link, with both ends' incarnations when it was held.
type heldMsg struct {
	m              *Message
	fromGen, toGen uint64
}

// hold keeps a message its link will not pass now, and arms its request's timeout. Only links
// between brokers are ever cut (linkUp), so both ends are brokers.
func (e *Engine) hold(m *Message, toGen uint64) {
	if e.net.held == nil {
		e.net.held = map[linkKey][]heldMsg{}
	}
	key := linkKey{m.From, m.To}
	e.net.held[key] = append(e.net.held[key], heldMsg{m: m, fromGen: e.brokers[m.From].incarnation, toGen: toGen})
	e.emit(Event{Type: EvHeld, Message: m, Reason: "link down",
		Text: fmt.Sprintf("%s #%d from %s to %s held: the link is cut (TCP keeps retransmitting it)", m.Type, m.ID, nodeName(m.From), nodeName(m.To))})
	req := m
	if !isRequest(m.Type) {
		req = e.pending[m.ReplyTo]
	}
	if req == nil {
		return
	}
	e.agenda.push(item{at: max(e.now, req.Sent+e.timeoutFor(req)), kind: itRequestFailed, msg: req, id: 1})
}

// releaseHeld sends on what links that are up again held, link by link in broker order.
func (e *Engine) releaseHeld() {
	keys := make([]linkKey, 0, len(e.net.held))
	for k := range e.net.held {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b linkKey) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	for _, k := range keys {
		if !e.linkUp(k.from, k.to) {
			continue
		}
		held := e.net.held[k]
		delete(e.net.held, k)
		for _, h := range held {
			e.resend(h)
		}
	}
}

// resend puts a held message back on its healed link, unless its request was given up on or its
// sender crashed meanwhile.
func (e *Engine) resend(h heldMsg) {
	m := h.m
	reqID := m.ID
	if !isRequest(m.Type) {
		reqID = m.ReplyTo
	}
	req, pending := e.pending[reqID]
	switch {
	case !pending:
		return // timed out (or answered) meanwhile: the connection it was on is closed
	case e.brokers[m.From].state == brokerDead || e.brokers[m.From].incarnation != h.fromGen:
		// The sender crashed: its connection is gone. A response's requester learns it now.
		if !isRequest(m.Type) {
			e.reset(req)
		}
		return
	}
	at := e.now + e.latency(m.From, m.To)
	key := linkKey{m.From, m.To}
	if last, ok := e.net.lastDeliver[key]; ok && last > at {
		at = last
	}
	e.net.lastDeliver[key] = at
	// A copy, retransmitted now: the trace's send event keeps the message as it first left.
	c := *m
	c.Sent, c.Deliver = e.now, at
	e.emit(Event{Type: EvReleased, Message: &c,
		Text: fmt.Sprintf("%s #%d from %s to %s gets through: the link is back", m.Type, m.ID, nodeName(m.From), nodeName(m.To))})
	e.agenda.push(item{at: at, kind: itDeliver, msg: &c, gen: h.toGen})
}
