package engine

import "testing"

// Audit 9, the leader side (acks=all completion, the HW, the ISR), against each era's Kafka
// source (tags 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAuditLogDirFailureLeavesProduceParked: ReplicaManager.handleLogDirFailure (2.1.1, 3.7.0)
// stops the fetchers and marks the partitions offline (markPartitionOffline, Partition.markOffline
// in 3.7.0), and completes no delayed operation. The controller elects elsewhere and sends the
// failed replica no LeaderAndIsr (it is not online), and stopReplicas ignores an offline
// partition, so nothing calls DelayedProduce.tryComplete again: an acks=all produce parked on the
// failed leader waits for its timeout: the producer's request.timeout.ms after it was sent,
// which comes before the leader's DelayedProduce (request.timeout.ms after it arrived) could
// answer (audit 15, produceTimedOut). It is not answered KAFKA_STORAGE_ERROR at once (which this
// producer would retry on the new leader). The era's producer (2.1.1, 3.7.0) retries the timeout
// (NETWORK_EXCEPTION in 2.1, REQUEST_TIMED_OUT in 3.7, both retriable: Sender.canRetry),
// retry.backoff.ms later (3.7: at once, the leader having changed, KIP-951) on the new leader, which
// acknowledges it (audit 10: until then this test wanted the produce to end REQUEST_TIMED_OUT,
// the engine's earlier client, not Kafka's).
func TestAuditLogDirFailureLeavesProduceParked(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg(era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			// The follower stops fetching: the HW stays. (Its link to the controller's broker 0 stays up:
			// a cut there would hold the log-dir probe batch's UpdateMetadata to broker 1 unanswered,
			// and the election's LeaderAndIsr behind it in broker 1's queue, RequestSendThread.)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`) // arrives at 2001
			runFor(t, e, 1000)
			apply(t, e, `{"do":"failDisk","broker":1}`)
			runFor(t, e, 2000)
			if l := e.ctrl.Leader(p.pid); l != 2 {
				t.Fatalf("leader %d after the disk failure, want 2", l)
			}
			op := e.Produces()[0]
			if op.Done || e.client(p).Acked() != 0 || e.replicaOn(p.pid, 2).Log().LogEndOffset() != 0 {
				t.Fatalf("2 s after the failure: done %v (%s), acked %d, new leader's LEO %d; want parked, 0, 0",
					op.Done, op.Result, e.client(p).Acked(), e.replicaOn(p.pid, 2).Log().LogEndOffset())
			}
			runFor(t, e, 31999-e.now) // sent at 2000: the producer gives up at 2000 + 30000
			if op := e.Produces()[0]; op.Done || op.Attempts != 1 {
				t.Fatalf("failed (%s) before its timeout", op.Result)
			}
			// The retry leaves retry.backoff.ms (100) after the timeout in 2.1, at once in 3.7,
			// whose producer sees that the leader changed (KIP-951).
			retry := map[string]int64{"2.1": 32100, "3.7": 32000}[era]
			runFor(t, e, retry-1-e.now)
			if op := e.Produces()[0]; op.Done || op.Attempts != 1 {
				t.Fatalf("at %d: done %v (%s), attempts %d; want the first attempt only", e.now, op.Done, op.Result, op.Attempts)
			}
			runFor(t, e, 1)
			if op := e.Produces()[0]; op.Attempts != 2 {
				t.Fatalf("at %d: attempts %d, want the retry sent after the producer's timeout at 32000", e.now, op.Attempts)
			}
			runFor(t, e, 1000)
			if op := e.Produces()[0]; op.Result != ResultAcked || op.BaseOffset != 0 || e.replicaOn(p.pid, 2).Log().LogEndOffset() != 1 {
				t.Fatalf("retry: %+v, new leader's LEO %d; want acknowledged by leader 2 at offset 0", op, e.replicaOn(p.pid, 2).Log().LogEndOffset())
			}
		})
	}
}

// TestAuditDeliveryTimeoutAtItsDeadline: a batch retried while its partition has no leader
// expires when delivery.timeout.ms has passed since it was created
// (ProducerBatch.hasReachedDeliveryTimeout, RecordAccumulator.expiredBatches; 2.1.1 to 3.7.0),
// not at the last retry before it (retry.backoff.ms earlier).
func TestAuditDeliveryTimeoutAtItsDeadline(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["delivery.timeout.ms"] = "10000"
	cfg["request.timeout.ms"] = "10000" // KafkaProducer.configureDeliveryTimeout: delivery ≥ linger + request
	cfg["unclean.leader.election.enable"] = "false"
	e := newKafkaEngine(t, 3, [][]int32{{1}}, cfg)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"kill","broker":1}`)
	runFor(t, e, 19000) // the session expires at 19000: no leader
	sent := e.Now()
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
	runFor(t, e, 9999)
	ops := e.Produces()
	if op := ops[len(ops)-1]; op.Done {
		t.Fatalf("at %d (%d ms after the send) the produce ended %q; want it still retrying until %d", e.Now(), e.Now()-sent, op.Result, sent+10000)
	}
	runFor(t, e, 1)
	ops = e.Produces()
	if op := ops[len(ops)-1]; !op.Done || op.Result != ErrDeliveryTimeout.String() {
		t.Fatalf("at %d: done %v, result %q; want %s at the delivery timeout", e.Now(), op.Done, op.Result, ErrDeliveryTimeout)
	}
}
