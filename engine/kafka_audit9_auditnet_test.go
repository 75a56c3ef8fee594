package engine

import (
	"slices"
	"testing"
)

// Audit 9, the network and timeouts (isolate, heal, link), against each era's Kafka source (tags
// 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAuditZooKeeperIsrWriteBlocksUntilConnected: before 2.7 an isolated leader's shrink writes
// the ISR to ZooKeeper through a client that retries until connected (0.10.2.2/0.11.0.2
// ZkUtils.conditionalUpdatePersistentPath → ZkClient.writeDataReturnStat, retryUntilConnected
// with no operation timeout; 2.1.1 KafkaZkClient.conditionalUpdatePath →
// retryRequestsUntilConnected → ZooKeeperClient.waitUntilConnected), inside
// Partition.maybeShrinkIsr's inWriteLock(leaderIsrUpdateLock). So (a) a heal within the session
// lands the write with the cached zkVersion: the ISR shrinks at the heal and the HW follows;
// (b) a produce to the partition meanwhile waits for the lock (appendRecordsToLeader's
// inReadLock) and is appended and answered only at the heal, when the write fails the version
// check of the znode the controller rewrote after the session expired.
func TestAuditZooKeeperIsrWriteBlocksUntilConnected(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1"} {
		t.Run(era+"/heal-within-session", func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["replica.lag.time.max.ms"] = "2000" // checks every 1000 ms; the session is 6000
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 2900) // the followers last caught up at 503: out of sync at the 3000 check
			if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1, 2}) {
				t.Fatalf("ISR %v before the heal, want [0 1 2] (the write waits)", isr)
			}
			apply(t, e, `{"do":"heal","broker":1}`) // at 4000, before the session expires at 7000
			if isr, hw := e.ctrl.ISR(p.pid), e.replicaOn(p.pid, 1).Log().HighWatermark(); !slices.Equal(isr, []int32{1}) || hw != 1 {
				t.Fatalf("at the heal: ISR %v, leader HW %d; want [1] and 1 (the blocked write lands)", isr, hw)
			}
		})
		t.Run(era+"/produce-waits", func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["zookeeper.session.timeout.ms"] = "30000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 14000) // the 15000 check finds both followers out of sync: the write blocks
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 4000)
			if a, leo := e.client(p).Acked(), e.replicaOn(p.pid, 1).Log().LogEndOffset(); a != 1 || leo != 1 {
				t.Fatalf("at 20000: acked %d, zombie LEO %d; want 1 and 1 (the second produce waits)", a, leo)
			}
			runFor(t, e, 20000) // the session expired at 31000: broker 2 leads
			apply(t, e, `{"do":"heal","broker":1}`)
			if leo := e.replicaOn(p.pid, 1).Log().LogEndOffset(); leo != 2 {
				t.Fatalf("zombie LEO %d at the heal, want 2 (the waiting produce appended)", leo)
			}
			runFor(t, e, 1)
			if a := e.client(p).Acked(); a != 2 {
				t.Fatalf("acked %d after the heal, want 2", a)
			}
		})
	}
}

// TestAuditControllerRequestTimeout: the controller's channel to a broker times a request out
// after the broker's request.timeout.ms, not replica.socket.timeout.ms
// (ControllerChannelManager.addNewBroker builds its NetworkClient with config.requestTimeoutMs,
// 0.10.2.2 l.120, 3.7.0 l.161; controller.socket.timeout.ms bounds only awaitReady), and
// RequestSendThread sends again 100 ms after a failure (backoff). With replica.socket.timeout.ms
// 5000 and the controller's link to broker 2 cut, a LeaderAndIsr to broker 2 is sent once until
// 30000 ms after it left.
func TestAuditControllerRequestTimeout(t *testing.T) {
	for _, era := range []string{"0.10.2", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["replica.socket.timeout.ms"] = "5000"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":2,"down":true}`)
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":1}`)
			toBroker2 := func() []int64 {
				var at []int64
				for _, ev := range eventsOf(e.events, MsgLeaderAndIsr, nil) {
					if ev.Message.To == 2 {
						at = append(at, ev.T)
					}
				}
				return at
			}
			first := toBroker2()
			if len(first) != 1 || first[0] != 1000 {
				t.Fatalf("LeaderAndIsr to broker 2 sent at %v, want once at 1000", first)
			}
			runFor(t, e, 30000)
			if at := toBroker2(); len(at) != 1 {
				t.Fatalf("LeaderAndIsr to broker 2 sent at %v by 31000, want only at 1000 (request.timeout.ms 30000)", at)
			}
			runFor(t, e, 100)
			if at := toBroker2(); len(at) != 2 || at[1] != 31100 {
				t.Fatalf("LeaderAndIsr to broker 2 sent at %v, want again at 31100 (timeout, then 100 ms backoff)", at)
			}
		})
	}
}

// TestAuditFollowerFetchTimesOutAfterRequestTimeout: a follower's Fetch on an established
// connection times out after the broker's request.timeout.ms, its NetworkClient's request
// timeout (ReplicaFetcherThread's NetworkClient 0.10.2.2 l.104; ReplicaFetcherBlockingSend 2.1.1
// l.83; BrokerBlockingSender 3.7.0 l.93); replica.socket.timeout.ms bounds only awaitReady's
// connect. With replica.socket.timeout.ms 5000 and the follower's link to the leader cut, the
// Fetch sent at 1004 fails at 31004 and the next leaves one backoff later in 3.7 (32004), two
// before 3.1 (33004).
func TestAuditFollowerFetchTimesOutAfterRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		era  string
		next int64
	}{{"0.10.2", 33004}, {"2.1", 33004}, {"3.7", 32004}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.socket.timeout.ms"] = "5000"
			cfg["replica.fetch.backoff.ms"] = "1000"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
			runFor(t, e, 40000)
			var at []int64
			for _, ev := range eventsOf(e.events, MsgFetch, onBroker(1)) {
				if ev.T > 1000 {
					at = append(at, ev.T)
				}
			}
			if len(at) < 2 || at[0] != 1004 || at[1] != tc.next {
				t.Fatalf("follower's Fetches after the cut at %v, want 1004 then %d", at, tc.next)
			}
		})
	}
}

// TestAuditSlowLinkTimesOutFetch: a request whose answer takes longer than its request timeout
// fails at the timeout, on a slow link as on a cut one: NetworkClient.handleTimedOutRequests
// (0.10.2.2, 3.7.0) expires every request in flight longer than request.timeout.ms and closes the
// connection, so the late answer is dropped. With the leader's link to its follower at 40 s one
// way, the Fetch sent at 502 (answered at 1003, due at 41003) fails at 30502; the next leaves one
// backoff later in 3.7 (31502), two before 3.1 (32502), and its answer is late again.
func TestAuditSlowLinkTimesOutFetch(t *testing.T) {
	for _, tc := range []struct {
		era  string
		next int64
	}{{"0.10.2", 32502}, {"3.7", 31502}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":1,"latencyMs":40000}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 80000)
			var at []int64
			for _, ev := range eventsOf(e.events, MsgFetch, onBroker(1)) {
				if ev.T > 1000 {
					at = append(at, ev.T)
				}
			}
			if len(at) < 2 || at[0] != tc.next {
				t.Fatalf("follower's Fetches after the slow-down at %v, want the first at %d", at, tc.next)
			}
			if leo := e.replicaOn(p.pid, 1).Log().LogEndOffset(); leo != 0 {
				t.Fatalf("follower LEO %d at 82000, want 0 (every answer comes too late)", leo)
			}
		})
	}
}

// TestAuditFetcherShutdownAwaitsRequestBefore11: before 1.1 a LeaderAndIsr that leaves a fetcher
// thread idle stops it inside replicaStateChangeLock (0.10.2.2 ReplicaManager
// .becomeLeaderOrFollower l.652, shutdownIdleFetcherThreads l.710), and the thread, not
// interruptible and with its client open, finishes its request first: its answer or
// request.timeout.ms (KAFKA-6051 closes the client from 1.1). Broker 1 leads t-0 and is
// isolated; its followers' Fetches (sent at 502, answered at 1003 on the cut link) time out at
// 30502. At 7000 broker 0 leads t-0 at once, but its answer waits, so the controller's next
// LeaderAndIsr (an operator's election of t-1 to broker 0 at 10000) reaches broker 0 only after
// 30502: a produce to t-1 is refused until then. From 2.1 it is acknowledged at once.
func TestAuditFetcherShutdownAwaitsRequestBefore11(t *testing.T) {
	for _, tc := range []struct {
		era     string
		blocked bool
	}{{"0.10.2", true}, {"0.11.0", true}, {"2.1", false}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}, {2, 0, 1}}, eraCfg(tc.era))
			p1 := e.partitionOf(ktTopic, 1)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 9000)
			apply(t, e, `{"do":"elect","topic":"t","partition":1,"broker":0}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":1,"count":1,"acks":1}`)
			runFor(t, e, 9900)
			want := int64(1)
			if tc.blocked {
				want = 0
			}
			if a := e.client(p1).Acked(); a != want {
				t.Fatalf("t-1 acked %d at 20000, want %d", a, want)
			}
			runFor(t, e, 11000)
			if a := e.client(p1).Acked(); a != 1 {
				t.Fatalf("t-1 acked %d at 31000, want 1", a)
			}
		})
	}
}
