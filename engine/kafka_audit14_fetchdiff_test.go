package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Audit 14, fetch and log changes between the eras (AbstractFetcherThread, ReplicaFetcherThread,
// ReplicaManager, Log/UnifiedLog, LeaderEpochFileCache), against each era's Kafka source (tags
// 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka commit and function it follows;
// the grader files e01-e.. (testdata/grader) play the same rules through the CLI.

// fetchdiffStaleEpochSrc is the e01 run: t-0 on [1,2], leader 1. Before the 3.7 KAFKA-5692 rule
// the preferred election at 1000 re-elects 1 (epoch 1); the link 1 -> 2 is cut at 1500, so 1's
// acks=1 records 2-4 (epoch 1 in 2.1) never reach 2; the operator moves leadership to 2 (epoch
// 3 in 2.1: 2 writes (3, 2) into its epoch cache, then (4, 2) when the move back bumps it again)
// and back to 1 (epoch 5: 1's cache (0,0),(1,2),(5,5)). 1 never truncated: its requests to 2 sat
// on the cut link. After the heal, 2 asks OffsetsForLeaderEpoch(4), 1 answers (1, 5), and 2's
// cache, without epoch 1, maps it to (0, 2): an intermediate truncation to 2, its LEO.
func fetchdiffStaleEpochSrc(era string) string {
	return fmt.Sprintf(`{"name":"stale","brokers":3,"duration":21000,"config":{"inter.broker.protocol.version":%q},
	"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[
	{"at":100,"do":"produce","topic":"t","partition":0,"count":2},
	{"at":1000,"do":"elect","topic":"t","partition":0},
	{"at":1500,"do":"link","from":1,"to":2,"down":true},
	{"at":2000,"do":"produce","topic":"t","partition":0,"count":3,"acks":1},
	{"at":3000,"do":"elect","topic":"t","partition":0,"broker":2},
	{"at":5000,"do":"elect","topic":"t","partition":0,"broker":1},
	{"at":5500,"do":"link","from":1,"to":2,"latencyMs":1}]}`, era)
}

// TestAudit14EndTruncationKeepsEpochCacheBefore27: Log.truncateTo before 2.7 (0.11.0.2
// l.1378-1381, 2.1.1 l.1786-1788) returns "has no effect" for a target at or past the LEO
// without touching the leader-epoch cache; 2.7 (KAFKA-10706, bc96a8feb5d; 3.7.0
// UnifiedLog.truncateTo) calls leaderEpochCache.truncateFromEnd(logEndOffset) there too. The
// engine trimmed the cache in every era. In 2.1 a follower whose cache ends with the entry
// (epoch, LEO) it wrote when elected (Partition.makeLeader's maybeAssignEpochStartOffset, with
// no append after it) asks about that epoch again after every intermediate truncation
// (AbstractFetcherThread.getOffsetTruncationState: the leader's epoch unknown to it) and gets the
// same answer for ever: it never fetches, and the leader drops it from the ISR (2.1.1
// Partition.getOutOfSyncReplicas at the 20000 check, 10000 ms after the re-election at 5003).
// In 3.7 the truncation on the Fetch's divergingEpoch trims the entry and the follower catches up.
func TestAudit14EndTruncationKeepsEpochCacheBefore27(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			sc, err := ParseScenario([]byte(fetchdiffStaleEpochSrc(era)))
			if err != nil {
				t.Fatal(err)
			}
			e, _, err := Run(sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			view := e.Partition(0)
			r2, ok := view.ReplicaOn(2)
			if !ok {
				t.Fatal("no replica on broker 2")
			}
			leo2, cache2, isr := r2.LogEndOffset(), fmt.Sprint(r2.EpochCache()), fmt.Sprint(view.ISR())
			switch era {
			case "2.1":
				// Its cache keeps the stale (4, 2) that its asks name for ever.
				if leo2 != 2 || isr != "[1]" || cache2 != "[{0 0} {4 2}]" {
					t.Fatalf("2.1: follower 2 LEO %d, cache %s, ISR %s; want 2, [{0 0} {4 2}] and [1] (the truncation loop on the stale (4, 2) entry, Log.truncateTo before KAFKA-10706)", leo2, cache2, isr)
				}
			default:
				if leo2 != 5 || isr != "[1 2]" || cache2 != "[{0 0}]" {
					t.Fatalf("3.7: follower 2 LEO %d, cache %s, ISR %s; want 5, [{0 0}] and [1 2] (UnifiedLog.truncateTo trims the cache, KAFKA-10706)", leo2, cache2, isr)
				}
			}
		})
	}
}

// TestAudit14FetchBeforeNextTruncationRound: a fetcher thread's doWork is maybeTruncate() then
// maybeFetch() (AbstractFetcherThread.doWork, 0.11.0.2 l.101-113, 2.1.1 l.111-114, 3.7.0
// l.111-114): after an OffsetsForLeaderEpoch answer that leaves a partition Truncating (an
// intermediate round of KIP-279, getOffsetTruncationState's truncationCompleted false) the thread
// fetches its ready partitions, or, with none, awaits replica.fetch.backoff.ms
// (partitionMapCond.await in maybeFetch), before the next doWork asks again. The engine asked
// again as soon as the answer came. In the e01 run (2.1) follower 2's asks about its stale epoch
// 4 come one backoff (1000 ms) plus the round trip (2 ms) apart once the heal's retransmission
// (5608) has delivered the first answer. (The re-election's LeaderAndIsr reaches broker 2 at 5007:
// it waits in broker 2's queue behind the reassignment batch's UpdateMetadata and the
// reassignment's own, onPartitionReassignment's sendUpdateMetadataRequest: two round trips.
// 2.1.1's onPartitionReassignment also sends each replica an OnlineReplica batch first, not
// modelled: docs/simplifications.md.)
func TestAudit14FetchBeforeNextTruncationRound(t *testing.T) {
	sc, err := ParseScenario([]byte(fetchdiffStaleEpochSrc("2.1")))
	if err != nil {
		t.Fatal(err)
	}
	var asks []int64
	for _, line := range bytes.Split(traceJSONL(t, sc), []byte("\n")) {
		var ev struct {
			T       int64  `json:"t"`
			Type    string `json:"type"`
			Message struct {
				From int32 `json:"from"`
			} `json:"message"`
		}
		if len(line) == 0 {
			continue
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "offsets-for-leader-epoch" && ev.Message.From == 2 && ev.T > 5500 && ev.T < 10000 {
			asks = append(asks, ev.T)
		}
	}
	if fmt.Sprint(asks) != "[6609 7611 8613 9615]" {
		t.Fatalf("follower 2's OffsetsForLeaderEpoch asks between 5500 and 10000: %v; want [6609 7611 8613 9615] (maybeFetch's backoff between truncation rounds, AbstractFetcherThread.doWork)", asks)
	}
}

// TestAudit14EpochCacheAssignOnlyNewerBefore21: 0.11.0.2 LeaderEpochFileCache.assign appends an
// entry only when "epoch > latestEpoch && offset >= latestOffset" and otherwise only warns
// (validateAndMaybeWarn); KAFKA-7415 (f2dd6aa2698, 2.1.0; 2.1.1 and 3.7.0 assign →
// truncateAndAppend) removes the entries from the new epoch or start offset on and appends it.
// The engine used the 2.1 rule in every era. After KAFKA-6361's divergence (e02) follower 1
// keeps its epoch-1 records 11-15 and appends the leader's epoch-0 records 16-20: in 0.11.0 its
// cache stays (0,0),(1,11),(2,21), so as leader it answers OffsetsForLeaderEpoch(0) with 11
// (0.11.0.2 endOffsetFor: the first epoch above 0) and the restarted follower 2 refetches
// 11-20; under the 2.1 rule the cache is (0,16),(2,21), the answer 21, and 2 keeps its own
// epoch-0 records 11-20.
func TestAudit14EpochCacheAssignOnlyNewerBefore21(t *testing.T) {
	src, err := os.ReadFile("testdata/grader/e02-older-epoch-append-keeps-cache-0.11.0.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseScenario(src)
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("%v (0.11.0.2 LeaderEpochFileCache.assign keeps the cache for an older epoch)", res.Failures)
	}
	r1, _ := e.Partition(0).ReplicaOn(1)
	if got := fmt.Sprint(r1.EpochCache()); got != "[{0 0} {1 11} {2 21}]" {
		t.Fatalf("broker 1's epoch cache %s; want [{0 0} {1 11} {2 21}]", got)
	}
}

// TestAudit14IncrementalFetchNotFencedBefore25: 2.1.1's fetch session keeps no leader epoch
// (FetchSession.scala CachedPartition.reqData: `Optional.empty()`; updateRequestParams keeps only
// maxBytes, fetchOffset and logStartOffset), so an incremental fetch, and the DelayedFetch it
// parks, is read as if it carried none: never FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, only
// the full fetch that created the session is checked. KAFKA-9338 (faf46de5156, 2.5; 3.7.0
// CachedPartition.leaderEpoch) keeps it. The engine fenced incremental fetches in 2.1 too. In
// e03 (2.1) follower 1's Fetch parked across the leader's epoch bump is answered normally at its
// max wait while the follower is Truncating, so the session's HW is sent and ignored, and the
// follower's HW stays 2 until the next append; in 3.7 it is fenced and the follower learns HW 3.
func TestAudit14IncrementalFetchNotFencedBefore25(t *testing.T) {
	for _, f := range []string{"e03-incremental-fetch-unfenced-stale-follower-hw-2.1.json", "e03-incremental-fetch-fenced-follower-hw-3.7.json"} {
		t.Run(f, func(t *testing.T) {
			src, err := os.ReadFile("testdata/grader/" + f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ParseScenario(src)
			if err != nil {
				t.Fatal(err)
			}
			fenced := 0
			_, res, err := Run(sc, func(evs []Event) {
				for _, ev := range evs {
					if ev.Type != MsgFetchResponse || ev.Message == nil || ev.Message.To != 1 {
						continue
					}
					if ps := ev.Message.FetchResponse.Partitions; len(ps) > 0 && ps[0].Error == ErrFencedLeaderEpoch {
						fenced++
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() {
				t.Fatalf("%v (a 2.1.1 fetch session keeps no leader epoch, KAFKA-9338)", res.Failures)
			}
			want := 1 // 3.7: Case E at the HW move
			if strings.HasSuffix(f, "-2.1.json") {
				want = 0
			}
			if fenced != want {
				t.Errorf("FENCED_LEADER_EPOCH answers to follower 1: %d, want %d", fenced, want)
			}
		})
	}
}
