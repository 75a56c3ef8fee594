package engine

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// Audit 14, ISR and high-watermark timing under slow followers, against each era's Kafka source
// (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows; the
// grader files i01-i05 (testdata/grader) play the same rules through the CLI.

// TestAudit14HWRecomputedAtEveryFollowerFetchBefore24: before 2.4 every follower fetch recomputes
// the leader's HW at the fetch's time: 0.10.2.2 l.286, 0.11.0.2 l.313 and 2.1.1 l.521
// Partition.maybeExpandIsr end with maybeIncrementLeaderHW(leaderReplica,
// logReadResult.fetchTimeMs), whatever the fetch moved, and a 2.1 fetch session reads every
// partition it caches. 2.4 (KAFKA-8841, f3ded39a055; 3.7.0 Partition.updateFollowerFetchState)
// recomputes it only when the fetch moved the follower's LEO. The two differ when a follower
// outside the ISR bounds the HW as caught up (maybeIncrementLeaderHW: now - lastCaughtUpTimeMs <=
// replica.lag.time.max.ms, 3.7's shouldWaitForReplicaToJoinIsr) and then stops counting without
// a fetch of its own: before 2.4 the next fetch of any follower raises the HW; from 2.4 nothing
// does until a fetch moves a LEO. The engine recomputed only on a move in every era.
//
// The i05 run: t-0 [0,1,2], replica.lag.time.max.ms 10000, the link 0 -> 2 takes 7000 ms, one
// acks=all record every 4000 ms from 100 to 20100 and one at 22100. Follower 2 is shrunk at
// 20000; its Fetch at 21104 sets its lastCaughtUpTimeMs to 14103, so its LEO 4 holds the HW at 6
// (record 6 appended at 22101) until 24103. Before 2.4 follower 1's first Fetch after that
// (24111) raises the HW to 7; in 3.7 it stays 6 until 2's Fetch at offset 7 (35106).
func TestAudit14HWRecomputedAtEveryFollowerFetchBefore24(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			at24800 := 7 // follower 1's first Fetch after 24103 (24111) raised it
			if era == "3.7" {
				at24800 = 6 // only follower 2's Fetch at offset 7 (35106) raises it
			}
			src := fmt.Sprintf(`{"name":"hw","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],
			"config":{"inter.broker.protocol.version":%q,"replica.lag.time.max.ms":10000},"steps":[
			{"at":0,"do":"link","from":0,"to":2,"latencyMs":7000},
			{"at":100,"do":"produce","topic":"t","partition":0},{"at":4100,"do":"produce","topic":"t","partition":0},
			{"at":8100,"do":"produce","topic":"t","partition":0},{"at":12100,"do":"produce","topic":"t","partition":0},
			{"at":16100,"do":"produce","topic":"t","partition":0},{"at":20100,"do":"produce","topic":"t","partition":0},
			{"at":22100,"do":"produce","topic":"t","partition":0},
			{"at":24000,"do":"expect","topic":"t","partition":0,"isr":[0,1],"replicas":{"0":{"leo":7,"hw":6},"2":{"leo":4}}},
			{"at":24800,"do":"expect","topic":"t","partition":0,"replicas":{"0":{"leo":7,"hw":%d},"2":{"leo":4}}},
			{"at":35000,"do":"expect","topic":"t","partition":0,"replicas":{"0":{"hw":%d},"2":{"leo":6}}},
			{"at":36000,"do":"expect","topic":"t","partition":0,"isr":[0,1,2],"replicas":{"0":{"hw":7}}}]}`, era, at24800, at24800)
			if _, res := runScenarioText(t, src); !res.OK() {
				t.Fatalf("%v (the HW is recomputed at every follower fetch before 2.4, KAFKA-8841)", res.Failures)
			}
		})
	}
}

// TestAudit14HWRecomputeDirtyReadsMatchReadingAll: in 2.1 follower 1's fetch session partition of
// i05 would be clean (follower at the LEO, in the ISR, HW unchanged) while follower 2, outside the
// ISR, bounds the HW as caught up; Kafka's leader reads it at every fetch anyway and so recomputes
// the HW (FetchSession.clean keeps it dirty meanwhile). The run that reads every session
// partition (ReadAll, as Kafka) gives the same trace and follower state, and the session check
// finds every clean partition quiet.
func TestAudit14HWRecomputeDirtyReadsMatchReadingAll(t *testing.T) {
	src, err := os.ReadFile("testdata/grader/i05-caught-up-outsider-holds-hw-2.1.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(src)
	if err != nil {
		t.Fatal(err)
	}
	dirty, dirtyFollowers := runWith(t, sc, func(e *Engine) {
		e.rules.LeaderFetch.Check = func(p string) { t.Error(p) }
	})
	all, allFollowers := runWith(t, sc, func(e *Engine) { e.rules.LeaderFetch.ReadAll = true })
	if !bytes.Equal(dirty, all) {
		t.Fatalf("the traces differ (first: dirty reads, second: every partition read); %s", firstDiff(dirty, all))
	}
	if dirtyFollowers != allFollowers {
		t.Fatalf("follower state differs:\n dirty reads:\n%s every partition read:\n%s", dirtyFollowers, allFollowers)
	}
}

// TestAudit14ReelectionResetsEveryFollowerFetchTimeBefore33: a leader staying on at a new leader
// epoch sets every follower's lastFetchTimeMs to now before 3.3 (Partition.makeLeader: 0.10.2.2
// l.184-187, 0.11.0.2 l.400-404, 2.1.1 l.402-405, Replica.resetLastCaughtUpTime(curLeaderLogEndOffset,
// curTimeMs, lastCaughtUpTimeMs) for every assigned replica), and from 3.3 only an ISR member's,
// the others' to 0 (3.7.0 Replica.resetReplicaState; a5f7c82a867). The engine had the 3.3 rule in
// every era. Grader i08: follower 2, shrunk and catching up over a 7000 ms link, sends a Fetch
// at the LEO the leader had at its re-election (24001, broker 3's OfflineReplica removal), so it
// counts as caught up from 24001 (lastCaughtUpTimeMs = lastFetchTimeMs) and holds the HW at 7
// until 34001; with the 3.3 rule it never counts and record 7 is acknowledged at once. (A 0.10.2
// follower does not restart its fetcher on the same-leader LeaderAndIsr; from 2.1 it does, and its
// older-epoch Fetch is fenced, so the case needs 0.10.2 or 0.11.0.)
func TestAudit14ReelectionResetsEveryFollowerFetchTimeBefore33(t *testing.T) {
	src, err := os.ReadFile("testdata/grader/i08-reelection-resets-fetch-time-outsider-holds-hw-0.10.2.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, res := runScenarioText(t, string(src)); !res.OK() {
		t.Fatalf("%v (Replica.resetLastCaughtUpTime sets every follower's lastFetchTimeMs before 3.3)", res.Failures)
	}
}

// TestAudit14FailedFollowerReadForgetsPositionBefore24: before 2.4 the leader records every read of
// a follower, a failed one included (ReplicaManager.updateFollowerLogReadResults: 0.10.2.2 l.913,
// 2.1.1 l.1362, after readFromLocalLog turned the FencedLeaderEpoch, UnknownLeaderEpoch or
// OffsetOutOfRange exception into a LogReadResult with LogOffsetMetadata.UnknownOffsetMetadata,
// leaderLogEndOffset -1 and fetchTimeMs -1), so Replica.updateLogReadResult sets the follower's
// LEO, lastFetchLeaderLogEndOffset and lastFetchTimeMs to -1 (lastCaughtUpTimeMs stays, max with
// -1); from 2.4 (KAFKA-8400, 0e95c9f3a82; 3.7.0 ReplicaManager.updateFollowerFetchState: "Skipping
// update of fetch state for follower") a failed read changes nothing. The engine skipped it in
// every era. Leader 0 of t-0 [0,1,2] with 5 records; follower 1 fetches at 5, then at 9 (out of
// range): the leader forgets its LEO before 2.4. An ISR member at -1 holds the HW until its next
// good read: follower 2 reaching 5 leaves the HW at 0 before 2.4.
func TestAudit14FailedFollowerReadForgetsPositionBefore24(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, eraCfg(era))
			r := e.replicaOn(p.pid, 0)
			*r.Log() = logOf(t, "0-4/e0")
			ktLead(e, p, 0, 1, []int32{0, 1, 2}, 1)
			if d := followerFetch(e, p, 1, 5, 0); d.Error != ErrNone {
				t.Fatalf("fetch at 5: %v", d.Error)
			}
			if d := followerFetch(e, p, 1, 9, -1); d.Error != ErrOffsetOutOfRange {
				t.Fatalf("fetch at 9: %v, want OFFSET_OUT_OF_RANGE", d.Error)
			}
			wantLEO, wantHW := int64(-1), int64(0)
			if era == "3.7" {
				wantLEO, wantHW = 5, 5
			}
			if leo := r.Remote(1).LogEndOffset(); leo != wantLEO {
				t.Fatalf("leader's view of follower 1's LEO %d after its failed read, want %d (KAFKA-8400 in 2.4)", leo, wantLEO)
			}
			followerFetch(e, p, 2, 5, 0)
			if hw := r.Log().HighWatermark(); hw != wantHW {
				t.Fatalf("HW %d after follower 2 reached 5, want %d", hw, wantHW)
			}
		})
	}
}
