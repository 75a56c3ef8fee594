package engine

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/clients"
	"github.com/highwater-sim/highwater/engine/plural"
)

// Producers and consumers. They live outside the brokers' network (ClientNode) and find the
// leader from metadata, which here is the controller's state at once (simplification: no
// metadata staleness), sending only to a leader that is up and has had its LeaderAndIsr
// (leaderReachable). The producer is the era's client (era.producerRetries): from 2.1 it
// retries every error (all are retriable: the metadata errors, KAFKA_STORAGE_ERROR,
// NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT, connection failures)
// after its backoff until delivery.timeout.ms, as Kafka's Sender.canRetry; before 2.1 its retries
// is 0, so the first error is final, and a batch waiting for a leader expires after
// request.timeout.ms. A retried batch keeps its record ids. Without enable.idempotence (the eras
// before 3.7 by default) a retry of a batch the leader already has is appended twice; with it the
// leader finds the batch and answers with its offsets (broker.HandleProduce), and checks each
// batch's sequence (broker.checkSequence, sequenceRefused); the idempotent producer's batches of a
// partition queue behind a retry (BlockBehindRetry). Every producer's waiting batches queue in a
// deque per partition, as Kafka's RecordAccumulator (drainQueue), and at most
// max.in.flight.requests.per.connection requests are in flight to a broker: 5, and 1 for 0.11.0's
// idempotent producer, which also mutes a partition with a batch in flight (producer_conn.go).

// The clients' state is engine/clients'; the engine's loop sends their requests, hands them
// their answers and schedules their retries.
type (
	ProduceOp = clients.ProduceOp
	ConsumeOp = clients.ConsumeOp
)

// client is the clients' record of p.
func (e *Engine) client(p *partition) *clients.Partition { return e.clients.Partition(p.pid) }

// Client outcomes besides Kafka's error names: the results of produce and consume steps.
const (
	ResultAcked = clients.ResultAcked // a produce with acks 1 or all was acknowledged
	ResultSent  = clients.ResultSent  // a produce with acks=0 left (no answer comes)
	ResultOK    = clients.ResultOK    // a consume read
)

func (e *Engine) produce(p *partition, count int64, acks Acks) { e.produceOn(p.pid, count, acks) }

// produceOn is produce on partition pid. The step and its request name the partition from its
// topic's entry, not from the partition: a load's produce steps pick partitions at random, and
// reading one's names was a last-level cache miss per step (issue 12).
func (e *Engine) produceOn(pid int32, count int64, acks Acks) {
	tp := e.tpOf(pid)
	op := e.clients.NewProduce(tp.Topic, tp.Partition, pid, acks, count, e.now)
	e.sendProduce(op)
}

// sendProduce sends op's batch, a new one or one handed back after it was held, or queues it:
// behind its partition's waiting batches (RecordAccumulator.append adds a batch at its deque's
// tail, and drain takes only the head), or, an idempotent batch that has its sequence, before them
// (RecordAccumulator.reenqueue: insertInSequenceOrder puts a batch with a sequence ahead of
// those without).
func (e *Engine) sendProduce(op *ProduceOp) {
	if e.clients.QueueLen(op.PID()) > 0 {
		if _, _, ok := op.Header(); ok {
			e.clients.PushFront(op)
			e.drainQueue(op.PID())
			return
		}
		e.clients.PushBack(op)
		return
	}
	e.trySend(op)
}

// trySend sends op's batch now, or holds it: behind a retry (the idempotent producer's rules),
// or at the head of its partition's deque while the partition is muted, while its leader's
// connection has its limit of requests in flight (producer_conn.go), or while the metadata names
// no leader it can send to (RecordAccumulator.ready: the partition's topic goes to
// unknownLeaderTopics, and nothing of its deque is drained).
func (e *Engine) trySend(op *ProduceOp) {
	if e.idempotent(op) && (e.clients.BlockBehindRetry(op) || e.clients.HoldRetry(op)) {
		return // sent once the batch to retry before it is sent, or done (releaseBlocked)
	}
	if e.muted(op) {
		// 0.11.0's idempotent producer has a batch of the partition in flight: ready and drain
		// skip the partition until its answer (connAnswered), and expiredBatches too.
		e.clients.PushFront(op)
		e.waitUnmuted(op)
		return
	}
	leader := e.metadata.leader(op.PID())
	if leader >= 0 && e.leaderReachable(op.PID(), leader) && e.connFull(leader, op) {
		// The producer's limit of requests is in flight to leader: NetworkClient.ready is false
		// (InFlightRequests.canSendMore), so the Sender drains nothing for it and the batch stays
		// first in its deque until an answer frees a slot (connAnswered), or the metadata names
		// another leader (looked at every retry.backoff.ms, as for a missing leader), or it
		// expires (its deadline).
		e.clients.PushFront(op)
		e.lookAt(op, min(e.now+e.retryBackoff(), e.produceDeadline(op)))
		e.stall(leader, op.PID())
		return
	}
	op.Attempts++
	if leader < 0 || !e.leaderReachable(op.PID(), leader) {
		e.retryProduce(op, ErrLeaderNotAvailable)
		return
	}
	e.sendProduceTo(op, leader)
}

// sendProduceTo sends op's batch to broker leader.
func (e *Engine) sendProduceTo(op *ProduceOp, leader int32) {
	op.SetSentEpoch(e.metadata.leaderEpoch(op.PID()))
	m := e.produceMessage()
	body := m.Produce
	// Idempotence needs acks=all: 3.7.0's ProducerConfig.postProcessAndValidateIdempotenceConfigs
	// turns the default enable.idempotence off for a producer with acks 0 or 1 ("Idempotence will
	// be disabled because acks is set to 1, not set to 'all'"); 0.11.0.2 and 2.1.1 refuse the
	// combination (KafkaProducer.configureAcks), so an idempotent producer there has acks=all.
	idem := e.idempotent(op)
	if idem {
		e.clients.AssignSequence(op) // at its first send: RecordAccumulator.drain
		op.SetInFlight(true)
	}
	*body = ProduceRequest{Op: op.ID, TP: TP{Topic: op.Topic, Partition: op.Partition}, Acks: op.Acks, RecordIDs: op.RecordIDs,
		TimeoutMs: e.cfg.RequestTimeoutMs, Idempotent: idem, Retried: idem && op.Attempts > 1}
	*m = Message{Type: MsgProduce, From: ClientNode, To: leader, Produce: body}
	e.send(m)
	e.sentProduce(m)
	if op.Acks != 0 {
		// The producer's NetworkClient gives up on the request request.timeout.ms after sending
		// it, answered or not by then (produceTimedOut).
		e.schedule(produceTimeout{m.ID}.due(m.Sent + e.cfg.RequestTimeoutMs))
		e.connSent(leader, op)
	}
	if idem {
		e.releaseBlocked(op.PID())
	}
	if op.Acks == 0 {
		// acks=0: fire and forget; no answer is awaited.
		e.pending.remove(m.ID)
		e.finishProduce(op, ResultSent, -1)
	}
}

// idempotent reports whether op is the idempotent producer's batch: enable.idempotence, acks=all
// (see sendProduceTo).
func (e *Engine) idempotent(op *ProduceOp) bool { return e.cfg.EnableIdempotence && op.Acks == -1 }

// releaseBlocked sends partition pid's new batches held behind a batch to retry, once none waits
// (BlockBehindRetry): now, in their order, each through the agenda.
func (e *Engine) releaseBlocked(pid int32) {
	for _, id := range e.clients.Unblock(pid) {
		e.release(id)
	}
}

// release hands back op id, held behind another batch, to be sent now (producerRetry).
func (e *Engine) release(id int64) { e.schedule(producerRetry{id}.due(e.now)) }

// leaderReachable reports whether a producer would send partition pid's batch to b, its leader in
// the metadata. Not while b's process is gone: its connection is refused (NetworkClient.ready is
// false), so Sender.sendProducerData drains nothing for it and the batch stays in the
// accumulator until the metadata names a leader it can reach, or it expires (0.10.2.2 to 3.7.0).
// Nor before b has had the LeaderAndIsr that makes it leader: a client learns leaders from the
// brokers' metadata caches, which the controller's UpdateMetadata fills after that LeaderAndIsr
// (the engine's metadata is the controller's at once). An acks=0 batch, which gets no answer,
// is thus not lost to a dead or not-yet leader.
func (e *Engine) leaderReachable(pid, b int32) bool {
	br := e.brokers[b]
	if br.Dead() {
		return false
	}
	r := br.Replica(pid)
	return r != nil && r.IsLeader()
}

// retryProduce schedules another attempt after the backoff, or, if that would come at or after
// the batch's deadline (produceDeadline), its expiry then: the accumulator expires a batch once
// delivery.timeout.ms has passed since it was created (ProducerBatch.hasReachedDeliveryTimeout,
// RecordAccumulator.expiredBatches, 2.1.1 to 3.7.0), not at the last retry before it. (An answer
// at or after the delivery timeout finds the batch expired: expiredInFlight.)
func (e *Engine) retryProduce(op *ProduceOp, why KafkaError) {
	at := e.now + e.retryBackoff()
	if why != ErrLeaderNotAvailable {
		at = e.now + e.produceBackoff(op.FailedAt(e.now))
	}
	if e.era.retryAtOnceOnNewLeader && why != ErrLeaderNotAvailable && op.SentEpoch() >= 0 &&
		e.metadata.leader(op.PID()) >= 0 && e.metadata.leaderEpoch(op.PID()) != op.SentEpoch() {
		// 3.7.0 (KIP-951): the batch was sent under an older leader epoch than the metadata's
		// now (a NOT_LEADER_OR_FOLLOWER answer names the new leader): RecordAccumulator
		// .shouldBackoff skips the backoff, hasLeaderChangedForTheOngoingRetry.
		at = e.now
	}
	if why != ErrLeaderNotAvailable && !e.producerRetries(op) {
		// The era's client before 2.1 has retries 0: Sender.canRetry (`batch.attempts <
		// this.retries`, 0.10.2.2 and 0.11.0.2) is false, and the batch fails with the error.
		e.finishProduce(op, e.clientErrorName(why), -1)
		return
	}
	backoff := at
	if deadline := e.produceDeadline(op); at >= deadline {
		at = max(e.now, deadline)
	}
	if why == ErrLeaderNotAvailable || !e.idempotent(op) {
		// The batch waits at the head of its partition's deque: RecordAccumulator.reenqueue puts a
		// failed batch first (addFirst without a transaction manager, 0.10.2.2 to 3.7.0), and one
		// waiting for a leader stays first. The batches behind it wait for it (drainQueue).
		if why != ErrLeaderNotAvailable {
			op.SetBackoffUntil(backoff)
		}
		if !op.Queued() {
			e.clients.PushFront(op)
		}
		e.lookAt(op, at)
		return
	}
	e.schedule(producerRetry{op.ID}.due(at))
}

// lookAt makes sure queued op is looked at by at (producerRetry with the op's id negated): it
// keeps one valid wake-up, the earliest asked for; any other is stale, as is any once the op
// left its deque.
func (e *Engine) lookAt(op *ProduceOp, at int64) {
	if t, ok := op.Look(); ok && t >= e.now && t <= at {
		return
	}
	op.SetLook(at)
	e.schedule(producerRetry{-op.ID}.due(at))
}

// drainQueue sends partition pid's waiting batches from the head of its deque while it can, as
// the Sender's next runs would (Sender.sendProducerData → RecordAccumulator.drain, one batch of a
// partition per request, the next at the next drain; the engine sends them at once, each its own
// request, in deque order). An expired head is failed (RecordAccumulator.expiredBatches /
// abortExpiredBatches expire a deque's batches from the head and stop at the first that has not
// expired, 0.10.2.2 to 3.7.0), unless it can leave now before 2.1 (drainsBeforeExpiry). A muted
// partition waits for its batch in flight (0.11.0's idempotent producer: ready, drain and
// expiredBatches skip it). A head in its retry backoff (`first.attempts() > 0 &&
// first.waitedTimeMs(now) < retryBackoffMs`: drain skips the partition), with no leader to send
// to, or whose leader's connection is full, keeps the rest waiting; it is looked at again when
// its backoff ends, after retry.backoff.ms (the metadata refresh), or when an answer frees a
// slot.
func (e *Engine) drainQueue(pid int32) {
	for {
		head := e.clients.QueueHead(pid)
		if head == nil {
			return
		}
		if e.muted(head) {
			e.waitUnmuted(head)
			return
		}
		deadline := e.produceDeadline(head)
		if e.now >= deadline && !e.drainsBeforeExpiry(head) {
			e.clients.PopFront(pid)
			e.finishProduce(head, ErrDeliveryTimeout.String(), -1)
			continue
		}
		if e.now < head.BackoffUntil() {
			e.lookAt(head, min(head.BackoffUntil(), deadline))
			return
		}
		e.clients.PopFront(pid)
		e.trySend(head)
		if head.Queued() {
			return // back at the head: no leader to send to, or no slot
		}
	}
}

// produceBackoff is the producer's backoff after a batch's failed-th failed attempt:
// retry.backoff.ms, and in 3.7 that doubled per earlier failure up to retry.backoff.max.ms
// (ExponentialBackoff.backoff(attempts - 1), 3.7.0, without its random ±20%). With the maximum
// not above retry.backoff.ms there is no growth, and the static backoff is the maximum:
// 3.7.0's ExponentialBackoff takes `initialInterval = maxInterval < initialInterval ?
// maxInterval : initialInterval` (CommonClientConfigs.warnDisablingExponentialBackoff: "A static
// backoff with value retry.backoff.max.ms will be applied"). A batch waiting for a leader is not
// backing off: it looks again every retry.backoff.ms (as the engine's metadata is at once).
func (e *Engine) produceBackoff(failed int) int64 {
	b, most := e.cfg.RetryBackoffMs, e.cfg.RetryBackoffMaxMs
	if e.era.exponentialRetryBackoff {
		b = min(b, most)
		for i := 1; i < failed && b < most; i++ {
			b = min(2*b, most)
		}
	}
	return max(1, b)
}

// expiredInFlight expires op, whose answer (or failure) comes now, if its delivery timeout has
// passed: from 2.1 the Sender fails an in-flight batch at its delivery timeout without waiting for
// the answer (Sender.sendProducerData → getExpiredInflightBatches → failBatch with a
// TimeoutException, before client.poll hands it answers; 2.1.1 and 3.7.0), so an answer that
// comes at or after it is not the produce's outcome: an acknowledgement then is not one. The
// engine records the expiry when the answer comes.
//
// Before 2.1 nothing expires a batch in flight: 0.10.2.2's and 0.11.0.2's
// RecordAccumulator.abortExpiredBatches/expiredBatches look only at the accumulator's batches, and
// not at a muted partition's (max.in.flight.requests.per.connection 1, the idempotent producer's),
// so 0.11.0's idempotent producer takes the answer whenever it comes (or retries at the request's
// timeout).
func (e *Engine) expiredInFlight(op *ProduceOp) bool {
	if !e.era.producerRetries || e.now < e.produceDeadline(op) {
		return false
	}
	e.finishProduce(op, ErrDeliveryTimeout.String(), -1)
	return true
}

// producerRetries reports whether op's producer retries a failed batch: the era's client from
// 2.1 (era.producerRetries), and an idempotent one in 0.11.0 too, whose retries
// KafkaProducer.configureRetries makes Integer.MAX_VALUE when not set (0.11.0.2: "Overriding the
// default retries config to the recommended value ... since the idempotent producer is
// enabled"); 0.11.0's client has no delivery.timeout.ms: its batch expires as produceDeadline
// says. An acks 0 or 1 step is not the idempotent producer's (0.11.0.2 configureAcks refuses
// acks other than all with idempotence): its producer has retries 0 before 2.1.
func (e *Engine) producerRetries(op *ProduceOp) bool {
	return e.era.producerRetries || e.idempotent(op)
}

// produceDeadline is when op's batch expires, if it is waiting in the accumulator then:
// delivery.timeout.ms after its creation (ProducerBatch.hasReachedDeliveryTimeout,
// `deliveryTimeoutMs <= now - createdMs`, 2.1.1 to 3.7.0). The era's client before 2.1 has no
// delivery timeout: its accumulator expires a batch once more than request.timeout.ms has passed
// since its creation, or, for a batch in retry (one that failed and was re-enqueued), since its
// last failed attempt plus retry.backoff.ms (0.10.2.2 RecordBatch.maybeExpire, 0.11.0.2
// ProducerBatch.maybeExpire: `!inRetry() && requestTimeoutMs < createdTimeMs(now) - lingerMs`,
// `inRetry() && requestTimeoutMs < waitedTimeMs(now) - retryBackoffMs`, waitedTimeMs counted from
// lastAttemptMs, which reenqueued sets to the failure's time; linger.ms 0). So a batch waiting
// for a leader gives up after request.timeout.ms + 1, and one that failed, only the idempotent
// producer's in 0.11.0 (retries 0 otherwise), request.timeout.ms + 1 after its backoff ended,
// however old it is. The engine keeps a lower delivery.timeout.ms if one is set (measured from the
// creation).
func (e *Engine) produceDeadline(op *ProduceOp) int64 {
	if e.era.producerRetries {
		return op.Sent + e.cfg.DeliveryTimeoutMs
	}
	expiry := op.Sent + e.cfg.RequestTimeoutMs + 1
	if op.InRetry() {
		expiry = op.LastFailed() + e.cfg.RetryBackoffMs + e.cfg.RequestTimeoutMs + 1
	}
	return min(op.Sent+e.cfg.DeliveryTimeoutMs, expiry)
}

// producerRetry sends a batch again, or expires it at its delivery timeout; for -id, it looks at
// batch id in its deque (queueLook).
func (e *Engine) producerRetry(id int64) {
	if id < 0 {
		e.queueLook(e.clients.Produce(-id))
		return
	}
	op := e.clients.Produce(id)
	if op.Done || op.Queued() {
		return
	}
	// A batch handed back after it was held behind a retry was not looked at for expiry
	// meanwhile in 0.11.0: expiredBatches skips a muted partition and stops at a deque's first
	// batch that has not expired; the Sender drains it if it can before it expires the rest
	// (drainsBeforeExpiry). A muted partition's batch does not expire (0.11.0.2 expiredBatches).
	if e.now >= e.produceDeadline(op) && !e.drainsBeforeExpiry(op) && !e.muted(op) {
		e.finishProduce(op, ErrDeliveryTimeout.String(), -1)
		return
	}
	e.sendProduce(op)
}

// queueLook is a wake-up of op in its partition's deque (lookAt): only the valid one counts, and
// only the head is drained (the others wait for it).
func (e *Engine) queueLook(op *ProduceOp) {
	if t, ok := op.Look(); op.Done || !op.Queued() || !ok || t != e.now {
		return
	}
	op.SetLook(-1)
	if e.clients.QueueHead(op.PID()) == op {
		e.drainQueue(op.PID())
	}
}

func (e *Engine) finishProduce(op *ProduceOp, result string, base int64) {
	op.Done = true
	op.Result = result
	op.BaseOffset = base
	if e.clients.SequenceDone(op, result == ResultAcked, result == ErrDeliveryTimeout.String()) {
		// The partition's sequences have a gap no batch in flight can fill (a batch failed after it
		// had its sequence, or expired and its successors were not acknowledged): they restart
		// under a new epoch (3.7.0 TransactionManager.handleFailedBatch →
		// requestEpochBumpForPartition, maybeResolveSequences; 0.11.0.2 and 2.1.1 reset the
		// producer id).
		e.clients.BumpEpoch(op.PID())
	}
	for _, id := range e.clients.UnholdRetries(op.PID()) {
		e.release(id)
	}
	e.releaseBlocked(op.PID())
	if !e.tracing() {
		return
	}
	p := e.partitions[op.PID()]
	n := plural.Of(len(op.RecordIDs), "record")
	text := fmt.Sprintf("producer: %s to %s (acks=%s): %s", n, p.name(), acksName(op.Acks), result)
	if result == ResultAcked {
		text = fmt.Sprintf("producer: %s to %s acknowledged at %s (acks=%s)", n, p.name(), string(plural.AppendOffsets(nil, base, int64(len(op.RecordIDs)))), acksName(op.Acks))
	}
	e.emit(Event{Type: EvProduceResult, Topic: p.topic, Partition: Some(p.index), Name: result, Text: text})
}

func acksName(a Acks) string {
	if a == -1 {
		return "all"
	}
	return fmt.Sprint(int8(a))
}

func (e *Engine) clientReceive(m, req *Message) {
	switch {
	case m.ProduceResponse != nil:
		e.produceAnswered(m.ProduceResponse)
		e.connAnswered(req)
		e.produceDone(m, req)
	case m.FetchResponse != nil:
		e.consumeAnswered(m, req)
	}
}

func (e *Engine) produceAnswered(resp *ProduceResponse) {
	op := e.clients.Produce(resp.Op)
	op.SetInFlight(false)
	if op.Done || e.expiredInFlight(op) {
		return
	}
	switch resp.Error {
	case ErrNone:
		e.clients.Acked(op, resp.BaseOffset)
		e.finishProduce(op, ResultAcked, resp.BaseOffset)
		if op.Acks == -1 {
			e.noteAckedAll(op.PID(), resp.BaseOffset)
		}
	case ErrNotLeaderOrFollower, ErrKafkaStorage, ErrUnknownTopicOrPartition,
		ErrNotEnoughReplicas, ErrNotEnoughReplicasAfterAppend, ErrRequestTimedOut:
		// Every error a leader answers a produce with is a RetriableException (0.10.2.2 to 3.7.0;
		// UnknownTopicOrPartitionException is an InvalidMetadataException too), which the
		// client retries from 2.1 until delivery.timeout.ms (Sender.completeBatch → canRetry →
		// reenqueueBatch); with enable.idempotence the leader finds a retry it already appended.
		// Before 2.1 its retries is 0: retryProduce reports the error.
		e.retryProduce(op, resp.Error)
	case ErrOutOfOrderSequenceNumber, ErrUnknownProducerID:
		e.sequenceRefused(op, resp.Error)
	default:
		e.finishProduce(op, e.clientErrorName(resp.Error), -1)
	}
}

// sequenceRefused is the idempotent producer's answer to a leader that refused op's sequence
// (checkSequence). 3.7.0 (KIP-360) retries every OUT_OF_ORDER_SEQUENCE_NUMBER
// (TransactionManager.canRetry): a batch that is the next after the last acknowledged one, and
// whose sequence was not reset, shows a real gap in the leader's log (it lost acknowledged
// batches), so the producer bumps its epoch and restarts the partition's sequences at 0
// (requestEpochBumpForPartition, bumpIdempotentEpochAndResetIdIfNeeded at the Sender's next
// runOnce), and the retry, sequence 0 of a new epoch, is accepted; a batch that is not the next
// is retried as it is. 2.1.1's canRetry retries only the latter (and an UNKNOWN_PRODUCER_ID while
// nothing was acknowledged, its sequences started again at 0); otherwise the batch fails with the
// error and the producer id is reset (Sender.failBatch → resetProducerId: an
// OutOfOrderSequenceException, which UnknownProducerIdException extends). 0.11.0.2 retries none.
func (e *Engine) sequenceRefused(op *ProduceOp, err KafkaError) {
	next := e.clients.IsNextSequence(op) && !op.SequenceReset()
	switch {
	case e.era.idempotentEpochBump:
		// canRetry: `!hasUnresolvedSequence && (sequenceHasBeenReset || !isNextSequence)` retries
		// as it is; otherwise the epoch is bumped when there is no unresolved sequence or the
		// batch is the one after it (isNextSequenceForUnresolvedPartition), and it retries.
		afterUnresolved, unresolved := e.clients.UnresolvedNext(op)
		if err == ErrUnknownProducerID || !unresolved && next || afterUnresolved {
			e.clients.BumpEpoch(op.PID())
		}
		e.retryProduce(op, err)
	case e.era.sequenceRetries && err == ErrOutOfOrderSequenceNumber && !next,
		e.era.sequenceRetries && err == ErrUnknownProducerID && (op.SequenceReset() || !e.clients.AckedAnySequence(op)):
		if err == ErrUnknownProducerID && !op.SequenceReset() {
			e.clients.BumpEpoch(op.PID())
		}
		e.retryProduce(op, err)
	default:
		e.clients.SequenceDone(op, false, false)
		e.clients.BumpEpoch(op.PID())
		e.finishProduce(op, e.clientErrorName(err), -1)
	}
}

func (e *Engine) consume(p *partition, count int64) {
	op := e.clients.NewConsume(p.topic, p.index, p.pid)
	leader := e.metadata.leader(p.pid)
	if leader < 0 {
		e.finishConsume(op, ErrLeaderNotAvailable.String())
		return
	}
	// Sessionless (session 0, epoch -1: FetchMetadata's FINAL): the engine's consumer reads one
	// partition per Fetch and keeps no session. Its Fetch carries the consumer's fetch.max.wait.ms
	// and fetch.min.bytes (Fetcher.sendFetches, 0.10.2.2 to 3.7.0): with nothing new below the
	// high watermark it waits in the leader's fetch purgatory (DelayedFetch) until a record
	// commits or the max wait passes, and the step is answered then.
	// From 2.3 (era.consumerLeaderEpoch) it carries the leader epoch of the consumer's metadata,
	// here the controller's.
	epoch := int32(-1)
	if e.era.consumerLeaderEpoch {
		epoch = e.metadata.leaderEpoch(p.pid)
	}
	e.send(&Message{Type: MsgFetch, From: ClientNode, To: leader, Fetch: &FetchRequest{ReplicaID: ClientNode,
		BrokerEpoch: -1, FetcherID: int32(op.ID), SessionEpoch: FinalEpoch, MaxWaitMs: e.cfg.FetchMaxWaitMs, MinBytes: e.cfg.FetchMinBytes,
		Partitions: []FetchPartition{{TP: p.tp(), FetchOffset: op.Offset,
			LogStartOffset: -1, CurrentLeaderEpoch: epoch, LastFetchedEpoch: -1, MaxRecords: count}}}})
}

func (e *Engine) consumeAnswered(m, req *Message) {
	op := e.clients.Consume(int64(req.Fetch.FetcherID))
	d := m.FetchResponse.Partitions[0]
	if d.Error != ErrNone {
		e.finishConsume(op, e.clientErrorName(d.Error))
		return
	}
	e.clients.Consumed(op, d.Records)
	if len(d.Records) > 0 {
		e.noteConsumed(op.PID(), op.Offset)
	}
	e.finishConsume(op, ResultOK)
}

// clientErrorName is the name a client of the era reports for err: error code 6 was
// NOT_LEADER_FOR_PARTITION until 2.6 renamed it NOT_LEADER_OR_FOLLOWER (Errors.java: 0.10.2.2 and
// 2.1.1 `NOT_LEADER_FOR_PARTITION(6, ...)`, 2.6.0 and 3.7.0 `NOT_LEADER_OR_FOLLOWER(6, ...)`).
func (e *Engine) clientErrorName(err KafkaError) string {
	if err == ErrNotLeaderOrFollower && !e.era.notLeaderOrFollowerName {
		return "NOT_LEADER_FOR_PARTITION"
	}
	return err.String()
}

func (e *Engine) finishConsume(op *ConsumeOp, result string) {
	op.Done = true
	op.Result = result
	p := e.partitions[op.PID()]
	text := fmt.Sprintf("consumer: read %s of %s from offset %d", plural.Of(len(op.Records), "record"), p.name(), op.Offset)
	if result != ResultOK {
		text = fmt.Sprintf("consumer: reading %s failed: %s", p.name(), result)
	}
	e.emit(Event{Type: EvConsumeResult, Topic: p.topic, Partition: Some(p.index), Name: result, Text: text})
}

// clientRequestFailed handles a client request with no answer.
func (e *Engine) clientRequestFailed(req *Message, timedOut bool) {
	switch {
	case req.Produce != nil:
		op := e.clients.Produce(req.Produce.Op)
		op.SetInFlight(false)
		defer e.connAnswered(req)
		if op.Done || e.expiredInFlight(op) {
			return
		}
		// A request that timed out or whose connection broke (Sender.handleProduceResponse:
		// NETWORK_EXCEPTION for a disconnection, which a timeout was before 3.5 (0.10.2.2 to
		// 2.1.1: NetworkClient.handleTimedOutRequests → processDisconnection, the answer
		// wasDisconnected); 3.7.0 answers a timeout REQUEST_TIMED_OUT (wasTimedOut); both
		// retriable).
		if timedOut && e.era.producerTimeoutName {
			e.retryProduce(op, ErrRequestTimedOut)
			return
		}
		e.retryProduce(op, ErrNetwork)
	case req.Fetch != nil:
		e.finishConsume(e.clients.Consume(int64(req.Fetch.FetcherID)), ErrNetwork.String())
	}
}

// Produces returns every produce so far, in order.
func (e *Engine) Produces() []ProduceOp {
	out := make([]ProduceOp, e.clients.ProduceCount()) // never nil: [] in JSON
	for i := range out {
		op := e.clients.Produce(int64(i + 1))
		out[i] = *op
		out[i].RecordIDs = slices.Clone(op.RecordIDs)
	}
	return out
}

// Reusing the producers' requests (issue 12): a steady acks=all load sends a Produce per batch,
// each an allocation of its own, garbage once answered. A Produce is reused on recycle.go's
// terms, which hold for it too: only when the engine records no trace (or tests force reuse), and
// only once answered and handled, when nothing refers to it any more. Nothing holds it on the way:
// a client's link is never cut, so it is never held nor resent as a copy; the leader keeps it only
// in a parked produce, done once answered, and nobody reads a done one's request (the timeout
// checks done first; Purgatory lists only waiting ones). The one pointer that outlives the answer
// is a requestFailed timer (a reset when its leader crashed with the answer on its way): no
// request is reused while any waits (failing).

// The brokers' answers to them are reused on the same terms: an answer, once delivered and
// handled by the producer, is referred to by nothing (the producer keeps its values, not it).

// producePool is the storage of the producers' requests and of their answers.
type producePool struct {
	// free holds answered requests, each with its own body (Message.Produce, in the same
	// allocation).
	free []*Message
	// sent registers the requests sent while messages are reused, at id & (len-1): only a
	// registered one is reused. A later one landing on a slot still registered overwrites it (the
	// earlier one is then never reused).
	sent []*Message
	// freeAnswers and answers are the answers' free storage and registered ones, as free and
	// sent are the requests'.
	freeAnswers []*produceAnswer
	answers     []*produceAnswer
}

// produceAnswer is the storage of an answer to a Produce: the message and its body in one
// allocation.
type produceAnswer struct {
	m    Message
	body ProduceResponse
}

// RecordHeader is the idempotent producer's header of record id's batch (brk.Cluster).
func (h *cluster) RecordHeader(id int64) (int16, int32, bool) { return h.e.clients.RecordHeader(id) }

// SendProduceAnswer sends broker h.b's answer resp to Produce req (the produce path is package
// broker's; the storage the engine's, here beside the requests').
func (h *cluster) SendProduceAnswer(req *Message, resp ProduceResponse) {
	h.e.sendProduceAnswer(h.b.id, req, resp)
}

// sendProduceAnswer sends from's answer resp to Produce req, in answered storage if messages are
// reused (then registered), else in new storage.
func (e *Engine) sendProduceAnswer(from int32, req *Message, resp ProduceResponse) {
	pp := &e.out.produce
	reuse := e.recycling()
	var x *produceAnswer
	if n := len(pp.freeAnswers) - 1; n >= 0 && reuse {
		x = pp.freeAnswers[n]
		pp.freeAnswers[n] = nil
		pp.freeAnswers = pp.freeAnswers[:n]
	} else {
		x = &produceAnswer{}
	}
	x.body = resp
	x.m = Message{Type: MsgProduceResponse, From: from, To: req.From, ReplyTo: req.ID, ProduceResponse: &x.body}
	e.send(&x.m)
	if reuse {
		if pp.answers == nil {
			pp.answers = make([]*produceAnswer, produceSlots)
		}
		pp.answers[x.m.ID&(produceSlots-1)] = x
	}
}

// produceSlots is the size of the table of registered requests: more than a steady load has
// unanswered at once (a request waits for the followers' next fetch).
const produceSlots = 1 << 12

// produceMessage is a Produce with its body to fill in: an answered one if any, else a new one,
// the message and its body in one allocation.
func (e *Engine) produceMessage() *Message {
	pp := &e.out.produce
	if n := len(pp.free) - 1; n >= 0 {
		m := pp.free[n]
		pp.free[n] = nil
		pp.free = pp.free[:n]
		return m
	}
	x := &struct {
		m    Message
		body ProduceRequest
	}{}
	x.m.Produce = &x.body
	return &x.m
}

// sentProduce registers request m, just sent, when messages are reused.
func (e *Engine) sentProduce(m *Message) {
	if !e.recycling() {
		return
	}
	pp := &e.out.produce
	if pp.sent == nil {
		pp.sent = make([]*Message, produceSlots)
	}
	pp.sent[m.ID&(produceSlots-1)] = m
}

// produceDone is called when answer m to request req was delivered and handled: both are free
// for reuse if registered (see above). A requestFailed timer may point at req (failing), never
// at an answer.
func (e *Engine) produceDone(m, req *Message) {
	pp := &e.out.produce
	if !e.recycling() {
		return
	}
	if pp.answers != nil {
		if s := &pp.answers[m.ID&(produceSlots-1)]; *s != nil && &(*s).m == m {
			pp.freeAnswers = append(pp.freeAnswers, *s)
			*s = nil
			e.out.recycle.reused++
		}
	}
	if pp.sent == nil || e.out.recycle.failing != 0 {
		return
	}
	if s := &pp.sent[req.ID&(produceSlots-1)]; *s == req {
		*s = nil
		pp.free = append(pp.free, req)
		e.out.recycle.reused++
	}
}
