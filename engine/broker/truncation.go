package broker

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// The log's side of the truncation protocol: what a leader answers to OffsetsForLeaderEpoch and
// where a follower truncates given that answer (or a Fetch answer's divergingEpoch). Both read
// only the replica's own log.

// LastOffsetForLeaderEpoch is the leader's answer to OffsetsForLeaderEpoch(asked)
// (Partition.lastOffsetForLeaderEpoch): with namesEpoch (KIP-279, 2.0+) the cache's
// endOffsetFor, naming the epoch found; before it, 0.11.0.2's endOffsetFor, an offset only.
func LastOffsetForLeaderEpoch(log *commitlog.Log, asked int32, namesEpoch bool) (int32, int64) {
	if namesEpoch {
		return log.Cache().EndOffsetFor(asked, log.LogEndOffset())
	}
	// Before KIP-279, LeaderEpochFileCache.endOffsetFor of 0.11.0.2: the latest epoch → LEO (an
	// empty cache's latest is -1, so a follower asking with -1 gets the LEO: KAFKA-6857, fixed
	// after 0.11.0.2); an epoch below the first entry, or with none above it → UNDEFINED; otherwise
	// the start offset of the first epoch above the one asked for.
	entries := log.Cache().Entries()
	if asked == log.Cache().Latest() {
		return -1, log.LogEndOffset()
	}
	if len(entries) == 0 || asked < entries[0].Epoch {
		return -1, -1
	}
	for _, en := range entries {
		if en.Epoch > asked {
			return -1, en.StartOffset
		}
	}
	return -1, -1
}

// TruncationOffset is AbstractFetcherThread.getOffsetTruncationState: given the leader's answer
// (E, O), the offset to truncate to and whether truncation is finished (false: ask again about
// the new latest epoch).
func TruncationOffset(log *commitlog.Log, fetchOffset int64, leaderEpoch int32, leaderOffset int64) (int64, bool) {
	leo := log.LogEndOffset()
	switch {
	case leaderOffset == commitlog.Undefined:
		return fetchOffset, true
	case leaderEpoch == commitlog.Undefined:
		return min(leaderOffset, leo), true
	}
	e, o := log.Cache().EndOffsetFor(leaderEpoch, leo)
	switch {
	case e == commitlog.Undefined && o == commitlog.Undefined:
		return min(leaderOffset, leo), true
	case e != leaderEpoch:
		return min(o, leo), false
	default:
		return min(o, leaderOffset, leo), true
	}
}

// Truncate is Log.truncateTo on p, the broker's replica of pid, with what it tells the rest of
// the broker: the fetch sessions caching it, the trace, a HW it moved, and the checker (Host); a
// log start moved below puts it back on its fetcher thread's change list. A truncation at or past
// the log's end (every follower's first turn at a cluster's start) reads only the log's line of
// the Partition: the HW note is read when the HW moved.
func (rm *ReplicaManager) Truncate(h Host, pid int32, p *Partition, to int64, why string) {
	oldHW := p.log.HighWatermark()
	oldLEO, oldStart := p.log.LogEndOffset(), p.log.LogStartOffset()
	if to >= oldLEO && h.ReplicaRules().EndTruncationKeepsEpochCache {
		// Log.truncateTo before 2.7 (0.11.0.2 l.1378-1381, 2.1.1 l.1786-1788): "Truncating to
		// ... has no effect", returned before the leader-epoch cache is touched, so an entry
		// (epoch, LEO) this replica wrote when it was elected stays (KAFKA-10706 trims it).
		return
	}
	// Inside a batch the whole batch goes and the offsets from its start to `to` hold no
	// record (commitlog.Log.TruncateTo): the records that changed begin at the batch's start.
	changed := to
	if r, ok := p.log.At(to); ok && r.Cont {
		changed = p.log.BatchStart(to)
		why += fmt.Sprintf("; offset %d is inside the batch from offset %d, which goes whole (LogSegment.truncateTo): offsets %d..%d are left without records", to, changed, changed, to-1)
	}
	cut := p.log.TruncateTo(to)
	// The flush count is Kafka's unflushedMessages, LEO − recovery point, and the truncation
	// moved both (LocalLog.unflushedMessages and updateLogEndOffset, 3.7.0; Log.truncateTo
	// l.895-896 and unflushedMessages l.837, 0.10.2.2): the log keeps it.
	if p.log.HighWatermark() < oldHW && h.ReplicaRules().TruncationKeepsHW {
		// Before 2.4 LogManager.truncateTo cut the Log only: the follower's
		// Replica.highWatermark stays above its LEO until the next fetch answer sets it to
		// min(leader HW, LEO) (0.11.0.2 ReplicaFetcherThread.maybeTruncate, 2.1.1
		// Partition.truncateTo; 2.4.0's Log.updateLogEndOffset clamps it, commit 7a7d4cb5819).
		p.log.KeepHighWatermark(oldHW)
	}
	if p.log.HighWatermark() != oldHW {
		rm.noteHW(p)
	}
	if p.log.LogStartOffset() != oldStart {
		rm.fetchers.LogStartMoved(pid) // below the log start: the log starts anew at to, with or without records cut
	}
	if len(cut) == 0 && p.log.LogEndOffset() == oldLEO {
		return
	}
	// Records cut, or an empty log started anew below its old start (Kafka's truncateTo calls
	// truncateFullyAndStartAt when the target is below the first segment): its end moved.
	p.SessionsChanged()
	emitTruncated(h, pid, p, oldLEO, cut, why)
	if hw := p.log.HighWatermark(); hw != oldHW {
		h.HWChanged(p, oldHW, "truncation", -1)
	}
	h.LogCut(pid, changed)
}

// TruncateFullyAndStartAt empties p's log and starts it at offset (UnifiedLog
// .truncateFullyAndStartAt, which moves the high watermark to the new start).
func (rm *ReplicaManager) TruncateFullyAndStartAt(h Host, pid int32, p *Partition, offset int64, why string) {
	dropped := p.log.Records()
	oldLEO, oldHW := p.log.LogEndOffset(), p.log.HighWatermark()
	p.log.TruncateFullyAndStartAt(offset)
	rm.noteHW(p)
	p.SessionsChanged()
	rm.fetchers.LogStartMoved(pid)
	emitTruncated(h, pid, p, oldLEO, dropped, why)
	if hw := p.log.HighWatermark(); hw != oldHW {
		h.HWChanged(p, oldHW, "follower", -1)
	}
}

// SetFollowerHW applies the HW of a fetch answer to p, a follower: min(leader HW, own LEO); it
// may go down. The HW is confirmed once it comes from the current leadership.
func (rm *ReplicaManager) SetFollowerHW(h Host, pid int32, p *Partition, leaderHW int64) {
	old := p.log.HighWatermark()
	hw := p.log.SetHighWatermark(leaderHW)
	rm.noteHW(p) // also a HW the log start just raised (processPartitionData)
	if hw != old {
		h.HWChanged(p, old, "follower", -1)
	}
	if p.ConfirmHW() {
		h.HWConfirmed(p)
	}
}
