// Package clients is the producers' and consumers' state: each produce and consume step and its
// outcome, the record ids handed out, and what the clients know of each partition (what producers
// were told, what consumers read, where the consumer reads next). It imports only
// engine/protocol; the engine's loop sends the clients' requests, delivers their answers and
// schedules their retries, and the checker and `expect` read what is recorded here.
package clients

import (
	"slices"
	"sort"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// OffsetID is a record known to be at an offset.
type OffsetID struct {
	Offset int64 `json:"offset"`
	ID     int64 `json:"id"`
}

// ProduceOp is one `produce` step and its outcome.
type ProduceOp struct {
	ID         int64         `json:"id"`
	Topic      string        `json:"topic"`
	Partition  int32         `json:"partition"`
	Acks       protocol.Acks `json:"acks"`
	RecordIDs  []int64       `json:"recordIds"`
	Sent       int64         `json:"sent"`
	Attempts   int           `json:"attempts"`
	Done       bool          `json:"done"`
	Result     string        `json:"result,omitempty"` // ResultAcked, ResultSent (acks=0) or an error name
	BaseOffset int64         `json:"baseOffset"`
	pid        int32
	sentEpoch  int32 // the leader epoch the producer's metadata had at the last send
	failures   int32 // attempts that failed (Kafka's ProducerBatch.attempts)
	lastFailed int64 // when the last failed attempt was answered (Kafka's ProducerBatch.lastAttemptMs)
	firstID    int64 // the first record id handed out for it (its records' ids run from there)
	// The idempotent producer's header of its batch, given at its first send (seqSet): the
	// producer epoch and base sequence (ProducerBatch.setProducerState at drain), rewritten by an
	// epoch bump (seqReset: ProducerBatch.sequenceHasBeenReset).
	baseSeq          int32
	pEpoch           int16
	seqSet, seqReset bool
	inFlight         bool // its request is on its way or awaits an answer
	// The accumulator's deque (Queue): queued while the op waits in its partition's deque;
	// backoffUntil is when its retry's backoff ends (ProducerBatch.lastAttemptMs + backoff), and
	// look is the time + 1 of its one valid wake-up (0: none), which makes any other stale.
	queued       bool
	backoffUntil int64
	look         int64
}

// Failures is how many of the op's sends failed (Kafka's ProducerBatch.attempts): 0 for a batch
// that waits for its first send (no live leader, or a busy connection).
func (op *ProduceOp) Failures() int { return int(op.failures) }

// Queued reports whether the op waits in its partition's deque (Clients.QueueHead).
func (op *ProduceOp) Queued() bool { return op.queued }

// BackoffUntil is when the op's retry backoff ends (0 if it never failed).
func (op *ProduceOp) BackoffUntil() int64 { return op.backoffUntil }

// SetBackoffUntil records when the op's retry backoff ends.
func (op *ProduceOp) SetBackoffUntil(at int64) { op.backoffUntil = at }

// Look is the time of the op's valid wake-up, and whether it has one.
func (op *ProduceOp) Look() (int64, bool) { return op.look - 1, op.look > 0 }

// SetLook records the op's valid wake-up at (at < 0: none).
func (op *ProduceOp) SetLook(at int64) { op.look = at + 1 }

// SetInFlight records that the op's request left (true) or was answered or failed (false).
func (op *ProduceOp) SetInFlight(v bool) { op.inFlight = v }

// Failed counts a failed attempt of the op and returns how many failed so far.
func (op *ProduceOp) Failed() int {
	op.failures++
	return int(op.failures)
}

// FailedAt counts a failed attempt of the op answered at now, as Failed, and records when
// (Kafka's ProducerBatch.reenqueued: lastAttemptMs = now).
func (op *ProduceOp) FailedAt(now int64) int {
	op.lastFailed = now
	return op.Failed()
}

// InRetry reports whether an attempt of the op failed (Kafka's ProducerBatch.inRetry).
func (op *ProduceOp) InRetry() bool { return op.failures > 0 }

// LastFailed is when the op's last failed attempt was answered (ProducerBatch.lastAttemptMs).
func (op *ProduceOp) LastFailed() int64 { return op.lastFailed }

// PID is the engine's id of the partition the op writes to.
func (op *ProduceOp) PID() int32 { return op.pid }

// SentEpoch is the leader epoch the producer's metadata had when the op was last sent (Kafka's
// ProducerBatch.currentLeaderEpoch), -1 before its first send.
func (op *ProduceOp) SentEpoch() int32 { return op.sentEpoch }

// SetSentEpoch records that the op was sent while the metadata had leader epoch e.
func (op *ProduceOp) SetSentEpoch(e int32) { op.sentEpoch = e }

// ConsumeOp is one `consume` step and what it read.
type ConsumeOp struct {
	ID        int64      `json:"id"`
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Offset    int64      `json:"offset"`
	Done      bool       `json:"done"`
	Result    string     `json:"result,omitempty"`
	Records   []OffsetID `json:"records,omitempty"`
	pid       int32
}

// PID is the engine's id of the partition the op reads.
func (op *ConsumeOp) PID() int32 { return op.pid }

// Client outcomes besides Kafka's error names: the results of produce and consume steps.
const (
	ResultAcked = "acked" // a produce with acks 1 or all was acknowledged
	ResultSent  = "sent"  // a produce with acks=0 left (no answer comes)
	ResultOK    = "ok"    // a consume read
)

// Clients is every client's state. The zero value is not ready: call Init.
type Clients struct {
	// producerEpoch is the idempotent producer's epoch (ProducerIdAndEpoch.epoch): bumped when a
	// partition's sequences restart (BumpEpoch). The run has one producer id.
	producerEpoch int16
	// opChunks hold the produce steps, opChunkSize a chunk (every chunk but the last full): step
	// id is found by its number, with no list of pointers to them to grow (a pointer list, copied
	// at each growth under the collector's write barriers, and scanned whole at every cycle).
	opChunks [][]ProduceOp
	produced int
	// idChunk is the chunk NewProduce hands record ids out of.
	idChunk    []int64
	consumes   []*ConsumeOp
	nextRecord int64
	// parts is what the clients know of each partition, by pid; moreChunk is the chunk their
	// partitionMores are made from.
	parts     []Partition
	moreChunk []partitionMore
}

// Partition is the clients' record of one partition: what producers were told and what
// consumers read. The checker and `expect` read it. An acks=all acknowledgement writes it and
// the checker reads it at once (the leader's log must hold what was acknowledged and consumed),
// so what both touch fills one cache line, 64 bytes (a large table's backing array starts a
// page); the rest, which most partitions of a load never have (acks=1 acknowledgements, a
// consumer's position), is behind more.
type Partition struct {
	ackedAll []OffsetID // records acknowledged with acks=all, in ack order
	consumed []OffsetID // records consumers read
	// ackedAllSorted and consumedSorted are how long a prefix of ackedAll and of consumed is in
	// offset order (non-decreasing), kept as records are added (sortedPrefix).
	ackedAllSorted, consumedSorted int32
	more                           *partitionMore
}

// partitionMore is the rest of a partition's record, made at its first acks=1 acknowledgement or
// consume.
type partitionMore struct {
	acked1   []OffsetID // records acknowledged with acks=1, in ack order (for verdicts)
	nextRead int64      // the consumer's next offset
	seq      seqState   // the idempotent producer's sequences for the partition
	// queue holds the ids of the partition's batches waiting in the producer's accumulator, in
	// deque order (RecordAccumulator's Deque<ProducerBatch> for the partition): those not in
	// flight, sent, nor held by the idempotent producer's own rules.
	queue []int64
}

// seqState is the idempotent producer's record of a partition (3.7.0 TxnPartitionEntry; 0.11.0.2
// and 2.1.1 TransactionManager's per-partition maps): the producer epoch its sequences are
// under, the next sequence, the last acknowledged one, and its batches with a sequence that are
// not done, in sequence order (inflightBatchesBySequence).
type seqState struct {
	next     int32   // nextSequence
	acked    int32   // lastAckedSequence + 1 (0: none acknowledged under epoch)
	epoch    int16   // the producer epoch of the partition's sequences
	assigned []int64 // the ids of the ops with a sequence that are not done, in sequence order
	blocked  []int64 // the ids of new batches waiting behind a batch to retry, in order
	retries  []int64 // the ids of retried batches waiting for the first in line (HoldRetry)
	// unresolved is the sequence after a batch that expired after it was sent, + 1 (0: none):
	// whether the leader has it is unknown (TransactionManager.partitionsWithUnresolvedSequences).
	unresolved int32
}

// Acked counts the records acknowledged to producers (acks 1 and all): each is in one of the
// two lists.
func (p *Partition) Acked() int64 { return int64(len(p.ackedAll) + len(p.AckedOne())) }

// AckedAll are the records acknowledged with acks=all, in ack order (shared: do not change).
func (p *Partition) AckedAll() []OffsetID { return p.ackedAll }

// AckedAllSorted is how long a prefix of AckedAll is in offset order. A list stays in order
// unless records were lost (an acknowledged record's offset is then taken again): the checker
// skips the records below an offset by a binary search over it.
func (p *Partition) AckedAllSorted() int { return int(p.ackedAllSorted) }

// AckedOne are the records acknowledged with acks=1, in ack order (shared: do not change).
func (p *Partition) AckedOne() []OffsetID {
	if p.more == nil {
		return nil
	}
	return p.more.acked1
}

// Consumed are the records consumers read, in order (shared: do not change).
func (p *Partition) Consumed() []OffsetID { return p.consumed }

// ConsumedSorted is how long a prefix of Consumed is in offset order (as AckedAllSorted).
func (p *Partition) ConsumedSorted() int { return int(p.consumedSorted) }

// NextRead is the consumer's next offset.
func (p *Partition) NextRead() int64 {
	if p.more == nil {
		return 0
	}
	return p.more.nextRead
}

// sortedPrefix is how long a prefix of list is in offset order, given that list[:n] is (list
// only grows at its end, so each record is looked at once).
func sortedPrefix(list []OffsetID, n int32) int32 {
	for int(n) < len(list) && (n == 0 || list[n].Offset >= list[n-1].Offset) {
		n++
	}
	return n
}

// moreOf is p's partitionMore, made from c's chunk of them at first (a load's consumes and
// acks=1 batches cost no allocation each).
func (c *Clients) moreOf(p *Partition) *partitionMore {
	if p.more == nil {
		if len(c.moreChunk) == cap(c.moreChunk) {
			c.moreChunk = make([]partitionMore, 0, moreChunkSize)
		}
		c.moreChunk = c.moreChunk[:len(c.moreChunk)+1]
		p.more = &c.moreChunk[len(c.moreChunk)-1]
	}
	return p.more
}

// Init makes the clients of a cluster with partitions partitions.
func (c *Clients) Init(partitions int) { c.parts = make([]Partition, partitions) }

// Partition is the clients' record of partition pid.
func (c *Clients) Partition(pid int32) *Partition { return &c.parts[pid] }

// NextRecordID hands out a run-unique record id.
func (c *Clients) NextRecordID() int64 {
	c.nextRecord++
	return c.nextRecord
}

// NewProduce records a produce step of count new records, sent at now.
func (c *Clients) NewProduce(topic string, partition, pid int32, acks protocol.Acks, count, now int64) *ProduceOp {
	if c.produced%opChunkSize == 0 {
		c.opChunks = append(c.opChunks, make([]ProduceOp, 0, opChunkSize))
	}
	chunk := &c.opChunks[len(c.opChunks)-1]
	c.produced++
	*chunk = append(*chunk, ProduceOp{ID: int64(c.produced), Topic: topic, Partition: partition, Acks: acks,
		Sent: now, BaseOffset: -1, pid: pid, sentEpoch: -1, firstID: c.nextRecord + 1})
	op := &(*chunk)[len(*chunk)-1]
	if count > 0 {
		if int64(cap(c.idChunk)-len(c.idChunk)) < count {
			c.idChunk = make([]int64, 0, max(idChunkSize, count))
		}
		n := len(c.idChunk)
		for range count {
			c.idChunk = append(c.idChunk, c.NextRecordID())
		}
		op.RecordIDs = c.idChunk[n:len(c.idChunk):len(c.idChunk)] // capped: an append copies
	}
	return op
}

// The produce steps and their record ids are handed out of chunks of these sizes: every step is
// kept for the run, so a chunk lives no longer than its steps would, and a batch costs no
// allocation of its own (a steady load sends a thousand a second).
const (
	opChunkSize   = 128
	idChunkSize   = 1024
	moreChunkSize = 256
)

// Produce is the produce step with an id (from 1).
func (c *Clients) Produce(id int64) *ProduceOp {
	return &c.opChunks[(id-1)/opChunkSize][(id-1)%opChunkSize]
}

// ProduceCount counts the produce steps.
func (c *Clients) ProduceCount() int { return c.produced }

// ProduceOps are the produce steps, in order: a new list each call (the steps are shared: do not
// change them).
func (c *Clients) ProduceOps() []*ProduceOp {
	ops := make([]*ProduceOp, c.produced)
	for i := range ops {
		ops[i] = c.Produce(int64(i + 1))
	}
	return ops
}

// Acked records that a produce was acknowledged at base.
func (c *Clients) Acked(op *ProduceOp, base int64) {
	p := &c.parts[op.pid]
	if op.Acks == -1 {
		p.ackedAll = appendAcked(p.ackedAll, op.RecordIDs, base)
		p.ackedAllSorted = sortedPrefix(p.ackedAll, p.ackedAllSorted)
	} else if len(op.RecordIDs) > 0 {
		m := c.moreOf(p)
		m.acked1 = appendAcked(m.acked1, op.RecordIDs, base)
	}
}

// appendAcked appends the records ids acknowledged at base, with one growth at most (record by
// record, a young list grows at 1, 2, 4, 8).
func appendAcked(list []OffsetID, ids []int64, base int64) []OffsetID {
	list = grown(list, len(ids))
	for i, id := range ids {
		list = append(list, OffsetID{Offset: base + int64(i), ID: id})
	}
	return list
}

// grown is list with room for n more records. A list grows to twice its size, and a young one
// is made with its first append's size rounded up to a power of two (commitlog.RoomFor): from a
// batch's exact size (10 records) it was copied at 20, 40, 80 and 160 records, and past 256
// append grows it by a quarter (copying it five times over on its way). A single record's list
// starts at 4 (64 bytes): most partitions of a 100,000-partition run are acknowledged once or
// twice. Returned lists see no change: the new records go past their ends.
func grown(list []OffsetID, n int) []OffsetID {
	if cap(list)-len(list) >= n {
		return list
	}
	out := make([]OffsetID, len(list), max(2*cap(list), commitlog.RoomFor(len(list)+n, ackedLeast)))
	copy(out, list)
	return out
}

// ackedLeast is the least room an acknowledged list is made with (64 bytes).
const ackedLeast = 4

// NewConsume records a consume step, reading from the consumer's next offset.
func (c *Clients) NewConsume(topic string, partition, pid int32) *ConsumeOp {
	op := &ConsumeOp{ID: int64(len(c.consumes) + 1), Topic: topic, Partition: partition, Offset: c.parts[pid].NextRead(), pid: pid}
	c.consumes = append(c.consumes, op)
	return op
}

// Consume is the consume step with an id (from 1).
func (c *Clients) Consume(id int64) *ConsumeOp { return c.consumes[id-1] }

// ConsumeOps are the consume steps, in order (shared: do not change).
func (c *Clients) ConsumeOps() []*ConsumeOp { return c.consumes }

// Consumed records what a consume step read: records from its offset on.
func (c *Clients) Consumed(op *ConsumeOp, records []commitlog.Record) {
	p := &c.parts[op.pid]
	for i, r := range records {
		if r.Gap {
			continue // no record at that offset (commitlog.Record.Gap): the consumer reads past it
		}
		rec := OffsetID{Offset: op.Offset + int64(i), ID: r.ID}
		op.Records = append(op.Records, rec)
		p.consumed = append(p.consumed, rec)
	}
	p.consumedSorted = sortedPrefix(p.consumed, p.consumedSorted)
	c.moreOf(p).nextRead = op.Offset + int64(len(records))
}

// The idempotent producer's sequences (KIP-98). Its batches carry its producer epoch and a
// per-partition sequence; a leader checks each batch's sequence against the producer's last one
// in its log (broker.checkSequence), and looks it up here: the engine's log records carry only
// ids, so a record's header is its batch's as the producer holds it now (RecordHeader).

// AssignSequence gives op, the idempotent producer's batch, its producer epoch and base sequence
// at its first send (RecordAccumulator.drain: ProducerBatch.setProducerState with the
// partition's next sequence). A partition whose sequences are under an older epoch and that has
// no batch in flight starts again at sequence 0 under the producer's epoch
// (TransactionManager.maybeUpdateProducerIdAndEpoch, 3.7.0).
func (c *Clients) AssignSequence(op *ProduceOp) {
	if op.seqSet {
		return
	}
	s := &c.moreOf(&c.parts[op.pid]).seq
	if s.epoch != c.producerEpoch && len(s.assigned) == 0 {
		s.epoch, s.next, s.acked = c.producerEpoch, 0, 0
	}
	op.seqSet, op.pEpoch, op.baseSeq = true, s.epoch, s.next
	s.next += int32(len(op.RecordIDs))
	s.assigned = append(s.assigned, op.ID)
}

// BlockBehindRetry holds op, a new idempotent batch, back if its partition has a batch with a
// sequence waiting to be retried (not in flight): the accumulator's deque keeps the retry first
// (RecordAccumulator.reenqueue: addFirst), and drain sends a partition's first batch only, so no
// later batch passes it (and takes a sequence before it is resolved). It reports whether op was
// held; Unblock hands it back. Nor does a new batch leave while the partition has an unresolved
// sequence (shouldStopDrainBatchesForPartition: hasUnresolvedSequence).
func (c *Clients) BlockBehindRetry(op *ProduceOp) bool {
	p := &c.parts[op.pid]
	if op.seqSet || p.more == nil || !c.retryWaits(&p.more.seq) && p.more.seq.unresolved == 0 {
		return false
	}
	p.more.seq.blocked = append(p.more.seq.blocked, op.ID)
	return true
}

// HoldRetry holds op, an idempotent batch to retry, if it is not its partition's first batch in
// line (the lowest sequence not done): 3.7.0 RecordAccumulator.shouldStopDrainBatchesForPartition
// (from 1.0, KAFKA-5494) drains a retried batch only when its base sequence is
// TransactionManager.firstInFlightSequence, so a retry waits until the batches before it are
// done ("This effectively reduces our in flight request count to 1"). It reports whether op was
// held; UnholdRetries hands them back.
func (c *Clients) HoldRetry(op *ProduceOp) bool {
	p := &c.parts[op.pid]
	if !op.seqSet || p.more == nil {
		return false
	}
	s := &p.more.seq
	if len(s.assigned) == 0 || s.assigned[0] == op.ID || !slices.Contains(s.assigned, op.ID) {
		return false
	}
	s.retries = append(s.retries, op.ID)
	return true
}

// UnholdRetries returns partition pid's held retries, in order, and forgets them (each is held
// again unless it is now first in line).
func (c *Clients) UnholdRetries(pid int32) []int64 {
	p := &c.parts[pid]
	if p.more == nil || len(p.more.seq.retries) == 0 {
		return nil
	}
	ids := p.more.seq.retries
	p.more.seq.retries = nil
	return ids
}

// BatchInFlight reports whether an idempotent batch of partition pid is in flight (its request on
// its way or awaiting an answer).
func (c *Clients) BatchInFlight(pid int32) bool {
	p := &c.parts[pid]
	if p.more == nil {
		return false
	}
	for _, id := range p.more.seq.assigned {
		if c.Produce(id).inFlight {
			return true
		}
	}
	return false
}

// retryWaits reports whether a batch of s waits to be retried.
func (c *Clients) retryWaits(s *seqState) bool {
	for _, id := range s.assigned {
		if !c.Produce(id).inFlight {
			return true
		}
	}
	return false
}

// Unblock returns partition pid's held batches, in order, once no batch of it waits to be
// retried (nil otherwise), and forgets them.
func (c *Clients) Unblock(pid int32) []int64 {
	p := &c.parts[pid]
	if p.more == nil || len(p.more.seq.blocked) == 0 || c.retryWaits(&p.more.seq) || p.more.seq.unresolved != 0 {
		return nil
	}
	ids := p.more.seq.blocked
	p.more.seq.blocked = nil
	return ids
}

// Header is op's producer epoch and base sequence, and whether it has them (an idempotent batch
// sent at least once).
func (op *ProduceOp) Header() (epoch int16, seq int32, ok bool) {
	return op.pEpoch, op.baseSeq, op.seqSet
}

// SequenceReset reports whether op's sequence was rewritten by an epoch bump
// (ProducerBatch.sequenceHasBeenReset).
func (op *ProduceOp) SequenceReset() bool { return op.seqReset }

// IsNextSequence reports whether op is the batch after the partition's last acknowledged one
// (TransactionManager.isNextSequence: baseSequence - lastAckedSequence == 1).
func (c *Clients) IsNextSequence(op *ProduceOp) bool {
	p := &c.parts[op.pid]
	if p.more == nil {
		return op.baseSeq == 0
	}
	return op.pEpoch == p.more.seq.epoch && op.baseSeq == p.more.seq.acked
}

// AckedAnySequence reports whether a batch of op's partition was acknowledged under the
// partition's epoch (lastAckedSequence set).
func (c *Clients) AckedAnySequence(op *ProduceOp) bool {
	p := &c.parts[op.pid]
	return p.more != nil && p.more.seq.acked > 0
}

// BumpEpoch bumps the producer epoch and restarts partition pid's sequences under it: its
// batches not done get sequences from 0 in their order (3.7.0
// TransactionManager.bumpIdempotentProducerEpoch → TxnPartitionEntry.startSequencesAtBeginning;
// 0.11.0.2 and 2.1.1 resetProducerId, a new producer id, which a broker treats as the new epoch
// here: sequence 0 of an unknown producer or a new epoch is accepted).
func (c *Clients) BumpEpoch(pid int32) {
	c.producerEpoch++
	s := &c.moreOf(&c.parts[pid]).seq
	s.epoch, s.acked, s.unresolved = c.producerEpoch, 0, 0
	var seq int32
	for _, id := range s.assigned {
		op := c.Produce(id)
		op.pEpoch, op.baseSeq, op.seqReset = s.epoch, seq, true
		seq += int32(len(op.RecordIDs))
	}
	s.next = seq
}

// SequenceDone records that op, a batch with a sequence, is done: acknowledged, expired (its
// sequence is then unresolved: TransactionManager.markSequenceUnresolved, which 3.7.0's Sender
// calls for an expired batch in retry; the engine for any expired batch that was sent) or failed
// otherwise (Sender.failBatch with adjustSequenceNumbers: requestEpochBumpForPartition, bump).
// It reports whether the partition's sequences must restart under a new epoch now.
func (c *Clients) SequenceDone(op *ProduceOp, acked, expired bool) (bump bool) {
	if !op.seqSet {
		return false
	}
	s := &c.moreOf(&c.parts[op.pid]).seq
	i := slices.Index(s.assigned, op.ID)
	if i < 0 {
		return false
	}
	s.assigned = slices.Delete(s.assigned, i, i+1)
	end := op.baseSeq + int32(len(op.RecordIDs))
	switch {
	case op.pEpoch != s.epoch:
	case acked:
		s.acked = max(s.acked, end)
	case expired:
		s.unresolved = max(s.unresolved, end+1)
	default:
		return true
	}
	return c.resolve(s)
}

// resolve is TransactionManager.maybeResolveSequences for s: once no batch of the partition is in
// flight, an unresolved sequence is resolved if the last acknowledged batch is the one before the
// next sequence (the expired batch's successors were acknowledged), else the epoch is bumped.
func (c *Clients) resolve(s *seqState) (bump bool) {
	if s.unresolved == 0 || len(s.assigned) > 0 {
		return false
	}
	s.unresolved = 0
	return s.next != s.acked
}

// UnresolvedNext reports whether op's base sequence is the one after the partition's unresolved
// sequence (TransactionManager.isNextSequenceForUnresolvedPartition), and whether the partition
// has one (hasUnresolvedSequence).
func (c *Clients) UnresolvedNext(op *ProduceOp) (next, unresolved bool) {
	p := &c.parts[op.pid]
	if p.more == nil || p.more.seq.unresolved == 0 {
		return false, false
	}
	return op.baseSeq == p.more.seq.unresolved-1, true
}

// RecordHeader is the producer epoch and sequence of record id as the idempotent producer holds
// its batch now, and whether the record is an idempotent batch's (with a sequence).
func (c *Clients) RecordHeader(id int64) (epoch int16, seq int32, ok bool) {
	// The ops are in creation order and their records' ids increase with it: the last op whose
	// first id is at most id is the only one that can hold it.
	i := sort.Search(c.produced, func(i int) bool { return c.Produce(int64(i+1)).firstID > id })
	if i == 0 {
		return 0, 0, false
	}
	op := c.Produce(int64(i))
	if !op.seqSet || id >= op.firstID+int64(len(op.RecordIDs)) {
		return 0, 0, false
	}
	return op.pEpoch, op.baseSeq + int32(id-op.firstID), true
}

// The accumulator's deque of a partition (RecordAccumulator.batches): the batches waiting to be
// drained, first the head. Drain looks only at the head (RecordAccumulator.drain, 0.10.2.2 to
// 3.7.0): while it waits (for a leader, or in its retry backoff) the batches behind it wait too.

// QueueLen counts partition pid's waiting batches.
func (c *Clients) QueueLen(pid int32) int {
	p := &c.parts[pid]
	if p.more == nil {
		return 0
	}
	return len(p.more.queue)
}

// QueueHead is partition pid's first waiting batch, nil if none.
func (c *Clients) QueueHead(pid int32) *ProduceOp {
	p := &c.parts[pid]
	if p.more == nil || len(p.more.queue) == 0 {
		return nil
	}
	return c.Produce(p.more.queue[0])
}

// PushBack queues op at the tail of its partition's deque (RecordAccumulator.append: a new
// batch goes last).
func (c *Clients) PushBack(op *ProduceOp) {
	m := c.moreOf(&c.parts[op.pid])
	m.queue = append(m.queue, op.ID)
	op.queued = true
}

// PushFront queues op at the head of its partition's deque (RecordAccumulator.reenqueue:
// addFirst).
func (c *Clients) PushFront(op *ProduceOp) {
	m := c.moreOf(&c.parts[op.pid])
	m.queue = slices.Insert(m.queue, 0, op.ID)
	op.queued = true
}

// PopFront takes partition pid's head out of its deque and returns it (nil if none).
func (c *Clients) PopFront(pid int32) *ProduceOp {
	op := c.QueueHead(pid)
	if op == nil {
		return nil
	}
	m := c.parts[pid].more
	m.queue = m.queue[1:]
	if len(m.queue) == 0 {
		m.queue = nil
	}
	op.queued, op.look = false, 0 // a wake-up still due is stale
	return op
}
