package engine

import "fmt"

// Messages on a cut link. A network partition drops packets, but TCP does not give up: it keeps
// retransmitting what it has not had acknowledged, waiting 200 ms (Linux's minimum retransmission
// timeout on a fast network) and then twice as long each time, up to 120 s. So a message sent on
// (or still crossing) a cut link is held, and once the link heals it gets through with the next
// retransmission, in order with the rest of its connection: after a 10 s cut, a message sent at
// its start arrives at about 12.6 s. The requester still gives up when its request times out
// (replica.socket.timeout.ms, request.timeout.ms): Kafka's NetworkClient then closes the
// connection, and whatever of that request was held is discarded. A peer that crashed meanwhile
// takes its connection with it.
//
// Simplification: the retransmission timeout is the fixed 200 ms doubling series (no RTT
// estimate), counted from the message's first transmission.

// heldMsg is a message waiting for its link: when it was first sent, and both ends' incarnations
// when it was held.
type heldMsg struct {
	m              *Message
	sent           int64
	fromGen, toGen uint64
}

// TCP's retransmission timeout: the first, and the largest it doubles up to (Linux's
// TCP_RTO_MIN and TCP_RTO_MAX).
const (
	rtoMinMs = 200
	rtoMaxMs = 120_000
)

// nextRetransmit is the first retransmission of a segment first sent at sent that happens at or
// after now: sent + 200, then each timeout twice the last, up to 120 s.
func nextRetransmit(sent, now int64) int64 {
	t, rto := sent, int64(rtoMinMs)
	for t < now {
		t += rto
		rto = min(2*rto, rtoMaxMs)
	}
	return t
}

// hold keeps a message its link will not pass now, and arms its request's timeout. Only links
// between brokers are ever cut (linkUp), so both ends are brokers.
func (e *Engine) hold(m *Message, toGen uint64) {
	if e.net.held == nil {
		e.net.held = map[linkKey][]heldMsg{}
	}
	key := linkKey{m.From, m.To}
	e.net.held[key] = append(e.net.held[key], heldMsg{m: m, sent: m.Sent, fromGen: e.brokers[m.From].incarnation, toGen: toGen})
	e.emit(Event{Type: EvHeld, Message: m, Reason: "link down",
		Text: fmt.Sprintf("%s #%d from %s to %s held: the link is cut (TCP keeps retransmitting it)", m.Type, m.ID, NodeName(m.From), NodeName(m.To))})
	req := m
	if !isRequest(m.Type) {
		req = e.pending[m.ReplyTo]
	}
	if req == nil {
		return
	}
	e.schedule(requestFailed{req, true}.due(max(e.now, req.Sent+e.timeoutFor(req))))
}

// releaseHeld sends on what links that are up again held, link by link in broker order.
func (e *Engine) releaseHeld() {
	for _, k := range sortedLinkKeys(e.net.held) {
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

// resend puts a held message back on its healed link, to arrive after TCP's next retransmission,
// unless its request was given up on or its sender crashed meanwhile. Both are checked again when
// it arrives (givenUp).
func (e *Engine) resend(h heldMsg) {
	m := h.m
	if e.givenUp(m, h) {
		return
	}
	at := nextRetransmit(h.sent, e.now)
	c := *m // a copy: the trace's send event keeps the message as it first left
	c.Sent = at
	c.Deliver = at + e.latency(m.From, m.To)
	key := linkKey{m.From, m.To}
	if last, ok := e.net.lastDeliver[key]; ok && last > c.Deliver {
		c.Deliver = last
	}
	e.net.lastDeliver[key] = c.Deliver
	e.emit(Event{Type: EvReleased, Message: &c,
		Text: fmt.Sprintf("%s #%d from %s to %s gets through: the link is back, and TCP retransmits it at %d ms", m.Type, m.ID, NodeName(m.From), NodeName(m.To), at)})
	e.net.resent[&c] = h
	e.schedule(deliverMsg{&c, h.toGen}.due(c.Deliver))
}

// givenUp reports whether a held message must not be delivered: its request timed out (or was
// answered) meanwhile, so its connection is closed, or its sender crashed, taking the connection
// with it (a response's requester then learns it at once).
func (e *Engine) givenUp(m *Message, h heldMsg) bool {
	reqID := m.ID
	if !isRequest(m.Type) {
		reqID = m.ReplyTo
	}
	req, pending := e.pending[reqID]
	switch {
	case !pending:
		return true
	case e.brokers[m.From].state == brokerDead || e.brokers[m.From].incarnation != h.fromGen:
		if !isRequest(m.Type) {
			e.reset(req)
		}
		return true
	}
	return false
}
