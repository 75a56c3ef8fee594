package engine

import (
	"strconv"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The leader's side of Produce (ReplicaManager.appendRecords, Partition.appendRecordsToLeader) and
// the produce purgatory (DelayedProduce). acks=0 gets no answer, acks=1 an answer after the local
// append, acks=all an answer once the HW passes the batch (or an error).

func (e *Engine) handleProduce(b *broker, m *Message) {
	req := m.Produce
	p := e.partitions[e.pidOf(req.TP)]
	r := b.replicaOf(p.pid)
	errName := e.checkLeaderRequest(r, -1, ClientNode)
	if errName == ErrNone && req.Acks == -1 && len(r.State().ISR()) < e.effectiveMinIsr(p) {
		errName = ErrNotEnoughReplicas
	}
	if errName != ErrNone {
		if req.Acks != 0 {
			e.respondProduce(b, m, errName, -1)
		}
		// acks=0 gets no answer, an error neither: Kafka closes the connection instead
		// (KafkaApis.handleProduceRequest: `if (produceRequest.acks == 0) { if (errorInResponse)
		// closeConnection ... }`, 0.10.2.2 and 3.7.0), and the producer, which awaits nothing,
		// learns of it only by reconnecting.
		return
	}
	base := r.Log().AppendAsLeader(r.LeaderEpoch(), req.RecordIDs)
	if e.tracing() {
		e.emit(Event{Type: EvAppend, Broker: Some(b.id), Topic: p.topic, Partition: Some(p.index),
			From: Some(base), To: Some(r.Log().LogEndOffset()), Epoch: Some(int64(r.LeaderEpoch())),
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
		dp := e.delayedProduces.New(m, base, len(req.RecordIDs))
		r.Produces().Add(dp)
		e.completeDelayedProduces(r)
		if !dp.Done() {
			e.schedule(delayedProduceDone{e.timer(b), dp}.due(e.now + req.TimeoutMs))
		}
	}
}

// afterAppend counts records toward log.flush.interval.messages, and tells the fetch sessions
// caching r.
func (e *Engine) afterAppend(r *replica, n int) {
	e.sessionsChanged(r)
	if r.Appended(int64(n), e.cfg.LogFlushIntervalMessages) {
		r.Log().Flush()
	}
}

func (e *Engine) respondProduce(b *broker, m *Message, errName KafkaError, base int64) {
	// The message and its body in one allocation (one per batch answered).
	x := &struct {
		m    Message
		body ProduceResponse
	}{body: ProduceResponse{Op: m.Produce.Op, TP: m.Produce.TP, Error: errName, BaseOffset: base}}
	x.m = Message{Type: MsgProduceResponse, From: b.id, To: m.From, ReplyTo: m.ID, ProduceResponse: &x.body}
	e.send(&x.m)
}

// completeDelayedProduces is DelayedProduce.tryComplete for every produce parked on r.
func (e *Engine) completeDelayedProduces(r *replica) {
	if r.Produces().Len() == 0 {
		return
	}
	b := e.brokers[r.Broker()]
	r.Produces().TryComplete(r.Offline(), r.IsLeader(), r.Log().HighWatermark(), r.State(), e.effectiveMinIsr(r.p),
		func(dp *brk.DelayedProduce, err KafkaError, base int64) { e.respondProduce(b, dp.Request(), err, base) })
}

func (e *Engine) delayedProduceExpired(b *broker, dp *brk.DelayedProduce) {
	if dp.Expire() {
		e.respondProduce(b, dp.Request(), ErrRequestTimedOut, -1)
	}
}

// describeAppend is an append event's text (made when read: Narrate).
// It appends with strconv rather than fmt: a large traced run narrates hundreds of thousands.
func describeAppend(ev *Event) string {
	b := make([]byte, 0, 96)
	b = append(b, "leader "...)
	b = strconv.AppendInt(b, int64(ev.Broker.V), 10)
	b = append(b, " appended "...)
	b = strconv.AppendInt(b, ev.To.V-ev.From.V, 10)
	b = append(b, " records to "...)
	b = append(b, ev.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ev.Partition.V), 10)
	b = append(b, " at offsets "...)
	b = strconv.AppendInt(b, ev.From.V, 10)
	b = append(b, ".."...)
	b = strconv.AppendInt(b, ev.To.V-1, 10)
	b = append(b, " in epoch "...)
	b = strconv.AppendInt(b, ev.Epoch.V, 10)
	return string(b)
}
