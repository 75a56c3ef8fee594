// Package clients is the producers' and consumers' state: each produce and consume step and its
// outcome, the record ids handed out, and what the clients know of each partition (what producers
// were told, what consumers read, where the consumer reads next). It imports only
// engine/protocol; the engine's loop sends the clients' requests, delivers their answers and
// schedules their retries, and the checker and `expect` read what is recorded here.
package clients

import (
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
}

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
		Sent: now, BaseOffset: -1, pid: pid, sentEpoch: -1})
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
		rec := OffsetID{Offset: op.Offset + int64(i), ID: r.ID}
		op.Records = append(op.Records, rec)
		p.consumed = append(p.consumed, rec)
	}
	p.consumedSorted = sortedPrefix(p.consumed, p.consumedSorted)
	c.moreOf(p).nextRead = op.Offset + int64(len(records))
}
