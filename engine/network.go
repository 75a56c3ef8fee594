package engine

import (
	"fmt"
	"strconv"

	"github.com/highwater-sim/highwater/engine/netsim"
)

// The network's loop side: sending, delivering to receivers, requests in flight and their
// failures. The links' state, FIFO order and held messages are engine/netsim's.

// linkUp reports whether a message can pass from one node to another right now.
func (e *Engine) linkUp(from, to int32) bool {
	if from == ClientNode || to == ClientNode {
		return true
	}
	if e.brokers[from].isolated || e.brokers[to].isolated {
		return false
	}
	return !e.net.Down(netsim.Link{From: from, To: to})
}

func (e *Engine) latency(from, to int32) int64 {
	lat := e.net.LatencyMs(netsim.Link{From: from, To: to}, e.cfg.NetworkLatencyMs)
	if e.cfg.NetworkJitterMs > 0 {
		lat += e.rng.Int64N(e.cfg.NetworkJitterMs + 1)
	}
	return lat
}

// isRequest reports whether a message expects an answer.
func isRequest(t string) bool {
	switch t {
	case MsgFetch, MsgOffsetsForEpoch, MsgListOffsets, MsgLeaderAndIsr, MsgStopReplica,
		MsgUpdateMetadata, MsgAlterPartition, MsgControlledShutdown, MsgProduce:
		return true
	}
	return false
}

// timeoutFor returns how long a requester waits for an answer before giving up: its
// NetworkClient's request timeout, the broker's request.timeout.ms for a follower's fetcher
// (ReplicaFetcherBlockingSend's NetworkClient: 0.10.2.2 ReplicaFetcherThread l.104, 0.11.0.2
// l.79, 2.1.1 l.83, 3.7.0 BrokerBlockingSender l.93; replica.socket.timeout.ms bounds only
// awaitReady's connect, which the engine does not model), the controller's channel
// (ControllerChannelManager.addNewBroker's NetworkClient, config.requestTimeoutMs in every era:
// 0.10.2.2 l.120, 0.11.0.2 l.138, 2.1.1 l.141, 3.7.0 l.161; its controller.socket.timeout.ms
// bounds only RequestSendThread.brokerReady's awaitReady) and the controlled shutdown's client
// (KafkaServer.controlledShutdown's NetworkClient; controller.socket.timeout.ms is its
// awaitReady's), as for a producer; AlterPartition's channel waits controller.socket.timeout.ms
// (3.7.0 NodeToControllerChannelManagerImpl.buildNetworkClient l.201:
// min(config.controllerSocketTimeoutMs, retryTimeoutMs), and AlterPartitionManager.apply builds
// it with retryTimeoutMs Long.MaxValue; KafkaServer starts it in ZooKeeper mode, l.383).
func (e *Engine) timeoutFor(m *Message) int64 {
	if m.Type == MsgAlterPartition {
		return e.cfg.ControllerSocketTimeoutMs
	}
	return e.cfg.RequestTimeoutMs
}

// send puts a message on the network, emits its event and tracks requests until answered. The
// message has its id and is in flight at once; during an agenda item the network takes it when
// the item's outbox is drained (outbox.go).
func (e *Engine) send(m *Message) {
	e.nextMsg++
	m.ID = e.nextMsg
	m.Sent = e.now
	if isRequest(m.Type) {
		e.pending.put(m)
	}
	if e.out.recycle.lent != nil {
		e.sentFetch(m) // a reused Fetch is registered (recycle.go)
	}
	var gen uint64
	if m.To != ClientNode {
		gen = e.brokers[m.To].incarnation
	}
	up := e.linkUp(m.From, m.To)
	if e.out.active {
		e.out.sends = append(e.out.sends, m)
		e.out.effs = append(e.out.effs, effect{kind: effSend, ev: int32(len(e.out.sends) - 1), gen: gen, up: up})
		return
	}
	e.transmit(m, gen, up)
}

// transmit is the network's part of a send: the delivery time (latency, jitter, the link's FIFO
// order), the send's event, and the delivery on the agenda, or the message held on a cut link.
func (e *Engine) transmit(m *Message, gen uint64, up bool) {
	key := netsim.Link{From: m.From, To: m.To}
	at := e.net.DeliveryAt(key, e.now+e.latency(m.From, m.To))
	m.Deliver = at
	e.noteSent(m)
	if e.tracing() {
		e.emit(Event{Type: m.Type, Message: m}) // its text is made when read (Narrate)
	}
	if !up {
		e.hold(m, gen)
		return
	}
	if m.From != ClientNode && m.To != ClientNode {
		e.net.Delivers(key, at)
		e.timeOutIfLate(m, at)
	}
	if e.out.active {
		e.schedule(deliverMsg{m, gen}.due(at))
		return
	}
	e.agenda.pushDeliver(at, gen, m)
}

// timeOutIfLate fails a broker's request at its timeout when m, the request or its answer,
// arrives after it: a slow link's latency counts toward the request timeout as a cut link's
// wait does (held.go). Kafka's NetworkClient gives up on a request in flight longer than its
// request timeout (NetworkClient.handleTimedOutRequests) and closes the connection, so an answer
// arriving later is dropped: a follower whose round trip exceeds request.timeout.ms never
// gets records. A producer's request has its own timer (produceTimedOut).
func (e *Engine) timeOutIfLate(m *Message, at int64) {
	req := m
	if !isRequest(m.Type) {
		if req = e.pending.get(m.ReplyTo); req == nil {
			return
		}
	} else if !isRequest(req.Type) {
		return
	}
	if req.Produce != nil {
		return // the producer's own timer fails it at its timeout (produceTimedOut)
	}
	if deadline := req.Sent + e.timeoutFor(req); at > deadline {
		e.scheduleFailure(req, true, max(e.now, deadline))
	}
}

// reset fails a pending request whose destination is gone, as a refused or reset connection
// does: the RST crosses the link back to the requester, with that link's latency and behind what
// it already carries (no jitter: no draw), as resetRequestsTo's.
func (e *Engine) reset(req *Message) {
	back := netsim.Link{From: req.To, To: req.From}
	e.scheduleFailure(req, false, e.net.DeliveryAt(back, e.now+e.net.LatencyMs(back, e.cfg.NetworkLatencyMs)))
}

// scheduleFailure fails pending request req at at (timedOut: its timeout, else a reset). While
// it waits, no answered request is reused: it may be req (recycle.go).
func (e *Engine) scheduleFailure(req *Message, timedOut bool, at int64) {
	e.out.recycle.failing++
	e.schedule(requestFailed{req, timedOut}.due(at))
}

// deliver hands an arriving message to its receiver.
func (e *Engine) deliver(m *Message, gen uint64) {
	if m.To == ClientNode {
		req := e.pending.get(m.ReplyTo)
		if req == nil {
			return // the request already failed
		}
		e.pending.remove(m.ReplyTo)
		e.clientReceive(m, req)
		return
	}
	b := e.brokers[m.To]
	h, resent := e.net.TakeResent(m)
	if !e.linkUp(m.From, m.To) {
		e.hold(m, gen)
		return
	}
	if resent && e.givenUp(m, h) {
		return
	}
	if b.Dead() || b.incarnation != gen {
		if isRequest(m.Type) {
			e.emit(Event{Type: EvDropped, Message: m, Reason: "broker down",
				Text: fmt.Sprintf("%s #%d refused: broker %d is down", m.Type, m.ID, b.id)})
			e.reset(m)
		}
		return
	}
	// req is the request a response answers: the requester's in-flight request with the
	// response's correlation id.
	var req *Message
	if !isRequest(m.Type) {
		if req = e.pending.get(m.ReplyTo); req == nil {
			return // the requester gave up, or restarted, meanwhile
		}
		e.pending.remove(m.ReplyTo)
	}
	// A broker-bound message is the broker's (brk.Broker.Handle, KafkaApis.handle); the rest is
	// its controller's (controller.go).
	if b.Handle(m) {
		if m.Type == MsgFetchResponse {
			e.fetchRoundDone(m, req) // the round's storage is the engine's (recycle.go)
		}
		return
	}
	switch m.Type {
	case MsgLeaderAndIsrResponse:
		e.handleLeaderAndIsrResponse(b, m, req)
	case MsgStopReplicaResponse:
		e.handleStopReplicaResponse(b, m, req)
	case MsgUpdateMetadataResponse:
		e.handleUpdateMetadataResponse(b, m, req)
	case MsgAlterPartition:
		e.handleAlterPartition(b, m)
	case MsgControlledShutdown:
		e.handleControlledShutdown(b, m)
	}
}

// requestFailed tells the requester that its request got no answer.
func (e *Engine) requestFailed(req *Message, timedOut bool) {
	e.out.recycle.failing--
	if e.pending.get(req.ID) == nil {
		return // answered meanwhile
	}
	e.pending.remove(req.ID)
	if req.From == ClientNode {
		e.clientNoAnswer(req, timedOut)
		return
	}
	b := e.brokers[req.From]
	if b.Dead() {
		return
	}
	if b.RequestFailed(req) {
		return // the broker's (brk.Broker.RequestFailed)
	}
	if req.Type == MsgLeaderAndIsr || req.Type == MsgStopReplica || req.Type == MsgUpdateMetadata {
		e.controllerRequestFailed(req)
	}
}

// produceTimedOut is the producer's request timeout of Produce id: in flight since it was sent
// request.timeout.ms ago, it fails, and the connection with it. Kafka's producer gives up on its
// own clock (NetworkClient.handleTimedOutRequests: the time since the send past the request's
// requestTimeoutMs, every era), which is never later than the leader's answer to a Produce parked
// that long: the leader's DelayedProduce times out request.timeout.ms (the request's timeoutMs)
// after the request arrived, and its REQUEST_TIMED_OUT answer still has the way back to travel,
// so it comes to a closed connection and is dropped.
func (e *Engine) produceTimedOut(id uint64) {
	req := e.pending.get(id)
	if req == nil {
		return // answered, or failed, meanwhile
	}
	e.pending.remove(id)
	e.clientNoAnswer(req, true)
}

// clientNoAnswer fails a client's request req, no longer in flight: timed out, or its connection
// reset. A produce's timeout closes its connection and fails the producer's other requests in
// flight to that broker with it (producerConnRequests).
func (e *Engine) clientNoAnswer(req *Message, timedOut bool) {
	var others []*Message
	if timedOut && req.Produce != nil {
		others = e.producerConnRequests(req)
	}
	e.clientRequestFailed(req, timedOut)
	for _, m := range others {
		if e.pending.get(m.ID) == m {
			e.pending.remove(m.ID)
			e.clientRequestFailed(m, true)
		}
	}
}

// producerConnRequests lists the producer's other requests in flight to req's broker, oldest first:
// those on the connection a timed-out request closes. Kafka's NetworkClient
// .handleTimedOutRequests (0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0) closes the connection of a node
// with a request past its timeout (selector.close) and processDisconnection fails every request
// in flight on it at that instant (cancelInFlightRequests from 2.1: InFlightRequests.clearAll),
// as disconnected (NETWORK_EXCEPTION in Sender.handleProduceResponse) before 3.5 and timed out
// (REQUEST_TIMED_OUT, `timedOut` true for all of them: processTimeoutDisconnection) in 3.7.0;
// the engine names them as it names the timed-out one (clientRequestFailed with timedOut). An
// acks=0 request is not in flight once written (handleCompletedSends). Order: 2.1.1 and 3.7.0
// answer them oldest first (clearAll's descendingIterator); 0.10.2.2 and 0.11.0.2 newest first
// (the deque itself), where retries is 0 and only the order of the failures' events differs.
// 0.11.0's idempotent producer has connections of its own (producer_conn.go: ordered).
func (e *Engine) producerConnRequests(req *Message) []*Message {
	var out []*Message
	b, ordered := req.To, e.orderedRequest(req)
	for _, id := range e.pending.ids() {
		if m := e.pending.get(id); m.From == ClientNode && m.To == b && m.Produce != nil && m.Produce.Acks != 0 &&
			e.orderedRequest(m) == ordered {
			out = append(out, m)
		}
	}
	return out
}

// forgetRequestsOf drops every pending request a broker sent (it crashed; its connections are gone).
func (e *Engine) forgetRequestsOf(b int32) {
	for _, id := range e.pending.ids() {
		if e.pending.get(id).From == b {
			e.pending.remove(id)
		}
	}
}

// resetRequestsTo fails every pending request addressed to a broker that just crashed. The
// crashed process's sockets close (FIN or RST) on the link back to the requester, behind what
// the broker already sent on it: an answer on its way still arrives first (TCP delivers in
// order), and the failure comes one latency of that link later, without jitter (no draw).
func (e *Engine) resetRequestsTo(b int32) {
	for _, id := range e.pending.ids() {
		if m := e.pending.get(id); m.To == b {
			back := netsim.Link{From: b, To: m.From}
			e.scheduleFailure(m, false, e.net.DeliveryAt(back, e.now+e.net.LatencyMs(back, e.cfg.NetworkLatencyMs)))
		}
	}
}

// NodeName names a node as the narration does: "broker 2", "client".
func NodeName(n int32) string {
	if n == ClientNode {
		return "client"
	}
	return "broker " + strconv.Itoa(int(n))
}
