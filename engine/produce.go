package engine

import "fmt"

// The leader's side of Produce (ReplicaManager.appendRecords, Partition.appendRecordsToLeader) and
// the produce purgatory (DelayedProduce). acks=0 gets no answer, acks=1 an answer after the local
// append, acks=all an answer once the HW passes the batch (or an error).

// delayedProduce is an acks=all produce waiting for the HW.
type delayedProduce struct {
	req      *Message
	required int64 // the HW that commits the batch
	base     int64
	done     bool
}

func (e *Engine) handleProduce(b *broker, m *Message) {
	req := m.Produce
	p := e.partitions[e.pidOf(req.TP)]
	r := b.replicaOf(p.pid)
	errName := e.checkLeaderRequest(r, -1, ClientNode)
	if errName == ErrNone && req.Acks == -1 && len(r.isr.ISR()) < e.effectiveMinIsr(p) {
		errName = ErrNotEnoughReplicas
	}
	if errName != ErrNone {
		e.respondProduce(b, m, errName, -1)
		return
	}
	base := r.log.AppendAsLeader(r.leaderEpoch, req.RecordIDs)
	if e.tracing() {
		e.emit(Event{Type: EvAppend, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index),
			From: Some(base), To: Some(r.log.LogEndOffset()), Epoch: Some(int64(r.leaderEpoch)),
			render: describeAppend})
	}
	e.afterAppend(r, len(req.RecordIDs))
	hwMoved := e.maybeIncrementHW(r)
	e.tryCompleteWatchers(b, r)
	if hwMoved {
		e.completeDelayedProduces(r)
	}
	switch req.Acks {
	case 0:
	case 1:
		e.respondProduce(b, m, ErrNone, base)
	default:
		dp := &delayedProduce{req: m, required: base + int64(len(req.RecordIDs)), base: base}
		r.produces = append(r.produces, dp)
		e.completeDelayedProduces(r)
		if !dp.done {
			e.schedule(delayedProduceDone{e.timer(b), dp}.due(e.now + req.TimeoutMs))
		}
	}
}

// afterAppend counts records toward log.flush.interval.messages, and tells the fetch sessions
// caching r.
func (e *Engine) afterAppend(r *replica, n int) {
	e.sessionsChanged(r)
	r.unflushed += int64(n)
	if r.unflushed >= e.cfg.LogFlushIntervalMessages {
		r.log.Flush()
		r.unflushed = 0
	}
}

func (e *Engine) respondProduce(b *broker, m *Message, errName KafkaError, base int64) {
	e.send(&Message{Type: MsgProduceResponse, From: b.id, To: m.From, ReplyTo: m.ID,
		ProduceResponse: &ProduceResponse{Op: m.Produce.Op, TP: m.Produce.TP, Error: errName, BaseOffset: base}})
}

// completeDelayedProduces is DelayedProduce.tryComplete for every produce parked on r.
func (e *Engine) completeDelayedProduces(r *replica) {
	if len(r.produces) == 0 {
		return
	}
	b := e.brokers[r.broker]
	kept := r.produces[:0]
	for _, dp := range r.produces {
		if dp.done {
			continue
		}
		switch {
		case r.offline:
			dp.done = true
			e.respondProduce(b, dp.req, ErrKafkaStorage, -1)
		case !r.isLeader():
			dp.done = true
			e.respondProduce(b, dp.req, ErrNotLeaderOrFollower, -1)
		case r.log.HighWatermark() >= dp.required:
			dp.done = true
			errName := ErrNone
			if len(r.isr.MaximalISR()) < e.effectiveMinIsr(r.p) {
				errName = ErrNotEnoughReplicasAfterAppend
			}
			e.respondProduce(b, dp.req, errName, dp.base)
		default:
			kept = append(kept, dp)
		}
	}
	clear(r.produces[len(kept):])
	r.produces = kept
}

func (e *Engine) delayedProduceExpired(b *broker, dp *delayedProduce) {
	if dp == nil || dp.done {
		return
	}
	dp.done = true
	e.respondProduce(b, dp.req, ErrRequestTimedOut, -1)
}

// describeAppend is an append event's text (made when read: Narrate).
func describeAppend(ev *Event) string {
	return fmt.Sprintf("leader %d appended %d records to %s-%d at offsets %d..%d in epoch %d",
		ev.Broker.V, ev.To.V-ev.From.V, ev.Topic, ev.Partition.V, ev.From.V, ev.To.V-1, ev.Epoch.V)
}
