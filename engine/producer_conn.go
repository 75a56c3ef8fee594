package engine

import "slices"

// The producer's connections to the brokers: how many of its requests may be in flight to one
// broker, and what waits for a slot. Kafka has one mechanism in every era (0.10.2.2 to 3.7.0):
// Sender.sendProducerData asks RecordAccumulator.ready for the brokers with a sendable deque
// head, drops those NetworkClient.ready refuses (isReady → InFlightRequests.canSendMore:
// `queue.size() < maxInFlightRequestsPerConnection`), and RecordAccumulator.drain takes the first
// batch of each partition of the others, one request per broker. A batch whose broker is not
// ready stays at its deque's head, and is drained at the Sender's next loop after an answer
// freed a slot: the answer wakes the Sender's poll (ClusterConnectionStates.connectionDelay is
// Long.MAX_VALUE for a connected node: "other events (connection or data acked) will cause a
// wakeup once data can be sent"), and Sender.run calls sendProducerData again at once. Until then
// it may expire (RecordAccumulator.expiredBatches/abortExpiredBatches), unless its partition is
// muted.
//
// max.in.flight.requests.per.connection is 5 (ProducerConfig's default in every era; not a
// setting here), and 1 for 0.11.0's idempotent producer (0.11.0.2
// KafkaProducer.configureInflightRequests sets it, and refuses any other value with idempotence;
// 1.0 allows up to 5, KAFKA-5494). With 1, the Sender also guarantees message order
// (`maxInflightRequests == 1` → guaranteeMessageOrder): it mutes every partition it drained until
// its batch's answer (Sender.completeBatch → unmutePartition), and a muted partition's deque is
// neither drained (ready, drain: `!muted.contains(tp)`) nor expired (0.11.0.2
// expiredBatches: "We only check if the batch should be expired if the partition does not have a
// batch in flight").
//
// The engine's producers: a produce step's acks is its producer's, and 0.11.0's idempotent one
// has acks=all (configureAcks refuses another value with idempotence); its requests are counted
// apart (ordered), as on connections of their own. The others' requests share one count per
// broker (the steps' producers are not told apart there).

// producerConn is the producer's connection to a broker: its requests in flight, oldest first,
// and the partitions whose deque heads wait for one of them to be answered, in the order they
// began to wait.
type producerConn struct {
	requests []connRequest
	stalled  []int32
}

// connRequest is one produce request in flight: the engine sends each batch as a Produce of its
// own, and counts the batches sent to a broker at one instant, one per partition, as one request
// (RecordAccumulator.drain: one request per broker per drain, with the first batch of each
// partition). It is answered once each batch's answer came (a Produce's answer waits for all of
// its partitions: DelayedProduce). ordered marks 0.11.0's idempotent producer's.
type connRequest struct {
	at      int64
	ops     []int64 // its batches not yet answered
	ordered bool
}

// maxInFlight is max.in.flight.requests.per.connection, the producer's default, 5 in every era
// (ProducerConfig, 0.10.2.2 to 3.7.0; not a setting here).
const maxInFlight = 5

// ordered reports whether op's producer guarantees message order: Sender's
// guaranteeMessageOrder, max.in.flight.requests.per.connection 1, which is 0.11.0's idempotent
// producer (era.idempotentOneInFlight).
func (e *Engine) ordered(op *ProduceOp) bool {
	return e.era.idempotentOneInFlight && e.idempotent(op)
}

// orderedRequest reports whether produce request req is 0.11.0's idempotent producer's.
func (e *Engine) orderedRequest(req *Message) bool {
	return e.era.idempotentOneInFlight && req.Produce.Idempotent
}

// inFlightLimit is max.in.flight.requests.per.connection of op's producer.
func (e *Engine) inFlightLimit(op *ProduceOp) int {
	if e.ordered(op) {
		return 1
	}
	return maxInFlight
}

// connOf is the producer's connection to broker b.
func (e *Engine) connOf(b int32) *producerConn {
	if e.conns == nil {
		e.conns = make([]producerConn, len(e.brokers))
	}
	return &e.conns[b]
}

// connFull reports whether op's producer cannot send op's batch to broker b now: its limit of
// requests is in flight to b (NetworkClient.isReady → InFlightRequests.canSendMore), and none of
// those sent now, if any, can take a batch of op's partition.
func (e *Engine) connFull(b int32, op *ProduceOp) bool {
	if e.conns == nil {
		return false
	}
	c := &e.conns[b]
	ordered, n := e.ordered(op), 0
	for i := range c.requests {
		if c.requests[i].ordered == ordered {
			n++
		}
	}
	return n >= e.inFlightLimit(op) && e.joinable(c, op) < 0
}

// joinable is the index of c's first request of op's producer sent now without a batch of op's
// partition, -1 if none: the batches drained for a broker at one instant go in requests of one
// batch per partition (RecordAccumulator.drain), the first with room.
func (e *Engine) joinable(c *producerConn, op *ProduceOp) int {
	first := len(c.requests) // the requests sent now are the last ones (in send order)
	for first > 0 && c.requests[first-1].at == e.now {
		first--
	}
	ordered := e.ordered(op)
	for j := first; j < len(c.requests); j++ {
		if c.requests[j].ordered == ordered && !e.requestHas(&c.requests[j], op.PID()) {
			return j
		}
	}
	return -1
}

// requestHas reports whether request r has a batch of partition pid not yet answered.
func (e *Engine) requestHas(r *connRequest, pid int32) bool {
	for _, id := range r.ops {
		if e.clients.Produce(id).PID() == pid {
			return true
		}
	}
	return false
}

// connSent counts batch op, just sent to broker b, in a request in flight: the one sent to b now
// if it has no batch of op's partition, else a new one. An acks=0 request is not counted: it is
// done once written (NetworkClient.handleCompletedSends).
func (e *Engine) connSent(b int32, op *ProduceOp) {
	c := e.connOf(b)
	if i := e.joinable(c, op); i >= 0 {
		c.requests[i].ops = append(c.requests[i].ops, op.ID)
		return
	}
	c.requests = append(c.requests, connRequest{at: e.now, ops: []int64{op.ID}, ordered: e.ordered(op)})
}

// stall records that partition pid's deque head waits for an answer from broker b.
func (e *Engine) stall(b, pid int32) {
	c := e.connOf(b)
	if !slices.Contains(c.stalled, pid) {
		c.stalled = append(c.stalled, pid)
	}
}

// connAnswered is called when produce req was answered or failed: once its request has every
// answer, a slot is free and the partitions it held muted are unmuted, and the partitions whose
// deques waited drain at once, in the order they began to wait (the Sender's next
// sendProducerData, at the same instant).
func (e *Engine) connAnswered(req *Message) {
	if e.conns == nil || req.Produce.Acks == 0 {
		return
	}
	c := &e.conns[req.To]
	for i := range c.requests {
		r := &c.requests[i]
		j := 0
		for j < len(r.ops) && r.ops[j] != req.Produce.Op {
			j++
		}
		if j == len(r.ops) {
			continue
		}
		r.ops = append(r.ops[:j], r.ops[j+1:]...)
		if len(r.ops) > 0 {
			return
		}
		c.requests = append(c.requests[:i], c.requests[i+1:]...)
		stalled := c.stalled
		c.stalled = nil
		for _, pid := range stalled {
			e.drainQueue(pid)
		}
		return
	}
}

// muted reports whether op's partition is muted: its producer guarantees message order and has a
// batch of it in flight (Sender.sendProducerData → RecordAccumulator.mutePartition, until
// Sender.completeBatch → unmutePartition).
func (e *Engine) muted(op *ProduceOp) bool {
	return e.ordered(op) && e.clients.BatchInFlight(op.PID())
}

// waitUnmuted makes op's partition, muted, drain once the request carrying its batch in flight
// is answered (connAnswered): the engine answers each batch of a request on its own, and Kafka's
// one response unmutes them all at once.
func (e *Engine) waitUnmuted(op *ProduceOp) {
	for b := range e.conns {
		for i := range e.conns[b].requests {
			if r := &e.conns[b].requests[i]; r.ordered && e.requestHas(r, op.PID()) {
				e.stall(int32(b), op.PID())
				return
			}
		}
	}
	// Not counted in a request (none should be): look again after retry.backoff.ms rather than
	// never.
	e.lookAt(op, e.now+e.retryBackoff())
}

// drainsBeforeExpiry reports whether op, at or past its deadline, is sent rather than expired
// now. Before 2.1, Sender.sendProducerData drains the sendable batches (RecordAccumulator.drain)
// before it expires the rest (abortExpiredBatches, 0.10.2.2; expiredBatches, 0.11.0.2), and looks
// only at the accumulator's: a batch sendable now leaves. From 2.1 a batch just drained past
// its delivery timeout is failed all the same (getExpiredInflightBatches after
// addToInflightBatches, 2.1.1 and 3.7.0).
func (e *Engine) drainsBeforeExpiry(op *ProduceOp) bool {
	if e.era.producerRetries || e.now < op.BackoffUntil() || e.muted(op) {
		return false
	}
	leader := e.metadata.leader(op.PID())
	return leader >= 0 && e.leaderReachable(op.PID(), leader) && !e.connFull(leader, op)
}
