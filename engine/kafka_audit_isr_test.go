package engine

import (
	"slices"
	"testing"
)

// Audit of the produce gate and ISR rules against each era's Kafka source (tags 0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAuditMinIsrAboveReplicationFactor: before 3.7, Partition.appendRecordsToLeader compares the
// ISR with `log.config.minInSyncReplicas` as configured (0.10.2.2, 0.11.0.2, 2.1.1): with
// min.insync.replicas 3 on a topic of two replicas, every acks=all produce fails
// NOT_ENOUGH_REPLICAS. 3.7.0's Partition.effectiveMinIsr caps it at the replication factor
// (KAFKA-15583), so the same produce is acknowledged; acks=1 never checks it. 2.1's producer
// retries NOT_ENOUGH_REPLICAS (a RetriableException, Sender.canRetry) until delivery.timeout.ms
// (120 s), when the batch expires (audit 10; the engine's earlier client ended it at once).
func TestAuditMinIsrAboveReplicationFactor(t *testing.T) {
	for _, tc := range []struct{ era, all string }{
		{"0.10.2", "NOT_ENOUGH_REPLICAS"}, {"0.11.0", "NOT_ENOUGH_REPLICAS"}, {"2.1", "DELIVERY_TIMEOUT"}, {"3.7", ResultAcked},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["min.insync.replicas"] = "3"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 2000)
			if tc.era == "2.1" {
				if op := e.Produces()[0]; op.Done || op.Attempts < 2 {
					t.Fatalf("acks=all after 2 s: done %v (%s), attempts %d; want it still retrying", op.Done, op.Result, op.Attempts)
				}
				runFor(t, e, 120000)
				if got := e.replicaOn(e.partitionOf(ktTopic, 0).pid, 0).Log().LogEndOffset(); got != 1 {
					t.Fatalf("leader's LEO %d, want 1 (the acks=1 record only)", got)
				}
			}
			ops := e.Produces()
			if len(ops) != 2 || ops[0].Result != tc.all || ops[1].Result != ResultAcked {
				t.Fatalf("results %q, %q; want acks=all %q, acks=1 %q", ops[0].Result, ops[1].Result, tc.all, ResultAcked)
			}
			if got, want := e.Partition(e.partitionOf(ktTopic, 0).pid).MinISR(), map[bool]int{true: 2, false: 3}[tc.era == "3.7"]; got != want {
				t.Errorf("MinISR %d, want %d", got, want)
			}
		})
	}
}

// TestAuditIdleFollowerShrinkBefore21: Partition.getOutOfSyncReplicas before 2.1 (0.10.2.2,
// 0.11.0.2) takes out every ISR follower with `time.milliseconds - r.lastCaughtUpTimeMs >
// maxLagMs`; KAFKA-7152 (2.1.0) spares a follower whose LEO equals the leader's. Follower 1
// catches up, then its link to the leader is cut while nothing is produced: before 2.1 the leader
// shrinks the ISR once replica.lag.time.max.ms (10 s) has passed, at its next check (every 5 s);
// from 2.1 it stays.
func TestAuditIdleFollowerShrinkBefore21(t *testing.T) {
	for _, tc := range []struct {
		era string
		isr []int32
	}{{"0.10.2", []int32{0}}, {"0.11.0", []int32{0}}, {"2.1", []int32{0, 1}}, {"3.7", []int32{0, 1}}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["replica.lag.time.max.ms"] = "10000"
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":-1}`)
			runFor(t, e, 1000)
			if got := e.replicaOn(p.pid, 1).Log().LogEndOffset(); got != 2 {
				t.Fatalf("follower LEO %d, want 2", got)
			}
			apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
			runFor(t, e, 9000)
			if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1}) {
				t.Fatalf("ISR %v 9 s after the cut, want [0 1]", isr)
			}
			runFor(t, e, 7000)
			if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, tc.isr) {
				t.Fatalf("ISR %v 16 s after the cut, want %v", isr, tc.isr)
			}
		})
	}
}

// TestAuditFirstHWCheckpointAtOnce: ReplicaManager.startHighWaterMarksCheckPointThread schedules
// the checkpoint task with delay 0 after the first LeaderAndIsr's role changes (0.10.2.2, 2.1.1:
// KafkaScheduler.schedule's default delay; 3.7.0: `0L`), so a restarted broker rewrites
// replication-offset-checkpoint at once, not one interval later. Broker 1, the only replica,
// checkpointed HW 3, then lost its unflushed records to a power loss: it recovers HW
// min(checkpoint, LEO) = 0, and its first LeaderAndIsr writes that at once.
func TestAuditFirstHWCheckpointAtOnce(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{1}}, eraCfg(era))
			r := e.replicaOn(e.partitionOf(ktTopic, 0).pid, 1)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":3,"acks":1}`)
			runFor(t, e, 5000) // the checkpoint at 5000 ms
			if r.Log().HighWatermark() != 3 || r.HWCheckpoint() != 3 {
				t.Fatalf("HW %d checkpoint %d, want 3, 3", r.Log().HighWatermark(), r.HWCheckpoint())
			}
			apply(t, e, `{"do":"kill","broker":1,"loseUnflushed":true}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"restart","broker":1}`)
			runUntilTrue(t, e, 20000, "broker 1 got its first LeaderAndIsr", func() bool {
				return e.brokers[1].Running() && e.brokers[1].rm.Checkpointing()
			})
			if r.Log().LogEndOffset() != 0 || r.Log().HighWatermark() != 0 {
				t.Fatalf("LEO %d HW %d after the power loss, want 0, 0", r.Log().LogEndOffset(), r.Log().HighWatermark())
			}
			if got := r.HWCheckpoint(); got != 0 {
				t.Fatalf("checkpoint %d right after the first LeaderAndIsr, want 0 (rewritten at once)", got)
			}
		})
	}
}

// TestAuditNotLeaderErrorName: error code 6 is NOT_LEADER_FOR_PARTITION in 0.10.2.2 and 2.1.1's
// Errors.java and NOT_LEADER_OR_FOLLOWER from 2.6.0 (3.7.0). A consumer reads from broker 2, which
// the controller has just elected, before the LeaderAndIsr (on a slow link) makes it leader: in
// 2.1 its Fetch is refused with code 6, and the consumer reports the era's name. A 3.7 consumer's
// Fetch carries the new leader epoch, which broker 2 has not heard of: UNKNOWN_LEADER_EPOCH
// comes first (Partition.checkCurrentLeaderEpoch; audit 14,
// TestAudit14ConsumerFetchCarriesLeaderEpoch), so there the name is checked on its own.
func TestAuditNotLeaderErrorName(t *testing.T) {
	for _, tc := range []struct{ era, name string }{{"2.1", "NOT_LEADER_FOR_PARTITION"}, {"3.7", "UNKNOWN_LEADER_EPOCH"}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":2,"latencyMs":500}`)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 6100) // the session expired at 7000: broker 2 is elected, its LeaderAndIsr is on the way
			if l := e.ctrl.Leader(e.partitionOf(ktTopic, 0).pid); l != 2 {
				t.Fatalf("leader %d, want 2", l)
			}
			apply(t, e, `{"do":"consume","topic":"t","partition":0}`)
			runFor(t, e, 100)
			if ops := e.Consumes(1); len(ops) != 1 || ops[0].Result != tc.name {
				t.Fatalf("consume results %+v, want %s", ops, tc.name)
			}
			if tc.era == "3.7" {
				if got := e.clientErrorName(ErrNotLeaderOrFollower); got != "NOT_LEADER_OR_FOLLOWER" {
					t.Fatalf("a 3.7 client names code 6 %s, want NOT_LEADER_OR_FOLLOWER", got)
				}
			}
		})
	}
}

// TestAuditAcks0ErrorNoAnswer: KafkaApis.handleProduceRequest answers an acks=0 produce never, not
// even with an error: it closes the connection (0.10.2.2 and 3.7.0: `if (produceRequest.acks ==
// 0) { if (errorInResponse) ... closeConnection`). Broker 2 gets an acks=0 produce before the
// LeaderAndIsr that makes it leader (on a slow link): NOT_LEADER, and no answer. The produce is
// sent to broker 2 directly, as by a client whose metadata came from a broker the controller's
// UpdateMetadata reached first: the engine's producer waits until broker 2 leads (audit 10,
// leaderReachable).
func TestAuditAcks0ErrorNoAnswer(t *testing.T) {
	for _, acks := range []string{"0", "1"} {
		t.Run("acks="+acks, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, map[string]string{"zookeeper.session.timeout.ms": "6000"})
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":2,"latencyMs":500}`)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 6100)
			e.Drain()
			p := e.partitionOf(ktTopic, 0)
			op := e.clients.NewProduce(ktTopic, 0, p.pid, map[string]Acks{"0": 0, "1": 1}[acks], 1, e.now)
			op.Attempts++
			e.sendProduceTo(op, 2)
			runFor(t, e, 50)
			answers := eventsOf(e.Drain(), MsgProduceResponse, nil)
			if want := map[string]int{"0": 0, "1": 1}[acks]; len(answers) != want {
				t.Fatalf("%d Produce answers, want %d", len(answers), want)
			}
			if acks == "1" && answers[0].Message.ProduceResponse.Error != ErrNotLeaderOrFollower {
				t.Fatalf("answer %s, want NOT_LEADER_OR_FOLLOWER", answers[0].Message.ProduceResponse.Error)
			}
		})
	}
}

// TestAuditProducerRetriesUnknownPartition: UnknownTopicOrPartitionException is an
// InvalidMetadataException (0.10.2.2, 3.7.0), which the producer retries after refreshing its
// metadata, as it does NOT_LEADER: an UNKNOWN_TOPIC_OR_PARTITION answer is not the produce's
// outcome; the retry is acknowledged. The producer is not idempotent here: the faked answer is
// to a batch the leader appended, which an idempotent retry would find at offset 0
// (TestAuditIdempotentRetryNotAppendedTwice).
func TestAuditProducerRetriesUnknownPartition(t *testing.T) {
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, map[string]string{"enable.idempotence": "false"})
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
	runFor(t, e, 100)
	op := e.clients.ProduceOps()[0]
	if !op.Done || op.BaseOffset != 0 {
		t.Fatalf("first answer: done %v base %d, want acked at 0", op.Done, op.BaseOffset)
	}
	// As if the broker had answered UNKNOWN_TOPIC_OR_PARTITION instead.
	op.Done, op.Result, op.BaseOffset = false, "", -1
	e.Drain()
	e.produceAnswered(&ProduceResponse{Op: op.ID, Error: ErrUnknownTopicOrPartition, BaseOffset: -1})
	if op.Done {
		t.Fatalf("the produce ended with %s, want a retry", op.Result)
	}
	runFor(t, e, 1000)
	if n := len(eventsOf(e.Drain(), MsgProduce, nil)); n != 1 || !op.Done || op.Result != ResultAcked || op.BaseOffset != 1 {
		t.Fatalf("after the answer: %d Produce sent, done %v result %q base %d; want 1 retry acked at 1", n, op.Done, op.Result, op.BaseOffset)
	}
}
