package engine

import "testing"

// Audit 15, the log layer (Log / UnifiedLog, LogManager, LeaderEpochFileCache, the checkpoints) by
// Kafka's history between the era tags. It found the engine's log layer as Kafka's; these tests
// pin the rules it checked that no other test held, each from the Kafka function named.

// TestAudit15StartTrimsEpochAtLogEnd: every log load trims the leader-epoch cache to the
// recovered log, clean shutdown or not: the Log constructor's
// `leaderEpochCache.foreach(_.truncateFromEnd(nextOffsetMetadata.messageOffset))` (2.1.1 Log.scala
// l.295, outside recoverLog, so also with the clean-shutdown marker; 3.7.0 LogLoader.load's
// `leaderEpochCache.ifPresent(_.truncateFromEnd(nextOffset))`). An entry at the LEO is one a
// replica wrote when made leader at a new epoch without appending (Partition.makeLeader's
// maybeAssignEpochStartOffset, KAFKA-7415): t-0 on [1,2] with 2 records; follower 2 is shut down
// (controlled) at 1000, and the controller's OfflineReplica bumps leader 1 to epoch 1 (ISR [1]),
// which writes (1, 2). Broker 1 is then shut down (its controlled shutdown cannot move the
// leadership and gives up) or killed, and restarted at 40000: at its start its cache is (0, 0)
// alone; the election that follows writes its new epoch at 2.
func TestAudit15StartTrimsEpochAtLogEnd(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		for _, stop := range []string{`{"do":"shutdown","broker":1}`, `{"do":"kill","broker":1}`} {
			t.Run(era+"/"+stop, func(t *testing.T) {
				e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
				b1, r1 := e.brokers[1], e.replicaOn(e.partitionOf(ktTopic, 0).pid, 1)
				runTo(t, e, 100)
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`)
				runTo(t, e, 1000)
				apply(t, e, `{"do":"shutdown","broker":2}`)
				runTo(t, e, 2000)
				if got := cacheString(r1.Log().Cache()); got != "(0,0) (1,2)" {
					t.Fatalf("broker 1's cache before it stops: %s, want (0,0) (1,2)", got)
				}
				apply(t, e, stop)
				runTo(t, e, 40000)
				if !b1.Dead() {
					t.Fatal("broker 1 has not stopped by 40000")
				}
				apply(t, e, `{"do":"restart","broker":1}`)
				if got := cacheString(r1.Log().Cache()); got != "(0,0)" {
					t.Fatalf("broker 1's cache at its start: %s, want (0,0)", got)
				}
				runTo(t, e, 41000)
				if ents, leo := r1.Log().Cache().Entries(), r1.Log().LogEndOffset(); leo != 2 || len(ents) != 2 || ents[1].StartOffset != 2 || ents[1].Epoch < 2 {
					t.Fatalf("broker 1 elected again: cache %s, LEO %d; want (0,0) and its new epoch (2 or more) at 2, LEO 2", cacheString(r1.Log().Cache()), leo)
				}
			})
		}
	}
}
