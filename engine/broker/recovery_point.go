package broker

// The log's recovery point across a restart, per era: LogManager's recovery-point-offset-checkpoint
// file, its kafka-recovery-point-checkpoint task, the clean-shutdown marker, and the recovery
// point a start gives each log (Log.recoverLog, 0.10.2.2 to 2.1.1; LogLoader.recoverLog, 3.7.0).
//
// A log has two flush marks (commitlog.Log): its recovery point, Kafka's own record of how far it
// flushed, from which log.flush.interval.messages counts and a restart's recovery starts; and its
// durable end, how far its records are on stable storage, which a power loss keeps. A flush moves
// both to the LEO. A restart sets the recovery point by the era's rule while the disk keeps what
// it had, so the two part: from the checkpoint the recovery point may be below the durable end
// (the next flush comes sooner), and 2.1's recoverLog puts it at the LEO, above the durable end,
// so that the records a crash left in the page cache are never flushed by Log.flush, which
// skips a log at its recovery point, not even at a clean shutdown (3.7.0's LogLoader says why it
// stopped doing that: "If we advanced the recovery point here, we could skip recovery for
// unflushed segments").
//
// Simplifications: one log directory per broker; no log segments, so no flush at a segment roll
// and no scheduled flush (log.flush.scheduler.interval.ms: never by default, not modelled), and
// recovery never finds a corrupt batch (a power loss cuts at the durable end exactly). The
// log-start-offset checkpoint is not modelled (the log start survives a restart as it is).

// RecoveryRule is the era's recovery point for a log after a start without the clean-shutdown
// marker (with it, every era starts the recovery point at the LEO: 0.10.2.2 recoverLog
// `this.recoveryPoint = activeSegment.nextOffset`; 3.7.0 LogLoader `(logEndOffset,
// logEndOffset)` when hadCleanShutdown).
type RecoveryRule uint8

const (
	// RecoveryFromCheckpoint: the checkpointed value as it is, even above the LEO after a
	// truncation the checkpoint did not see (0.10.2.2 and 0.11.0.2 Log.recoverLog recovers the
	// segments from it and leaves recoveryPoint as LogManager passed it).
	RecoveryFromCheckpoint RecoveryRule = iota
	// RecoveryAtLogEnd: the LEO (2.1.1 Log.recoverLog: `recoveryPoint =
	// activeSegment.readNextOffset` after recovering, clean shutdown or not; from 1.1, KAFKA-6324).
	RecoveryAtLogEnd
	// RecoveryCheckpointCapped: min(checkpoint, LEO) (3.7.0 LogLoader.recoverLog:
	// `(Math.min(recoveryPointCheckpoint, logEndOffset), logEndOffset)`; from 3.0, KAFKA-10101:
	// "Don't advance recovery point in recoverLog unless there was a clean shutdown").
	RecoveryCheckpointCapped
)

// InitialTaskDelayMs is LogManager.InitialTaskDelayMs: its tasks, the recovery-point checkpoint
// among them, first run 30 s after LogManager.startup (0.10.2.2, 0.11.0.2, 2.1.1 and 3.7.0 alike),
// then every log.flush.offset.checkpoint.interval.ms.
const InitialTaskDelayMs = 30000

// recoveryPoints is what LogManager keeps of the broker's log directory.
type recoveryPoints struct {
	// checkpoint is the recovery-point-offset-checkpoint file, by replica slot; nil before the
	// first write (a log missing from the file recovers from 0: `recoveryPoints.getOrElse(
	// topicPartition, 0L)`).
	checkpoint []int64
	// cleanShutdown is the .kafka_cleanshutdown marker, written at the end of LogManager.shutdown
	// and deleted when the next start has loaded the logs.
	cleanShutdown bool
	// moved are the slots whose recovery point may differ from the checkpoint (noted marks
	// them, a bit per slot): a checkpoint writes every log's recovery point, and the others
	// already hold theirs.
	moved []int32
	noted []uint64
}

// noteRecoveryPoint puts p on the list of recovery points moved since the last checkpoint.
func (b *Broker) noteRecoveryPoint(p *Partition) {
	b.noteSlot(b.index.slot(p.pid, b.id))
}

func (b *Broker) noteSlot(slot int32) {
	rp := &b.recovery
	if slot < 0 {
		return
	}
	if rp.noted == nil {
		rp.noted = make([]uint64, (len(b.replicas)+63)/64)
	}
	if w, bit := slot/64, uint64(1)<<(slot%64); rp.noted[w]&bit == 0 {
		rp.noted[w] |= bit
		rp.moved = append(rp.moved, slot)
	}
}

// CheckpointLogRecoveryOffsets is LogManager.checkpointLogRecoveryOffsets: every log's recovery
// point is written to the recovery-point-offset-checkpoint file of its directory, if the
// directory is online (liveLogDirs, 2.1.1 and 3.7.0; before KIP-112 a failed directory halts the
// broker, so no checkpoint follows one).
func (b *Broker) CheckpointLogRecoveryOffsets() {
	rp := &b.recovery
	if b.diskFailed {
		return
	}
	if rp.checkpoint == nil && len(rp.moved) > 0 {
		rp.checkpoint = make([]int64, len(b.replicas))
	}
	for _, slot := range rp.moved {
		rp.checkpoint[slot] = b.replicas[slot].log.RecoveryPoint()
		rp.noted[slot/64] &^= uint64(1) << (slot % 64)
	}
	rp.moved = rp.moved[:0]
}

// RecoveryPointCheckpoint is LogManager's kafka-recovery-point-checkpoint task, scheduled by
// LogManager.startup with InitialTaskDelayMs and then every
// log.flush.offset.checkpoint.interval.ms.
func (b *Broker) RecoveryPointCheckpoint() {
	b.CheckpointLogRecoveryOffsets()
	b.ScheduleRecoveryPointCheckpoint(b.Now() + max(1, b.ProcessRules().FlushOffsetCheckpointIntervalMs))
}

// RecoveryPointCheckpointAt is the recovery point the checkpoint file holds for pid's replica.
func (b *Broker) RecoveryPointCheckpointAt(pid int32) int64 {
	slot := b.index.slot(pid, b.id)
	if slot < 0 || b.recovery.checkpoint == nil {
		return 0
	}
	return b.recovery.checkpoint[slot]
}

// logTruncated follows a truncation of p's log through LogManager.truncateTo (truncated: records
// were cut) or LogManager.truncateFullyAndStartAt (truncated): both write the recovery-point
// checkpoint after, truncateTo in 0.10.2 and 0.11.0 even with nothing cut. oldRP is the log's
// recovery point before.
func (b *Broker) logTruncated(p *Partition, truncated bool, oldRP int64) {
	if p.log.RecoveryPoint() != oldRP {
		b.noteRecoveryPoint(p)
	}
	if truncated || b.ProcessRules().CheckpointAtEveryTruncation {
		b.CheckpointLogRecoveryOffsets()
	}
}

// recoverLogs is the recovery-point part of LogManager.loadLogs at a start: each log's recovery
// point by the era's rule (recoveryPointAfterStart), and the marker deleted. A log whose recovery
// point now differs from the checkpoint goes on the moved list (the next checkpoint writes every
// log's, the others' unchanged).
func (b *Broker) recoverLogs() {
	rules := b.ProcessRules()
	for i := range b.replicas {
		r := &b.replicas[i]
		rp := b.recoveryPointAfterStart(int32(i), &rules)
		r.Log().Recover(r.HWCheckpoint(), rp)
		if rp != b.RecoveryPointCheckpointAt(r.pid) {
			b.noteSlot(int32(i))
		}
	}
	b.recovery.cleanShutdown = false
}

// recoveryPointAfterStart is the recovery point of the log in slot after a start.
func (b *Broker) recoveryPointAfterStart(slot int32, rules *ProcessRules) int64 {
	log := b.replicas[slot].Log()
	leo := log.LogEndOffset()
	if b.recovery.cleanShutdown {
		return leo
	}
	var cp int64
	if b.recovery.checkpoint != nil {
		cp = b.recovery.checkpoint[slot]
	}
	switch rules.Recovery {
	case RecoveryAtLogEnd:
		return leo
	case RecoveryCheckpointCapped:
		return min(cp, leo)
	}
	return cp
}

// closeLogs is LogManager.shutdown: every log of an online directory is flushed (Log.flush,
// which writes nothing for a log at its recovery point), the recovery points are checkpointed and
// the clean-shutdown marker is written. A failed directory's logs are neither flushed nor marked
// (`for (dir <- liveLogDirs)`, 2.1.1 and 3.7.0): its next start recovers them from the old
// checkpoint.
func (b *Broker) closeLogs() {
	if b.diskFailed {
		return
	}
	for i := range b.replicas {
		r := &b.replicas[i]
		if r.Log().UnflushedCount() > 0 {
			r.Log().Flush()
			b.noteSlot(int32(i))
		}
	}
	b.CheckpointLogRecoveryOffsets()
	b.recovery.cleanShutdown = true
}

// FailedStart is a start refused at the ZooKeeper registration (NodeExists): KafkaServer.startup
// had built the LogManager, loading and recovering every log, before it registered the broker,
// and its failure runs KafkaServer.shutdown ("Fatal error during KafkaServer startup. Prepare to
// shutdown", 0.10.2.2 to 3.7.0), whose LogManager.shutdown flushes the logs and writes the
// marker. The process then exits; the engine starts it again when the old session expired.
func (b *Broker) FailedStart() {
	b.diskFailed = false // as Startup: the restart brings the log directory back
	b.recoverLogs()
	b.closeLogs()
}
