package engine

import (
	"slices"
	"testing"
)

// Audit 15, exact timing in steady and lightly disturbed replication, against each era's Kafka
// source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// runUntil moves the engine to time at.
func runUntil(t *testing.T, e *Engine, at int64) {
	t.Helper()
	if err := e.RunUntil(at); err != nil {
		t.Fatal(err)
	}
}

// TestAudit15ProduceTimesOutOnTheClient: the producer's NetworkClient gives up on a request in
// flight past its request.timeout.ms on its own clock (handleTimedOutRequests: now - sendTimeMs >
// requestTimeoutMs, in 0.10.2.2, 0.11.0.2, 2.1.1 and 3.7.0's InFlightRequests), and closes the
// connection, failing every request in flight on it (processDisconnection). An acks=all produce
// parked in the leader's purgatory times out there request.timeout.ms after it arrived (the
// request's timeoutMs is the producer's requestTimeoutMs: Sender.sendProduceRequest), and the
// REQUEST_TIMED_OUT answer still has the way back: the client has given up two latencies before
// it lands. The engine waited for that answer, so each produce failed on its own, 2 x latency
// late. Here (7 ms links, request.timeout.ms 2000, follower 2's Fetches held from 50) a produce
// to t-0 at 100 and one to t-1 at 600 both wait; the first's timeout at 2100 fails both at once.
// 0.10.2 (retries 0): both end NETWORK_EXCEPTION at 2100. 2.1 (retries until
// delivery.timeout.ms): both leave again retry.backoff.ms (100) later, at 2200, and the leader
// appends each a second time at 2207 (no idempotence). Grader t06 (2.1).
func TestAudit15ProduceTimesOutOnTheClient(t *testing.T) {
	for _, era := range []string{"0.10.2", "2.1"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["sim.network.latency.ms"] = "7"
			cfg["request.timeout.ms"] = "2000"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {0, 1, 2}}, cfg)
			p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
			runUntil(t, e, 50)
			apply(t, e, `{"do":"link","from":2,"to":0,"down":true}`)
			runUntil(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
			runUntil(t, e, 600)
			apply(t, e, `{"do":"produce","topic":"t","partition":1}`)
			runUntil(t, e, 2099)
			for i, op := range e.Produces() {
				if op.Done || op.Attempts != 1 {
					t.Fatalf("produce %d at 2099: done %v (%s), attempts %d; want its first attempt in flight", i, op.Done, op.Result, op.Attempts)
				}
			}
			if era == "0.10.2" {
				runUntil(t, e, 2100)
				for i, op := range e.Produces() {
					if !op.Done || op.Result != "NETWORK_EXCEPTION" {
						t.Fatalf("produce %d at 2100: done %v, result %q; want NETWORK_EXCEPTION at the first request's timeout (the connection closed)", i, op.Done, op.Result)
					}
				}
				return
			}
			runUntil(t, e, 2199)
			for i, op := range e.Produces() {
				if op.Attempts != 1 {
					t.Fatalf("produce %d at 2199: attempts %d; want the retry only at 2200", i, op.Attempts)
				}
			}
			runUntil(t, e, 2207)
			for i, p := range []*partition{p0, p1} {
				if op := e.Produces()[i]; op.Attempts != 2 {
					t.Fatalf("produce %d at 2207: attempts %d; want 2 (both failed at 2100, retried at 2200)", i, op.Attempts)
				}
				if leo := e.replicaOn(p.pid, 0).Log().LogEndOffset(); leo != 2 {
					t.Fatalf("t-%d leader's LEO at 2207: %d; want 2 (the retry appended again)", i, leo)
				}
			}
		})
	}
}

// TestAudit15IsrExpirationWalksAllPartitionsOrder: ReplicaManager.maybeShrinkIsr walks
// allPartitions, a kafka.utils.Pool over a java ConcurrentHashMap keyed by TopicPartition
// (0.10.2.2 to 3.7.0: allPartitions.values / .keys.foreach), so by bin: spread(hashCode) &
// (table size - 1), TopicPartition.hashCode = 31 * (31 + partition) + topic.hashCode(), the table
// 16 bins doubled when three quarters full (engine/broker's TestPoolOrder holds the order: for
// topic "t", hash 116, t-1 before t-0, t-5 down to t-0 then t-7, t-6 with 8 partitions). In 3.7 it
// decides which shrink's AlterPartition goes first (one in flight per broker,
// DefaultAlterPartitionManager): leader 1 of t-0 and t-1, both finding follower 3 out of sync at
// the 6000 run, asks for t-1 first (controller writes it at 6007 over a 7 ms link) and t-0 after
// that answer (6010), written at 6017. The engine walked pid order: t-0 at 6007, t-1 at 6017.
// Grader t08 (3.7).
func TestAudit15IsrExpirationWalksAllPartitionsOrder(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["sim.network.latency.ms"] = "3"
	cfg["replica.lag.time.max.ms"] = "3000"
	e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}, {1, 2, 3}}, cfg)
	p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
	apply(t, e, `{"do":"link","from":1,"to":0,"latencyMs":7}`)
	runUntil(t, e, 2100)
	apply(t, e, `{"do":"link","from":3,"to":1,"latencyMs":5000}`)
	runUntil(t, e, 2200)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
	apply(t, e, `{"do":"produce","topic":"t","partition":1,"acks":1}`)
	runUntil(t, e, 6020)
	changes := isrChangeTimes(e, p0.pid, p1.pid)
	if !slices.Equal(changes[p1.pid], []int64{6007}) || !slices.Equal(changes[p0.pid], []int64{6017}) {
		t.Fatalf("ISR changes: t-0 at %v, t-1 at %v; want t-1 at 6007 and t-0 at 6017 (t-1 walked first)", changes[p0.pid], changes[p1.pid])
	}
}
