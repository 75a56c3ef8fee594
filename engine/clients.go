package engine

import (
	"fmt"
	"slices"
)

// Producers and consumers. They live outside the brokers' network (ClientNode) and find the
// leader from metadata, which here is the controller's state at once (simplification: no
// metadata staleness). The producer retries NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE and
// connection failures after retry.backoff.ms until delivery.timeout.ms; every other outcome is
// final, so each error shows. A retried batch keeps its record ids: like a producer without
// idempotence, a retry after a lost answer may append the batch twice.

// ProduceOp is one `produce` step and its outcome.
type ProduceOp struct {
	ID         int64   `json:"id"`
	Topic      string  `json:"topic"`
	Partition  int32   `json:"partition"`
	Acks       Acks    `json:"acks"`
	RecordIDs  []int64 `json:"recordIds"`
	Sent       int64   `json:"sent"`
	Attempts   int     `json:"attempts"`
	Done       bool    `json:"done"`
	Result     string  `json:"result,omitempty"` // ResultAcked, ResultSent (acks=0) or an error name
	BaseOffset int64   `json:"baseOffset"`
	pid        int32
}

// ConsumeOp is one `consume` step and what it read.
type ConsumeOp struct {
	ID        int64      `json:"id"`
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Offset    int64      `json:"offset"`
	Done      bool       `json:"done"`
	Result    string     `json:"result,omitempty"`
	Records   []offsetID `json:"records,omitempty"`
	pid       int32
	max       int64
}

type clients struct {
	produces   []*ProduceOp
	consumes   []*ConsumeOp
	nextRecord int64
	// parts is what the clients know of each partition, by pid.
	parts []clientPartition
}

// clientPartition is the clients' record of one partition: what producers were told and what
// consumers read. The checker and `expect` read it.
type clientPartition struct {
	acked    int64      // records acknowledged to producers (acks 1 and all)
	ackedAll []offsetID // records acknowledged with acks=all, in ack order
	acked1   []offsetID // records acknowledged with acks=1, in ack order (for verdicts)
	consumed []offsetID // records consumers read
	nextRead int64      // the consumer's next offset
}

// client is the clients' record of p.
func (e *Engine) client(p *partition) *clientPartition { return &e.clients.parts[p.pid] }

// Client outcomes besides Kafka's error names: the results of produce and consume steps.
const (
	ResultAcked = "acked" // a produce with acks 1 or all was acknowledged
	ResultSent  = "sent"  // a produce with acks=0 left (no answer comes)
	ResultOK    = "ok"    // a consume read
)

func (e *Engine) produce(p *partition, count int64, acks Acks) {
	op := &ProduceOp{ID: int64(len(e.clients.produces) + 1), Topic: p.topic, Partition: p.index, Acks: acks,
		Sent: e.now, BaseOffset: -1, pid: p.pid}
	for range count {
		e.clients.nextRecord++
		op.RecordIDs = append(op.RecordIDs, e.clients.nextRecord)
	}
	e.clients.produces = append(e.clients.produces, op)
	e.sendProduce(op)
}

func (e *Engine) sendProduce(op *ProduceOp) {
	p := e.partitions[op.pid]
	op.Attempts++
	if p.leader < 0 {
		e.retryProduce(op, ErrLeaderNotAvailable)
		return
	}
	m := &Message{Type: MsgProduce, From: ClientNode, To: p.leader, Produce: &ProduceRequest{
		Op: op.ID, TP: p.tp(), Acks: op.Acks, RecordIDs: op.RecordIDs, TimeoutMs: e.cfg.RequestTimeoutMs}}
	e.send(m)
	if op.Acks == 0 {
		// acks=0: fire and forget; no answer is awaited.
		delete(e.pending, m.ID)
		e.finishProduce(op, ResultSent, -1)
	}
}

// retryProduce schedules another attempt, or gives up at delivery.timeout.ms.
func (e *Engine) retryProduce(op *ProduceOp, why KafkaError) {
	if e.now+e.retryBackoff() >= op.Sent+e.cfg.DeliveryTimeoutMs {
		e.finishProduce(op, ErrDeliveryTimeout.String(), -1)
		return
	}
	e.schedule(producerRetry{op.ID}.due(e.now + e.retryBackoff()))
}

func (e *Engine) producerRetry(id int64) {
	op := e.clients.produces[id-1]
	if !op.Done {
		e.sendProduce(op)
	}
}

func (e *Engine) finishProduce(op *ProduceOp, result string, base int64) {
	op.Done = true
	op.Result = result
	op.BaseOffset = base
	p := e.partitions[op.pid]
	if !e.tracing() {
		return
	}
	text := fmt.Sprintf("producer: %d records to %s (acks=%s): %s", len(op.RecordIDs), p.name(), acksName(op.Acks), result)
	if result == ResultAcked {
		text = fmt.Sprintf("producer: %d records to %s acknowledged at offsets %d..%d (acks=%s)", len(op.RecordIDs), p.name(), base, base+int64(len(op.RecordIDs))-1, acksName(op.Acks))
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
	case m.FetchResponse != nil:
		e.consumeAnswered(m, req)
	}
}

func (e *Engine) produceAnswered(resp *ProduceResponse) {
	op := e.clients.produces[resp.Op-1]
	if op.Done {
		return
	}
	switch resp.Error {
	case ErrNone:
		p := e.partitions[op.pid]
		e.client(p).acked += int64(len(op.RecordIDs))
		for i, id := range op.RecordIDs {
			rec := offsetID{Offset: resp.BaseOffset + int64(i), ID: id}
			if op.Acks == -1 {
				e.client(p).ackedAll = append(e.client(p).ackedAll, rec)
			} else {
				e.client(p).acked1 = append(e.client(p).acked1, rec)
			}
		}
		e.finishProduce(op, ResultAcked, resp.BaseOffset)
		if op.Acks == -1 {
			e.noteAckedAll(p, resp.BaseOffset)
		}
	case ErrNotLeaderOrFollower, ErrLeaderNotAvailable, ErrKafkaStorage:
		e.retryProduce(op, resp.Error)
	default:
		e.finishProduce(op, resp.Error.String(), -1)
	}
}

func (e *Engine) consume(p *partition, count int64) {
	op := &ConsumeOp{ID: int64(len(e.clients.consumes) + 1), Topic: p.topic, Partition: p.index, Offset: e.client(p).nextRead, pid: p.pid, max: count}
	e.clients.consumes = append(e.clients.consumes, op)
	if p.leader < 0 {
		e.finishConsume(op, ErrLeaderNotAvailable.String())
		return
	}
	e.send(&Message{Type: MsgFetch, From: ClientNode, To: p.leader, Fetch: &FetchRequest{ReplicaID: ClientNode,
		BrokerEpoch: -1, FetcherID: int32(op.ID), Partitions: []FetchPartition{{TP: p.tp(), FetchOffset: e.client(p).nextRead,
			LogStartOffset: -1, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxRecords: count}}}})
}

func (e *Engine) consumeAnswered(m, req *Message) {
	op := e.clients.consumes[req.Fetch.FetcherID-1]
	d := m.FetchResponse.Partitions[0]
	if d.Error != ErrNone {
		e.finishConsume(op, d.Error.String())
		return
	}
	p := e.partitions[op.pid]
	for i, r := range d.Records {
		rec := offsetID{Offset: op.Offset + int64(i), ID: r.ID}
		op.Records = append(op.Records, rec)
		e.client(p).consumed = append(e.client(p).consumed, rec)
	}
	e.client(p).nextRead = op.Offset + int64(len(d.Records))
	e.finishConsume(op, ResultOK)
}

func (e *Engine) finishConsume(op *ConsumeOp, result string) {
	op.Done = true
	op.Result = result
	p := e.partitions[op.pid]
	text := fmt.Sprintf("consumer: read %d records of %s from offset %d", len(op.Records), p.name(), op.Offset)
	if result != ResultOK {
		text = fmt.Sprintf("consumer: reading %s failed: %s", p.name(), result)
	}
	e.emit(Event{Type: EvConsumeResult, Topic: p.topic, Partition: Some(p.index), Name: result, Text: text})
}

// clientRequestFailed handles a client request with no answer.
func (e *Engine) clientRequestFailed(req *Message, timedOut bool) {
	switch {
	case req.Produce != nil:
		op := e.clients.produces[req.Produce.Op-1]
		if op.Done {
			return
		}
		if timedOut {
			e.finishProduce(op, ErrRequestTimedOut.String(), -1)
			return
		}
		e.retryProduce(op, ErrNetwork)
	case req.Fetch != nil:
		e.finishConsume(e.clients.consumes[req.Fetch.FetcherID-1], ErrNetwork.String())
	}
}

// Produces returns every produce so far, in order.
func (e *Engine) Produces() []ProduceOp {
	out := make([]ProduceOp, len(e.clients.produces)) // never nil: [] in JSON
	for i, op := range e.clients.produces {
		out[i] = *op
		out[i].RecordIDs = slices.Clone(op.RecordIDs)
	}
	return out
}
