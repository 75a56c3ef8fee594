package engine

import (
	"testing"
)

// Audit of the follower side (fetcher threads, truncation, restarts) against each era's Kafka
// source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// fetchSendTimes returns the times broker from sent a Fetch to broker to, at or after since.
func fetchSendTimes(e *Engine, from, to int32, since int64) []int64 {
	var ts []int64
	for _, ev := range eventsOf(e.events, MsgFetch, func(ev Event) bool {
		return ev.Message.From == from && ev.Message.To == to && ev.T >= since
	}) {
		ts = append(ts, ev.T)
	}
	return ts
}

// TestAuditFetcherAwaitsBackoffWhenIdle: AbstractFetcherThread.maybeFetch (2.1.1 l.115-132,
// 3.7.0 l.113-131; 0.10.2.2 doWork) awaits partitionMapCond for replica.fetch.backoff.ms when it
// has no Fetch to send, and a delayed partition's DelayedItem expiring does not signal it. Broker 3
// shuts down, so leader 1's epoch goes to 1; the LeaderAndIsr reaches follower 2 at 1002 but the
// leader only at 1101 (a slow controller link). Follower 2 fetches with epoch 1 at 1004, gets
// UNKNOWN_LEADER_EPOCH at 1006 and delays t-0 until 2006; its next build forgets t-0 (a Fetch
// that forgets a partition is sent: RemoteLeaderEndPoint.buildFetch), answered at 1008; then
// nothing is ready and the thread awaits 1000 ms: it fetches again at 2008, not at 2006 (3.7;
// 2.1 runs without fetch sessions, whose incremental fetches it would not check).
func TestAuditFetcherAwaitsBackoffWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		era       string
		sessions  bool
		leoAt     int64   // follower 2 has the record from here (LEO 1), not a ms before
		wantFetch []int64 // follower 2's first Fetches since 1001
	}{
		{"3.7", true, 2010, []int64{1004, 1006, 2008, 2010}},
		// 2.1 without sessions (max.incremental.fetch.session.cache.slots 0): a 2.1.1 session
		// does not keep the leader epoch (KAFKA-9338, 2.5), so only a full Fetch is checked.
		// Nothing is ready after the error and a sessionless build sends nothing
		// (ReplicaFetcherThread.buildFetch: no partitions, none to forget): the thread awaits
		// 1000 ms from 1006 and fetches at 2006, when the delay has run out.
		{"2.1", false, 2008, []int64{1004, 2006}},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			if !tc.sessions {
				cfg["max.incremental.fetch.session.cache.slots"] = "0"
			}
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":0,"to":1,"latencyMs":100}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"shutdown","broker":3}`)
			runFor(t, e, 500)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			if err := e.RunUntil(tc.leoAt - 1); err != nil {
				t.Fatal(err)
			}
			if got := e.replicaOn(p.pid, 2).Log().LogEndOffset(); got != 0 {
				t.Errorf("follower 2's LEO at %d: %d, want 0", tc.leoAt-1, got)
			}
			runFor(t, e, 1)
			if got := e.replicaOn(p.pid, 2).Log().LogEndOffset(); got != 1 {
				t.Errorf("follower 2's LEO at %d: %d, want 1", tc.leoAt, got)
			}
			ts := fetchSendTimes(e, 2, 1, 1001)
			want := tc.wantFetch
			if len(ts) < len(want) {
				t.Fatalf("follower 2's Fetches since 1001 at %v, want them to begin %v", ts, want)
			}
			for i := range want {
				if ts[i] != want[i] {
					t.Fatalf("follower 2's Fetches since 1001 at %v, want them to begin %v", ts, want)
				}
			}
		})
	}
}

// TestAuditFailedFetchAwaitsBeforeDelaying: AbstractFetcherThread.processFetchRequest before 3.1
// (0.10.2.2 l.119-131, 0.11.0.2 l.150-163, 2.1.1 l.273-287) catches a failed Fetch, awaits
// partitionMapCond for fetchBackOffMs ("sleep a while"), and only then delays every partition by
// fetchBackOffMs (handlePartitionsWithErrors): "effectively doubling the delay". KAFKA-8529
// (3.1) removed the await, so 3.7.0 (l.318-326) only delays. Follower 2's link to leader 1 is cut
// while its Fetch is on the way; the Fetch times out after request.timeout.ms (30 s) and
// the link heals before the follower fetches again: the next Fetch leaves 2 s after the timeout
// before 3.1, 1 s after it in 3.7.
func TestAuditFailedFetchAwaitsBeforeDelaying(t *testing.T) {
	for _, tc := range []struct {
		era   string
		after int64
	}{{"0.10.2", 2000}, {"0.11.0", 2000}, {"2.1", 2000}, {"3.7", 1000}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 200)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 30800)
			apply(t, e, `{"do":"heal"}`)
			runFor(t, e, 3000)
			ts := fetchSendTimes(e, 2, 1, 1000)
			if len(ts) < 2 || ts[0] > 1010 {
				t.Fatalf("follower 2's Fetches since 1000 at %v; want the held one soon after 1000, then more", ts)
			}
			if want := ts[0] + 30000 + tc.after; ts[1] != want {
				t.Errorf("the Fetch after the one that timed out (sent %d) left at %d, want %d", ts[0], ts[1], want)
			}
		})
	}
}

// TestAuditNewEpochLeaderKeepsParkedFetch: Partition.makeLeader completes delayed requests only
// when the HW moved (2.1.1 l.418-420, 3.7.0 l.800-802: `if (leaderHWIncremented)
// tryCompleteDelayedRequests()`). Broker 3's controlled shutdown takes it out of the ISR at
// leader epoch 1 with the same leader 1 and no HW move, so follower 2's Fetch parked with epoch 0
// stays parked; the append at 1401 checks it (ReplicaManager's checkAndComplete after an append)
// and DelayedFetch.tryComplete's Case E answers FENCED_LEADER_EPOCH then, not at 1202. In 3.7
// the re-added partition (Fetching, epoch 1) takes the error and backs off
// (onPartitionFenced: a newer epoch, retry later): after the Fetch that forgets it, the thread
// awaits 1000 ms and fetches the record at 2404. In 2.1 the partition is Truncating, so the
// answer only frees the thread: OffsetsForLeaderEpoch at 1402, the record at 1406. 2.1 runs
// without fetch sessions: its incremental fetches carry no leader epoch to the purgatory.
func TestAuditNewEpochLeaderKeepsParkedFetch(t *testing.T) {
	for _, tc := range []struct {
		era    string
		leoAt2 int64
	}{{"2.1", 1406}, {"3.7", 2406}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			if tc.era == "2.1" {
				// Sessionless: a 2.1.1 fetch session keeps no leader epoch (KAFKA-9338, 2.5), so
				// only a full Fetch parks with one that Case E can fence.
				cfg["max.incremental.fetch.session.cache.slots"] = "0"
			}
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
			runFor(t, e, 1100)
			apply(t, e, `{"do":"shutdown","broker":3}`)
			runFor(t, e, 200)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 1)
			var fencedAt []int64
			for _, ev := range eventsOf(e.events, MsgFetchResponse, func(ev Event) bool {
				ps := ev.Message.FetchResponse.Partitions
				return ev.Message.To == 2 && len(ps) > 0 && ps[0].Error == ErrFencedLeaderEpoch
			}) {
				fencedAt = append(fencedAt, ev.T)
			}
			if len(fencedAt) != 1 || fencedAt[0] != 1401 {
				t.Fatalf("FENCED_LEADER_EPOCH answers to follower 2 at %v, want one, at 1401 (the append)", fencedAt)
			}
			if err := e.RunUntil(tc.leoAt2 - 1); err != nil {
				t.Fatal(err)
			}
			if got := e.replicaOn(p.pid, 2).Log().LogEndOffset(); got != 1 {
				t.Errorf("follower 2's LEO at %d: %d, want 1", tc.leoAt2-1, got)
			}
			runFor(t, e, 1)
			if got := e.replicaOn(p.pid, 2).Log().LogEndOffset(); got != 2 {
				t.Errorf("follower 2's LEO at %d: %d, want 2", tc.leoAt2, got)
			}
		})
	}
}

// TestAuditTruncationKeepsFollowerHWBefore24: before 2.4 a follower's HW was
// Replica.highWatermark, which LogManager.truncateTo does not touch (0.11.0.2
// ReplicaFetcherThread.maybeTruncate, 2.1.1 Partition.truncateTo): a truncation below the HW
// leaves it above the new LEO until the next fetch answer sets min(leader HW, LEO)
// (processPartitionData). 2.4.0's Log.updateLogEndOffset lowers it with the LEO (commit
// 7a7d4cb5819). Broker 2 (LEO 3, HW 3 checkpointed) returns after an unclean election made
// broker 3 (LEO 1) leader; it truncates to 1 at 28003, fetches at offset 1 and its Fetch waits
// replica.fetch.wait.max.ms at the leader: its HW stays 3 until 28505 before 2.4.
func TestAuditTruncationKeepsFollowerHWBefore24(t *testing.T) {
	for _, tc := range []struct {
		era string
		hw  int64 // at 28100
	}{{"0.11.0", 3}, {"2.1", 3}, {"3.7", 1}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			cfg["unclean.leader.election.enable"] = "true"
			cfg["zookeeper.session.timeout.ms"] = "6000"
			cfg["replica.lag.time.max.ms"] = "10000"
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":3,"to":1,"down":true}`)
			runFor(t, e, 200)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":1}`)
			runFor(t, e, 19800) // 21000: broker 3 left the ISR at 15000; broker 2's HW 3 checkpointed at 20000
			if r := e.replicaOn(p.pid, 2); r.Log().LogEndOffset() != 3 || r.HWCheckpoint() != 3 {
				t.Fatalf("broker 2 at 21000: LEO %d, HW checkpoint %d; want 3, 3", r.Log().LogEndOffset(), r.HWCheckpoint())
			}
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 500)
			apply(t, e, `{"do":"heal"}`)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 6500) // 28000: broker 3 leads (unclean, at 27500)
			if l := e.ctrl.Leader(p.pid); l != 3 {
				t.Fatalf("leader at 28000: %d, want 3", l)
			}
			apply(t, e, `{"do":"restart","broker":2}`)
			runFor(t, e, 100)
			r := e.replicaOn(p.pid, 2)
			if r.Log().LogEndOffset() != 1 || r.Log().HighWatermark() != tc.hw {
				t.Errorf("broker 2 at 28100: LEO %d, HW %d; want 1, %d", r.Log().LogEndOffset(), r.Log().HighWatermark(), tc.hw)
			}
			runFor(t, e, 500)
			if r.Log().LogEndOffset() != 1 || r.Log().HighWatermark() != 1 {
				t.Errorf("broker 2 at 28600: LEO %d, HW %d; want 1, 1", r.Log().LogEndOffset(), r.Log().HighWatermark())
			}
		})
	}
}

// TestAuditTruncationResetsFlushCount: a log flushes when unflushedMessages, LEO − recovery
// point, reaches log.flush.interval.messages (3.7.0 UnifiedLog.append l.932 with
// LocalLog.unflushedMessages l.164; 0.10.2.2 Log.append l.438, unflushedMessages l.837), and a
// truncation moves the LEO and caps the recovery point (LocalLog.updateLogEndOffset; 0.10.2.2
// Log.truncateTo l.895-896), so the count restarts from what is left. With the interval at 3,
// follower 3 holds two unflushed records past the flushed three when leader 1 dies; becoming
// follower of broker 2 it cuts them (to its HW before 0.11, by leader epoch after). One more
// record then leaves one unflushed, not three: a power loss takes it.
func TestAuditTruncationResetsFlushCount(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["auto.leader.rebalance.enable"] = "false"
			cfg["log.flush.interval.messages"] = "3"
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":3,"acks":-1}`)
			runFor(t, e, 600)
			apply(t, e, `{"do":"link","from":1,"to":2,"latencyMs":10000}`)
			runFor(t, e, 300)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":1}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 6400) // 7500: broker 2 leads since 7100
			r := e.replicaOn(p.pid, 3)
			if l := e.ctrl.Leader(p.pid); l != 2 || r.Log().LogEndOffset() != 3 {
				t.Fatalf("at 7500: leader %d, follower 3's LEO %d; want 2, 3", l, r.Log().LogEndOffset())
			}
			runFor(t, e, 500)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 1000)
			if got := r.Log().LogEndOffset(); got != 4 {
				t.Fatalf("follower 3's LEO at 9000: %d, want 4", got)
			}
			apply(t, e, `{"do":"kill","broker":3,"loseUnflushed":true}`)
			if got := r.Log().LogEndOffset(); got != 3 {
				t.Errorf("follower 3's LEO after the power loss: %d, want 3 (the record after the truncation was not flushed)", got)
			}
		})
	}
}
