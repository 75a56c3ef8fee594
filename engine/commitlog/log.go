// Package commitlog models one replica's copy of a partition: Kafka's UnifiedLog reduced to what
// replication needs (records with their leader epochs, log start, log end, high watermark,
// recovery point) and its leader-epoch cache.
//
// Simplification: a record has no payload or size, only a unique id and the leader epoch of its
// batch. Every record counts as one byte-free unit; the engine decides what "bytes" mean.
package commitlog

import "slices"

// Record is one record of the log. ID is unique across the whole run, so two replicas that hold
// different records at one offset can be told apart.
type Record struct {
	ID    int64 `json:"id"`
	Epoch int32 `json:"epoch"`
}

// Log is one replica's log. Offsets are Kafka's: LEO and HW are exclusive.
type Log struct {
	// records[i] is at offset start+i.
	records []Record
	// start is the log start offset. Invariant: start ≤ hw ≤ LEO.
	start int64
	hw    int64
	// flushed is the recovery point: offsets below it are on stable storage and survive power loss.
	flushed int64
	cache   EpochCache
}

// LogEndOffset returns the offset the next record will get.
func (l *Log) LogEndOffset() int64 { return l.start + int64(len(l.records)) }

// LogStartOffset returns the first offset held.
func (l *Log) LogStartOffset() int64 { return l.start }

// HighWatermark returns the replica's local high watermark.
func (l *Log) HighWatermark() int64 { return l.hw }

// RecoveryPoint returns the offset below which records are flushed to disk.
func (l *Log) RecoveryPoint() int64 { return l.flushed }

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
	return l.records[o-l.start], true
}

// Read returns the records in [from, to). The result shares memory with the log but stays valid:
// truncation never writes into memory a returned slice can see.
func (l *Log) Read(from, to int64) []Record {
	from = max(from, l.start)
	to = min(to, l.LogEndOffset())
	if from >= to {
		return nil
	}
	return l.records[from-l.start : to-l.start : to-l.start]
}

// AppendAsLeader appends records stamped with epoch and returns the offset of the first one.
// The epoch cache learns the epoch if it is new.
func (l *Log) AppendAsLeader(epoch int32, ids []int64) int64 {
	base := l.LogEndOffset()
	l.cache.Assign(epoch, base)
	// One growth per batch at most: record by record, a young log's backing array would be
	// reallocated at 1, 2, 4 and 8 records.
	l.records = slices.Grow(l.records, len(ids))
	for _, id := range ids {
		l.records = append(l.records, Record{ID: id, Epoch: epoch})
	}
	return base
}

// AppendAsFollower appends records copied from the leader, keeping their epochs; the epoch cache
// is assigned per batch (here, per run of one epoch).
func (l *Log) AppendAsFollower(recs []Record) {
	leo := l.LogEndOffset()
	for i, r := range recs {
		if i == 0 || recs[i-1].Epoch != r.Epoch {
			l.cache.Assign(r.Epoch, leo+int64(i))
		}
	}
	l.records = append(l.records, recs...) // one growth per batch at most
}

// TruncateTo cuts the log at offset t (UnifiedLog.truncateTo). At or past the end it only trims
// epoch-cache entries that start at or after the LEO (an epoch a former leader began but never
// wrote). It returns the records removed.
func (l *Log) TruncateTo(t int64) []Record {
	leo := l.LogEndOffset()
	if t >= leo {
		l.cache.TruncateFromEnd(leo)
		return nil
	}
	if t < l.start {
		// Below the first offset held: empty the log and start it at t, as Kafka does.
		cut := append([]Record(nil), l.records...)
		l.TruncateFullyAndStartAt(t)
		return cut
	}
	cut := append([]Record(nil), l.records[t-l.start:]...)
	// The full slice expression caps the backing array so the next append copies: records that
	// fetch responses in flight still point at are never overwritten.
	l.records = l.records[: t-l.start : t-l.start]
	l.cache.TruncateFromEnd(t)
	if l.hw > t {
		l.hw = t
	}
	if l.flushed > t {
		l.flushed = t
	}
	return cut
}

// TruncateFullyAndStartAt empties the log and moves its start to o (a follower far behind the
// leader's log start).
func (l *Log) TruncateFullyAndStartAt(o int64) {
	l.records = nil
	l.start = o
	l.hw = o
	l.flushed = o
	l.cache.Clear()
}

// SetLogStartOffset raises the log start (retention or DeleteRecords on a leader; a follower
// taking the leader's). Records below it are dropped.
func (l *Log) SetLogStartOffset(o int64) {
	if o <= l.start {
		return
	}
	o = min(o, l.LogEndOffset())
	l.records = l.records[o-l.start:]
	l.start = o
	l.hw = max(l.hw, o)
	l.flushed = max(l.flushed, o)
	l.cache.TruncateFromStart(o)
}

// Flush marks every record as on stable storage.
func (l *Log) Flush() { l.flushed = l.LogEndOffset() }

// UnflushedCount returns how many records would be lost by a power failure now.
func (l *Log) UnflushedCount() int64 { return l.LogEndOffset() - l.flushed }

// LosePageCache drops every record past the recovery point, as a power failure does, and returns
// the records lost.
func (l *Log) LosePageCache() []Record {
	return l.TruncateTo(l.flushed)
}

// Recover prepares the log after a restart (LogLoader): epoch-cache entries at or beyond the
// recovered end are dropped and the HW comes from the checkpoint, clamped to [log start, LEO].
func (l *Log) Recover(checkpointHW int64) {
	l.cache.TruncateFromEnd(l.LogEndOffset())
	l.SetHighWatermark(checkpointHW)
}

// Records returns all records from the log start. The slice must not be modified.
func (l *Log) Records() []Record { return l.records[:len(l.records):len(l.records)] }
