// Package commitlog models one replica's copy of a partition: Kafka's UnifiedLog reduced to what
// replication needs (records with their leader epochs, log start, log end, high watermark,
// recovery point) and its leader-epoch cache.
//
// Simplification: a record has no payload or size, only a unique id and the leader epoch of its
// batch. Every record counts as one byte-free unit; the engine decides what "bytes" mean.
package commitlog

import (
	"math/bits"
	"slices"
)

// Record is one record of the log. ID is unique across the whole run, so two replicas that hold
// different records at one offset can be told apart.
type Record struct {
	ID    int64 `json:"id"`
	Epoch int32 `json:"epoch"`
	// Cont: the record continues the batch of the record before it. From message format v2
	// (0.11.0, KIP-98) a produce is one batch, and a fetch hands out whole batches
	// (LogSegment.read); false for a batch's first record, and for every record of a log of
	// one-record batches (0.10.2's message format v1, where each uncompressed record is its own
	// message). It lives in the struct's padding: a record stays 16 bytes. On the wire (a fetch
	// answer's records) it is written only when set.
	Cont bool `json:"cont,omitempty"`
	// Gap: no record at this offset (ID 0, epoch 0). Kafka's Log.truncateTo to an offset inside
	// a batch cuts the segment at the batch's start but sets the log end offset to the offset
	// asked for (LogSegment.truncateTo, then updateLogEndOffset: 0.11.0.2 to 3.7.0), so the
	// offsets from the batch's start to there hold nothing: reads skip them (a follower copying
	// them gets the next batch, past its fetch offset, and has the gap too), a consumer reads
	// none, and a restart ends the log at its last record. Never inside a batch: the next
	// record starts one.
	Gap bool `json:"gap,omitempty"`
}

// Log is one replica's log. Offsets are Kafka's: LEO and HW are exclusive.
//
// Its fields are in the order a Partition (the engine's replica, which embeds it) wants them:
// the HW, the LEO and the log start first, in the Partition's first cache line with its flags
// and ids (a follower's HW-only fetch answer, the HW checkpoint and the checker read nothing
// else), then the chunks and the epoch cache, which an append and a leader's read of a
// follower's fetch touch, together in the second.
type Log struct {
	// Invariant: start ≤ hw ≤ leo.
	hw int64
	// leo is the log end offset, what the chunks hold (their lengths from start), kept by every
	// change to them: LogEndOffset is read at every fetch, produce and HW step, and computing it
	// read the last chunk's header, in the chunk list's own allocation (a cache miss per cold
	// partition).
	leo int64
	// start is the log start offset.
	start int64
	// chunks hold the records. chunks[0][0] is at the log start; chunks[k], k ≥ 1, holds the
	// offsets from the k-th multiple of chunkLen after the log start's (the chunks are aligned
	// to offsets), so a record is found without a search. Every chunk but the last is full to
	// its aligned end; the last is the only one appended to. nil until the first append after
	// an empty start (Records tells a log never written from one emptied).
	chunks [][]Record
	cache  EpochCache
	// flushed is Kafka's recovery point (UnifiedLog.recoveryPoint): the log's own record of how
	// far it flushed, from which unflushedMessages (LEO − recovery point) counts toward
	// log.flush.interval.messages and a restart's recovery starts. It is not always what is on
	// stable storage: a restart sets it from the recovery-point checkpoint (below the disk's
	// flushed end) or, in 2.1, to the LEO (above it), and truncateFullyAndStartAt keeps it below
	// the new start.
	flushed int64
	// durable is how far the records are on stable storage (fsync'd): a power loss drops those
	// at and past it. Always in [log start, LEO].
	durable int64
}

// A log's records are kept in chunks of chunkLen (aligned to offsets) instead of one slice
// doubled as it grows: a growing slice allocates about twice what it holds (five times past 256
// records, where append grows by a quarter), and every record is copied at each growth. A chunk
// is allocated once and never copied; only a young log's first chunk grows, by doubling, so a
// short log stays small. Issue 12: under WebAssembly the collector is single-threaded and every
// byte allocated costs it.
const (
	chunkShift = 6
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
	// firstChunk is the least room a log's first chunk is made with (64 bytes). The first
	// chunk is made with the first append's size rounded up to a power of two: a 10-record
	// batch's log starts at 16 records and doubles to 32 and 64 (from the batch's exact size it
	// would be copied at 20 and 40 on its way to a full chunk), and a single record's at 4. Most
	// replicas of a 100,000-partition cluster hold a record or two, and a first chunk of 16
	// records for them was 36 MB of a 370 MB run, first touched page by page.
	firstChunk = 4
)

// RoomFor is the room a young list is made with for n records: n rounded up to a power of two,
// and at least least. A log's first chunk and the clients' acknowledged lists start so.
func RoomFor(n, least int) int {
	if n <= least {
		return least
	}
	return 1 << bits.Len(uint(n-1))
}

// chunkOf is the index in chunks of the chunk holding offset o (≥ start).
func (l *Log) chunkOf(o int64) int { return int(o>>chunkShift - l.start>>chunkShift) }

// index is offset o's index in its chunk k.
func (l *Log) index(k int, o int64) int64 {
	if k == 0 {
		return o - l.start
	}
	return o & chunkMask
}

// LogEndOffset returns the offset the next record will get.
func (l *Log) LogEndOffset() int64 { return l.leo }

// chunksEnd is the log end offset as the chunks hold it (leo must equal it: the tests check).
func (l *Log) chunksEnd() int64 {
	n := len(l.chunks)
	switch n {
	case 0:
		return l.start
	case 1:
		return l.start + int64(len(l.chunks[0]))
	}
	return (l.start>>chunkShift+int64(n-1))<<chunkShift + int64(len(l.chunks[n-1]))
}

// LogStartOffset returns the first offset held.
func (l *Log) LogStartOffset() int64 { return l.start }

// HighWatermark returns the replica's local high watermark.
func (l *Log) HighWatermark() int64 { return l.hw }

// RecoveryPoint returns Kafka's recovery point (UnifiedLog.recoveryPoint): where the log believes
// its flushed records end.
func (l *Log) RecoveryPoint() int64 { return l.flushed }

// Durable returns the offset below which records are on stable storage and survive a power loss.
func (l *Log) Durable() int64 { return l.durable }

// Cache returns the leader-epoch cache.
func (l *Log) Cache() *EpochCache { return &l.cache }

// SetHighWatermark sets the HW clamped to [log start, LEO], as UnifiedLog.updateHighWatermark does,
// and returns the value set.
func (l *Log) SetHighWatermark(hw int64) int64 {
	hw = max(l.start, min(hw, l.LogEndOffset()))
	l.hw = hw
	return hw
}

// At returns the record at offset o; ok is false outside [log start, LEO).
func (l *Log) At(o int64) (Record, bool) {
	if o < l.start || o >= l.LogEndOffset() {
		return Record{}, false
	}
	k := l.chunkOf(o)
	return l.chunks[k][l.index(k, o)], true
}

// Read returns the records in [from, to). The result shares memory with the log but stays valid:
// truncation never writes into memory a returned slice can see. A range across a chunk's end
// is copied (a follower's fetch reads a batch or a few, so seldom).
func (l *Log) Read(from, to int64) []Record {
	from = max(from, l.start)
	to = min(to, l.LogEndOffset())
	if from >= to {
		return nil
	}
	k := l.chunkOf(from)
	if l.chunkOf(to-1) == k {
		c, i := l.chunks[k], l.index(k, from)
		j := i + to - from
		return c[i:j:j]
	}
	return l.copyOut(from, to)
}

// copyOut is a copy of the records in [from, to) (held), nil if empty.
func (l *Log) copyOut(from, to int64) []Record {
	if from >= to {
		return nil
	}
	out := make([]Record, 0, to-from)
	for o := from; o < to; {
		k := l.chunkOf(o)
		c := l.chunks[k][l.index(k, o):]
		n := min(int64(len(c)), to-o)
		out = append(out, c[:n]...)
		o += n
	}
	return out
}

// room returns the last chunk with room for a record past its end, making it (or a copy of it)
// first if needed; want is how many records are to come. Only the last chunk is ever written:
// a truncation caps its length at its capacity, so that the next append here copies it, and
// records a returned Read slice sees are never overwritten.
func (l *Log) room(want int) *[]Record {
	n := len(l.chunks)
	if n > 0 {
		c := &l.chunks[n-1]
		if len(*c) < cap(*c) {
			return c
		}
		// limit is how many records the chunk holds when full: the first ends at the aligned
		// offset after the log start.
		limit := chunkLen
		if n == 1 {
			limit -= int(l.start & chunkMask)
		}
		if len(*c) < limit {
			size := limit
			if n == 1 { // a young log's only chunk grows by doubling
				size = min(limit, max(2*len(*c), len(*c)+want))
			}
			grown := make([]Record, len(*c), size)
			copy(grown, *c)
			*c = grown
			return c
		}
	}
	size := chunkLen
	if n == 0 {
		size = min(chunkLen-int(l.start&chunkMask), RoomFor(want, firstChunk))
		if cap(l.chunks) == 0 {
			// Room for a second chunk's header: a log past its first chunk would grow the list
			// at once.
			l.chunks = make([][]Record, 0, 2)
		}
	}
	l.chunks = append(l.chunks, make([]Record, 0, size))
	return &l.chunks[n]
}

// AppendAsLeader appends records stamped with epoch, each its own batch, and returns the offset
// of the first one. The epoch cache learns the epoch if it is new.
func (l *Log) AppendAsLeader(epoch int32, ids []int64) int64 {
	return l.AppendBatchAsLeader(epoch, ids, false)
}

// AppendBatchAsLeader is AppendAsLeader with the records one batch if batch is set (message
// format v2), each its own otherwise.
func (l *Log) AppendBatchAsLeader(epoch int32, ids []int64, batch bool) int64 {
	base := l.LogEndOffset()
	l.cache.Assign(epoch, base)
	l.leo += int64(len(ids))
	cont := false
	for len(ids) > 0 {
		c := l.room(len(ids))
		n := min(len(ids), cap(*c)-len(*c))
		for _, id := range ids[:n] {
			*c = append(*c, Record{ID: id, Epoch: epoch, Cont: cont})
			cont = batch
		}
		ids = ids[n:]
	}
	return base
}

// BatchEnd is the end of the batch holding offset from (the offset past its last record), at
// most to (from < to ≤ LEO).
func (l *Log) BatchEnd(from, to int64) int64 {
	o := from + 1
	for o < to {
		if r, _ := l.At(o); !r.Cont {
			break
		}
		o++
	}
	return o
}

// BatchStart is the offset of the first record of the batch holding offset o (o itself when a
// batch starts there), not below the log start: where LogSegment.read begins a read at o
// (translateOffset finds the first batch whose last offset is at or past o, and the read starts
// at that batch's position). o must be in [log start, LEO).
func (l *Log) BatchStart(o int64) int64 {
	for o > l.start {
		if r, _ := l.At(o); !r.Cont {
			break
		}
		o--
	}
	return o
}

// NextRecord is the first offset at or after o holding a record (not a Gap), or the LEO.
func (l *Log) NextRecord(o int64) int64 {
	leo := l.LogEndOffset()
	for o < leo {
		if r, _ := l.At(o); !r.Gap {
			break
		}
		o++
	}
	return o
}

// RecordsEnd is the end of the log's records: the LEO, less the Gap offsets before it (a
// truncation inside a batch that nothing was appended after).
func (l *Log) RecordsEnd() int64 {
	o := l.LogEndOffset()
	for o > l.start {
		if r, _ := l.At(o - 1); !r.Gap {
			break
		}
		o--
	}
	return o
}

// AppendGap appends n Gap offsets (a follower copying the leader's gap: the batch it fetched
// starts past its fetch offset). The epoch cache is not told: no batch starts there.
func (l *Log) AppendGap(n int64) {
	l.leo += n
	for n > 0 {
		c := l.room(int(n))
		k := min(n, int64(cap(*c)-len(*c)))
		for range k {
			*c = append(*c, Record{Gap: true})
		}
		n -= k
	}
}

// WholeBatchesEnd is the end of the whole batches among the records [from, to): to if the
// record at to starts a batch (or to is the LEO), else the start of the batch holding it, but
// not below from.
func (l *Log) WholeBatchesEnd(from, to int64) int64 {
	for to > from {
		if r, ok := l.At(to); !ok || !r.Cont {
			break
		}
		to--
	}
	return to
}

// FindBatch returns the offset of the run of records whose ids are ids (a batch appended
// before), scanning back from the log end to the log start; ok is false unless the whole run is
// there. Only an idempotent producer's retry asks (rare), so a scan costs nothing on a steady load.
func (l *Log) FindBatch(ids []int64) (base int64, ok bool) {
	if len(ids) == 0 {
		return -1, false
	}
	for o := l.LogEndOffset() - 1; o >= l.start; o-- {
		if r, _ := l.At(o); r.ID != ids[0] {
			continue
		}
		for i, id := range ids {
			if r, in := l.At(o + int64(i)); !in || r.ID != id {
				return -1, false // a record id is unique: the batch is there only in part
			}
		}
		return o, true
	}
	return -1, false
}

// AppendAsFollower appends records copied from the leader, keeping their epochs; the epoch cache
// is assigned per batch (here, per run of one epoch).
func (l *Log) AppendAsFollower(recs []Record) { l.appendAsFollower(recs, false) }

// AppendAsFollowerOnlyNewerEpochs is AppendAsFollower under 0.11.0.2's
// LeaderEpochFileCache.assign: a batch's epoch enters the cache only above the latest epoch, at
// or after its start (EpochCache.AssignIfNewer); an older one leaves the cache as it is.
func (l *Log) AppendAsFollowerOnlyNewerEpochs(recs []Record) { l.appendAsFollower(recs, true) }

func (l *Log) appendAsFollower(recs []Record, onlyNewer bool) {
	leo := l.LogEndOffset()
	prev := -1 // the last record before r that is not a Gap (a Gap starts no batch)
	for i, r := range recs {
		if r.Gap {
			continue
		}
		first := prev < 0 || recs[prev].Epoch != r.Epoch
		prev = i
		if first {
			if onlyNewer {
				l.cache.AssignIfNewer(r.Epoch, leo+int64(i))
			} else {
				l.cache.Assign(r.Epoch, leo+int64(i))
			}
		}
	}
	l.leo += int64(len(recs))
	for len(recs) > 0 {
		c := l.room(len(recs))
		n := min(len(recs), cap(*c)-len(*c))
		*c = append(*c, recs[:n]...)
		recs = recs[n:]
	}
}

// TruncateTo cuts the log at offset t (UnifiedLog.truncateTo). At or past the end it only trims
// epoch-cache entries that start at or after the LEO (an epoch a former leader began but never
// wrote). It returns the records removed: from t, or from the start of the batch holding t.
//
// Kafka's LogSegment.truncateTo(t) (0.11.0.2 to 3.7.0) cuts the segment file at the position
// translateOffset(t) gives, the start of the first batch whose last offset is at or past t, and
// Log.truncateTo then sets the log end offset to t (updateLogEndOffset(targetOffset)): inside a
// batch, the whole batch goes, and the offsets from its start to t are left without records
// (Gap). The leader-epoch cache keeps the entries that start below t (clearAndFlushLatest(t)),
// the batch's epoch's included. In 0.10.2 (message format v1) every record is its own batch.
func (l *Log) TruncateTo(t int64) []Record {
	leo := l.LogEndOffset()
	if t >= leo {
		l.cache.TruncateFromEnd(leo)
		return nil
	}
	if t < l.start {
		// Below the first offset held: empty the log and start it at t, as Kafka does.
		cut := l.copyOut(l.start, leo)
		l.TruncateFullyAndStartAt(t)
		return cut
	}
	from := t // the first offset whose record goes
	if r, _ := l.At(t); r.Cont {
		from = l.BatchStart(t)
	}
	cut := l.copyOut(from, leo)
	if t == l.start {
		clear(l.chunks)
		l.chunks = l.chunks[:0] // emptied, not nil: the log was written
	} else {
		k := l.chunkOf(t - 1) // the last chunk kept
		clear(l.chunks[k+1:])
		l.chunks = l.chunks[:k+1]
		// Capped at its length, so that the next append copies it: records that fetch responses
		// in flight still point at are never overwritten.
		i := l.index(k, t-1) + 1
		l.chunks[k] = l.chunks[k][:i:i]
		if from < t {
			l.gapOut(from, t)
		}
	}
	l.leo = t
	l.cache.TruncateFromEnd(t)
	if l.hw > t {
		l.hw = t
	}
	// Log.truncateTo: recoveryPoint = min(targetOffset, recoveryPoint) (0.10.2.2 to 2.1.1;
	// LocalLog.updateLogEndOffset, 3.7.0).
	l.flushed = min(l.flushed, t)
	l.durable = min(l.durable, t)
	return cut
}

// gapOut turns the records in [from, to) (below the LEO) into Gap offsets, in copies of their
// chunks: a slice Read returned may still point at the old ones.
func (l *Log) gapOut(from, to int64) {
	for o := from; o < to; {
		k := l.chunkOf(o)
		c := slices.Clone(l.chunks[k])
		i := l.index(k, o)
		n := min(int64(len(c))-i, to-o)
		for j := range n {
			c[i+j] = Record{Gap: true}
		}
		l.chunks[k] = c[:len(c):len(c)]
		o += n
	}
}

// KeepHighWatermark sets the HW to hw as it is, even above the LEO: before Kafka 2.4 a truncation
// left a follower's HW as it was (Replica.highWatermark lived outside the Log) until its next
// fetch answer.
func (l *Log) KeepHighWatermark(hw int64) { l.hw = hw }

// TruncateFullyAndStartAt empties the log and moves its start to o (a follower far behind the
// leader's log start). The recovery point becomes min(o, recovery point) in every era
// (Log.truncateFullyAndStartAt: `this.recoveryPoint = math.min(newOffset, this.recoveryPoint)`,
// 0.10.2.2, 0.11.0.2, 2.1.1; LocalLog.updateLogEndOffset, 3.7.0): a log that had flushed less
// than o keeps its recovery point below its new start, so the next append may flush at once
// (unflushedMessages counts from it). Nothing of the log is left to lose: durable is o.
func (l *Log) TruncateFullyAndStartAt(o int64) {
	clear(l.chunks)
	l.chunks = nil
	l.start, l.leo = o, o
	l.hw = o
	l.flushed = min(l.flushed, o)
	l.durable = o
	l.cache.Clear()
}

// SetLogStartOffset raises the log start (retention or DeleteRecords on a leader; a follower
// taking the leader's). Records below it are dropped.
func (l *Log) SetLogStartOffset(o int64) {
	if o <= l.start {
		return
	}
	o = min(o, l.LogEndOffset())
	// The chunks wholly below o go; the one holding o starts at o. Past a full last chunk's
	// end, o is in none: every chunk goes, and the log stays written (not nil).
	k := l.chunkOf(o)
	if k < len(l.chunks) {
		i := l.index(k, o)
		clear(l.chunks[:k])
		l.chunks = l.chunks[k:]
		l.chunks[0] = l.chunks[0][i:]
	} else {
		clear(l.chunks)
		l.chunks = l.chunks[:0]
	}
	l.start = o
	l.hw = max(l.hw, o)
	l.flushed = max(l.flushed, o)
	l.durable = max(l.durable, o)
	l.cache.TruncateFromStart(o)
}

// Flush is UnifiedLog.flush(): the records from the recovery point to the LEO are fsync'd and
// the recovery point moves to the LEO. With the LEO at or below the recovery point nothing is
// written (`if (offset <= this.recoveryPoint) return`, 0.10.2.2 and 2.1.1 Log.flush; 3.7.0
// UnifiedLog.flush: `if (flushOffset > localLog.recoveryPoint)`): after a 2.1 restart, which set
// the recovery point to the LEO, the records the crash left in the page cache stay unflushed.
func (l *Log) Flush() {
	if l.leo <= l.flushed {
		return
	}
	l.flushed, l.durable = l.leo, l.leo
}

// UnflushedCount is Kafka's unflushedMessages, LEO − recovery point (what counts toward
// log.flush.interval.messages).
func (l *Log) UnflushedCount() int64 { return l.LogEndOffset() - l.flushed }

// LosePageCache drops every record past the durable end, as a power failure does, and returns
// the records lost.
func (l *Log) LosePageCache() []Record {
	return l.TruncateTo(l.durable)
}

// Recover prepares the log after a restart (LogLoader): epoch-cache entries at or beyond the
// recovered end are dropped at every start, clean or not (the Log constructor's
// clearAndFlushLatest(LEO), 0.11.0.2, and truncateFromEnd(LEO), 2.1.1; LogLoader.load, 3.7.0): so
// goes the entry a replica wrote at its LEO when made leader without appending (KAFKA-7415). The HW
// comes from the checkpoint, clamped to [log start, LEO] (Partition.getOrCreateReplica's
// min(checkpoint, LEO) before 2.4; UnifiedLog.updateHighWatermark, 3.7.0), and the recovery point
// is recoveryPoint (the era's rule: broker.Broker's recoveryPointAfterStart).
func (l *Log) Recover(checkpointHW, recoveryPoint int64) {
	// The log ends where its last record does (LogSegment.recover / nextOffset: the last batch's
	// nextOffset): a Gap a truncation left at the end is gone.
	if end := l.RecordsEnd(); end < l.LogEndOffset() {
		l.TruncateTo(end)
	}
	l.cache.TruncateFromEnd(l.LogEndOffset())
	l.SetHighWatermark(checkpointHW)
	l.flushed = recoveryPoint
}

// Records returns all records from the log start (a copy when they span chunks); nil if the log
// was never written since it was last emptied fully. The slice must not be modified.
func (l *Log) Records() []Record {
	switch len(l.chunks) {
	case 0:
		if l.chunks == nil {
			return nil
		}
		return []Record{}
	case 1:
		c := l.chunks[0]
		return c[:len(c):len(c)]
	}
	return l.copyOut(l.start, l.LogEndOffset())
}
