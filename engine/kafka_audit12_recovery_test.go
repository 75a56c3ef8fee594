package engine

import (
	"fmt"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Audit 12, a log's recovery point and a broker's restart recovery against each era's Kafka
// source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0): LogManager's recovery-point checkpoint, the
// clean-shutdown marker, Log.recoverLog / LogLoader.recoverLog, Log.flush and
// Log.truncateFullyAndStartAt (package broker's recovery_point.go). Each test names the Kafka
// function it follows.

var audit12Eras = []string{"0.10.2", "0.11.0", "2.1", "3.7"}

// runTo runs e until the absolute time ms.
func runTo(t *testing.T, e *Engine, ms int64) {
	t.Helper()
	if err := e.RunUntil(ms); err != nil {
		t.Fatal(err)
	}
}

// threeRecordsOnFollower2 is several tests' start: t-0 on [1,2] in era, three acks=all records at
// 100, run to 1000. It returns the engine and follower 2's replica.
func threeRecordsOnFollower2(t *testing.T, era string) (*Engine, *replica) {
	t.Helper()
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
	r2 := e.replicaOn(e.partitionOf(ktTopic, 0).pid, 2)
	runTo(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":3}`)
	runTo(t, e, 1000)
	return e, r2
}

// TestAudit12RecoveryPointCheckpointTask: LogManager.startup schedules the
// kafka-recovery-point-checkpoint task (checkpointLogRecoveryOffsets / checkpointRecoveryPointOffsets)
// with InitialTaskDelayMs, 30 s, then every log.flush.offset.checkpoint.interval.ms (60000), in
// every era; a restart after a crash takes each log's recovery point by its era's rule
// (0.10.2.2 and 0.11.0.2 Log.recoverLog: the checkpoint's; 2.1.1 Log.recoverLog: the LEO; 3.7.0
// LogLoader.recoverLog: min(checkpoint, LEO)), and Log.append flushes when LEO − recovery point
// reaches log.flush.interval.messages. t-0 on [1,2], log.flush.interval.messages 4: 4 records at
// 100 (flushed on both: recovery point 4), 2 at 200 (LEO 6, not flushed). Follower 2 crashes
// (no power loss) before the first checkpoint (20000: the file holds 0) or after it (31000: it
// holds 4), restarts 20 s later (its session expired: no NodeExists), takes one more record 2 s
// after (LEO 7) and loses power 1 s after that. The engine kept the recovery point across the
// crash (4 in every era), so the record never flushed and the power loss left LEO 4.
func TestAudit12RecoveryPointCheckpointTask(t *testing.T) {
	for _, era := range audit12Eras {
		for _, crash := range []int64{20000, 31000} {
			t.Run(fmt.Sprintf("%s/crash at %d", era, crash), func(t *testing.T) {
				cfg := eraCfg(era)
				cfg["log.flush.interval.messages"] = "4"
				e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
				pid := e.partitionOf(ktTopic, 0).pid
				b2, r2 := e.brokers[2], e.replicaOn(pid, 2)
				runTo(t, e, 100)
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":4}`)
				runTo(t, e, 200)
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`)
				runTo(t, e, min(crash, 29999))
				if cp, rp, leo := b2.RecoveryPointCheckpointAt(pid), r2.Log().RecoveryPoint(), r2.Log().LogEndOffset(); cp != 0 || rp != 4 || leo != 6 {
					t.Fatalf("at %d: checkpoint %d, recovery point %d, LEO %d; want 0, 4, 6 (the task first runs at 30000)", e.now, cp, rp, leo)
				}
				if crash > 30000 {
					runTo(t, e, 30000)
					if cp := b2.RecoveryPointCheckpointAt(pid); cp != 4 {
						t.Fatalf("at 30000: checkpoint %d, want 4", cp)
					}
				}
				runTo(t, e, crash)
				apply(t, e, `{"do":"kill","broker":2}`)
				runTo(t, e, crash+20000)
				apply(t, e, `{"do":"restart","broker":2}`)
				cp := int64(0)
				if crash > 30000 {
					cp = 4
				}
				wantRP := map[string]int64{"0.10.2": cp, "0.11.0": cp, "2.1": 6, "3.7": cp}[era]
				if rp := r2.Log().RecoveryPoint(); b2.Dead() || rp != wantRP {
					t.Fatalf("after the restart: dead %v, recovery point %d; want running, %d", b2.Dead(), rp, wantRP)
				}
				runTo(t, e, crash+22000)
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
				runTo(t, e, crash+23000)
				if leo := r2.Log().LogEndOffset(); leo != 7 {
					t.Fatalf("broker 2's LEO %d before the power loss, want 7", leo)
				}
				apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
				want := int64(4) // 7 − recovery point below 4: not flushed
				if 7-wantRP >= 4 {
					want = 7
				}
				if leo := r2.Log().LogEndOffset(); leo != want {
					t.Fatalf("after the power loss: LEO %d, want %d (recovery point %d after the restart)", leo, want, wantRP)
				}
			})
		}
	}
}

// TestAudit12ShutdownAfterCrashFlushes: a controlled shutdown's LogManager.shutdown flushes
// every log (Log.flush), which writes nothing for a log at its recovery point (`if (offset <=
// this.recoveryPoint) return`, 0.10.2.2 and 2.1.1; UnifiedLog.flush, 3.7.0). After a crash,
// 2.1.1's Log.recoverLog put the recovery point at the LEO, so the records the crash left in the
// page cache are not flushed even by the clean shutdown, and a power loss after it loses them;
// the other eras restart from the checkpoint's recovery point (0: the task had not run), and
// the shutdown flushes them. t-0 on [1,2], 3 records at 100 (default flush: never); follower 2
// crashes at 1000, restarts at 21000 (its session expired at 19000), shuts down at 23000 and
// loses power at 25000. The engine flushed at the shutdown in every era (LEO 3).
func TestAudit12ShutdownAfterCrashFlushes(t *testing.T) {
	for _, era := range audit12Eras {
		t.Run(era, func(t *testing.T) {
			e, r2 := threeRecordsOnFollower2(t, era)
			apply(t, e, `{"do":"kill","broker":2}`)
			runTo(t, e, 21000)
			apply(t, e, `{"do":"restart","broker":2}`)
			runTo(t, e, 23000)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runTo(t, e, 25000)
			if !e.brokers[2].Dead() || r2.Log().LogEndOffset() != 3 {
				t.Fatalf("before the power loss: dead %v, LEO %d; want dead, 3", e.brokers[2].Dead(), r2.Log().LogEndOffset())
			}
			apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
			want := map[string]int64{"0.10.2": 3, "0.11.0": 3, "2.1": 0, "3.7": 3}[era]
			if leo := r2.Log().LogEndOffset(); leo != want {
				t.Fatalf("after the power loss: LEO %d, want %d", leo, want)
			}
		})
	}
}

// TestAudit12FailedStartFlushes: a start refused at the ZooKeeper registration (NodeExists, the
// old session alive: before broker epochs) had loaded the logs (the LogManager is built and
// started before the registration in KafkaServer.startup, 0.10.2.2 to 3.7.0) and goes through
// KafkaServer.shutdown, whose LogManager.shutdown flushes them: the records the crash left in the
// page cache become durable, except in 2.1, whose load put the recovery point at the LEO
// (Log.recoverLog) so that Log.flush writes nothing. t-0 on [1,2], 3 records at 100; follower 2
// crashes at 1000, is restarted at 2000 (refused) and loses power at 3000. The engine did not
// model the failed start's flush (LEO 0 in both).
func TestAudit12FailedStartFlushes(t *testing.T) {
	for _, era := range []string{"0.11.0", "2.1"} {
		t.Run(era, func(t *testing.T) {
			e, r2 := threeRecordsOnFollower2(t, era)
			apply(t, e, `{"do":"kill","broker":2}`)
			runTo(t, e, 2000)
			apply(t, e, `{"do":"restart","broker":2}`)
			if !e.brokers[2].startsOnExpiry {
				t.Fatal("the restart was not refused (NodeExists)")
			}
			runTo(t, e, 3000)
			apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
			want := map[string]int64{"0.11.0": 3, "2.1": 0}[era]
			if leo := r2.Log().LogEndOffset(); leo != want {
				t.Fatalf("after the power loss: LEO %d, want %d", leo, want)
			}
		})
	}
}

// TestAudit12OfflineDirNotFlushed: LogManager.shutdown flushes and closes only the logs of live
// directories (`for (dir <- liveLogDirs)`, 2.1.1 and 3.7.0), and checkpointLogRecoveryOffsets
// writes only theirs: a failed directory's logs are neither flushed nor checkpointed nor marked
// clean. t-0 on [1,2], 3 records at 100; follower 2's log directory fails at 1000, it shuts down
// at 2000 and loses power at 4000: nothing of its log was flushed. The engine flushed the
// offline logs at the shutdown (LEO 3).
func TestAudit12OfflineDirNotFlushed(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e, r2 := threeRecordsOnFollower2(t, era)
			apply(t, e, `{"do":"failDisk","broker":2}`)
			runTo(t, e, 2000)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runTo(t, e, 4000)
			if !e.brokers[2].Dead() || r2.Log().LogEndOffset() != 3 {
				t.Fatalf("before the power loss: dead %v, LEO %d; want dead, 3", e.brokers[2].Dead(), r2.Log().LogEndOffset())
			}
			apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
			if leo := r2.Log().LogEndOffset(); leo != 0 {
				t.Fatalf("after the power loss: LEO %d, want 0", leo)
			}
		})
	}
}

// TestAudit12TruncateFullyKeepsRecoveryPoint: Log.truncateFullyAndStartAt sets the recovery
// point to min(new start, recovery point) (0.10.2.2, 0.11.0.2, 2.1.1; 3.7.0
// LocalLog.updateLogEndOffset), not the new start: the empty log counts new start − recovery
// point as unflushed, and nothing of it is left to lose. The engine set it to the new start.
func TestAudit12TruncateFullyKeepsRecoveryPoint(t *testing.T) {
	var l commitlog.Log
	l.AppendAsLeader(0, []int64{1, 2})
	l.Flush()
	l.AppendAsLeader(0, []int64{3})
	l.TruncateFullyAndStartAt(10)
	if rp, d, un := l.RecoveryPoint(), l.Durable(), l.UnflushedCount(); rp != 2 || d != 10 || un != 8 {
		t.Fatalf("after truncateFullyAndStartAt(10): recovery point %d, durable %d, unflushed %d; want 2, 10, 8", rp, d, un)
	}
	l.AppendAsLeader(1, []int64{4})
	if got := l.LosePageCache(); len(got) != 1 || l.LogEndOffset() != 10 {
		t.Fatalf("a power loss lost %d records, LEO %d; want 1, 10", len(got), l.LogEndOffset())
	}
}

// TestAudit12TruncationWritesCheckpoint: LogManager.truncateTo writes the recovery-point
// checkpoint after every call in 0.10.2.2 and 0.11.0.2 (checkpointRecoveryPointOffsets, truncating
// or not), from 2.0 only when a log was truncated. t-0 on [1,2,3], log.flush.interval.messages 4:
// 4 records at 100 (flushed: recovery point 4), 2 at 200 (LEO 6). Leader 1 crashes at 1000; at
// its session's expiry (19000) broker 2 leads and broker 3 becomes its follower: 0.10.2's
// makeFollowers truncates it to its HW, 6 (nothing cut), and the checkpoint holds 4 from then;
// 3.7's follower truncates nothing, and the file still holds 0 (the task first runs at 30000).
// Broker 3 crashes at 20000, restarts at 40000 (recovery point 4 in 0.10.2, 0 in 3.7), takes a
// record at 42000 (LEO 7: 7 − 4 < 4 does not flush, 7 − 0 does) and loses power at 43000.
func TestAudit12TruncationWritesCheckpoint(t *testing.T) {
	for _, era := range []string{"0.10.2", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["log.flush.interval.messages"] = "4"
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			pid := e.partitionOf(ktTopic, 0).pid
			b3, r3 := e.brokers[3], e.replicaOn(pid, 3)
			runTo(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":4}`)
			runTo(t, e, 200)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`)
			runTo(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":1}`)
			runTo(t, e, 19500)
			wantCP := map[string]int64{"0.10.2": 4, "3.7": 0}[era]
			if cp := b3.RecoveryPointCheckpointAt(pid); cp != wantCP || e.ctrl.Leader(pid) != 2 {
				t.Fatalf("at 19500: broker 3's checkpoint %d, leader %d; want %d, 2", cp, e.ctrl.Leader(pid), wantCP)
			}
			runTo(t, e, 20000)
			apply(t, e, `{"do":"kill","broker":3}`)
			runTo(t, e, 40000)
			apply(t, e, `{"do":"restart","broker":3}`)
			runTo(t, e, 42000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			runTo(t, e, 43000)
			apply(t, e, `{"do":"kill","broker":3,"loseUnflushed":true}`)
			want := map[string]int64{"0.10.2": 4, "3.7": 7}[era]
			if leo := r3.Log().LogEndOffset(); leo != want {
				t.Fatalf("after the power loss: LEO %d, want %d", leo, want)
			}
		})
	}
}
