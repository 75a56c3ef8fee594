package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The tenth session's produce-and-consume audit: the clients and the leader's produce path
// against KafkaProducer's Sender and RecordAccumulator, Partition.appendRecordsToLeader and
// DelayedProduce at each era's tag.

// runAudit10 plays a scenario (its JSON, with %s the era's config) in one era and returns the
// engine, failing on a parse error; expectations are the test's to check.
func runAudit10(t *testing.T, scenario, version string) *Engine {
	t.Helper()
	sc, err := ParseScenario([]byte(fmt.Sprintf(scenario, version)))
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// audit10Eras are the four eras, in order.
var audit10Eras = []string{"0.10.2", "0.11.0", "2.1", "3.7"}

// notEnoughReplicasScenario: min.insync.replicas 2, both followers killed at 100 and out of the
// ISR once their sessions expire; an acks=all produce at 20000 is refused NOT_ENOUGH_REPLICAS
// (Partition.appendRecordsToLeader checks the ISR before the append); broker 1 returns at 21000
// and rejoins the ISR.
const notEnoughReplicasScenario = `{"name":"ner","brokers":3,"topics":[{"name":"t","assignment":[[0,1,2]]}],
"config":{"inter.broker.protocol.version":"%s","min.insync.replicas":2},
"steps":[{"at":100,"do":"kill","broker":1},{"at":100,"do":"kill","broker":2},
{"at":20000,"do":"produce","topic":"t","partition":0},{"at":21000,"do":"restart","broker":1}],"duration":40000}`

// requestTimedOutScenario: follower 2 stops fetching (its link to leader 0 cut at 900); an
// acks=all produce at 1000 waits in the produce purgatory for 2, which leaves the ISR only at the
// isr-expiration check of 90000 (replica.lag.time.max.ms 60000, checked every 30000), so the
// request times out first (request.timeout.ms 30000): on the producer's own clock, at 31000,
// before the leader's DelayedProduce (31001) could answer (audit 15, produceTimedOut):
// NETWORK_EXCEPTION before 3.5 (the timeout disconnects), REQUEST_TIMED_OUT in 3.7.
const requestTimedOutScenario = `{"name":"rto","brokers":3,"topics":[{"name":"t","assignment":[[0,1,2]]}],
"config":{"inter.broker.protocol.version":"%s","replica.lag.time.max.ms":60000},
"steps":[{"at":900,"do":"link","from":2,"to":0,"down":true},
{"at":1000,"do":"produce","topic":"t","partition":0}],"duration":110000}`

// TestAudit10ProducerRetriesRetriableErrors: NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND
// and REQUEST_TIMED_OUT are RetriableExceptions, which the producer retries from 2.1 (retries
// Integer.MAX_VALUE, KIP-91) until delivery.timeout.ms: Sender.completeBatch → canRetry →
// reenqueueBatch (2.1.1 and 3.7.0; with an idempotent producer TransactionManager.canRetry falls
// back to `instanceof RetriableException` for them). The era's client before 2.1 had retries 0
// and reports the error. So in 2.1 and 3.7 the refused batch is appended once broker 1 is back in
// the ISR and acknowledged, and the timed-out one once follower 2 has left it: 3.7's idempotent
// producer at offset 0 (the leader finds the retry it already has), 2.1's at offset 2 (each
// timed-out attempt was appended again).
func TestAudit10ProducerRetriesRetriableErrors(t *testing.T) {
	for _, v := range audit10Eras {
		retries := v == "2.1" || v == "3.7"
		t.Run("NOT_ENOUGH_REPLICAS/"+v, func(t *testing.T) {
			e := runAudit10(t, notEnoughReplicasScenario, v)
			p := e.partitionOf(ktTopic, 0)
			op := e.Produces()[0]
			if !retries {
				if op.Result != "NOT_ENOUGH_REPLICAS" || op.Attempts != 1 || e.client(p).Acked() != 0 {
					t.Fatalf("produce %+v, acked %d; want NOT_ENOUGH_REPLICAS after 1 attempt", op, e.client(p).Acked())
				}
				return
			}
			if op.Result != ResultAcked || op.BaseOffset != 0 || op.Attempts < 2 || e.client(p).Acked() != 1 {
				t.Fatalf("produce %+v, acked %d; want acked at 0 after retries", op, e.client(p).Acked())
			}
			if got := e.replicaOn(p.pid, 0).Log().LogEndOffset(); got != 1 {
				t.Fatalf("leader's LEO %d, want 1 (refused attempts append nothing)", got)
			}
		})
		t.Run("REQUEST_TIMED_OUT/"+v, func(t *testing.T) {
			e := runAudit10(t, requestTimedOutScenario, v)
			p := e.partitionOf(ktTopic, 0)
			op := e.Produces()[0]
			var epochs []int32
			for _, r := range e.replicaOn(p.pid, 0).Log().Records() {
				epochs = append(epochs, r.Epoch)
			}
			switch v {
			case "0.10.2", "0.11.0":
				// NetworkClient.handleTimedOutRequests disconnects: Sender.handleProduceResponse
				// sees wasDisconnected, NETWORK_EXCEPTION (audit 15: the engine waited for the
				// leader's REQUEST_TIMED_OUT, which Kafka's client never reads).
				if op.Result != "NETWORK_EXCEPTION" || op.Attempts != 1 || e.client(p).Acked() != 0 {
					t.Fatalf("produce %+v; want NETWORK_EXCEPTION after 1 attempt", op)
				}
			case "2.1":
				if op.Result != ResultAcked || op.BaseOffset != 2 || op.Attempts != 3 || !slices.Equal(epochs, []int32{0, 0, 0}) {
					t.Fatalf("produce %+v, log epochs %v; want acked at 2 after 3 attempts, log [0 0 0]", op, epochs)
				}
			case "3.7":
				if op.Result != ResultAcked || op.BaseOffset != 0 || op.Attempts != 3 || !slices.Equal(epochs, []int32{0}) {
					t.Fatalf("produce %+v, log epochs %v; want acked at 0 after 3 attempts, log [0]", op, epochs)
				}
			}
		})
	}
}

// TestAudit10IdempotentProducerRetriesIn011: 0.11.0's producer with enable.idempotence on (not
// its default) gets retries Integer.MAX_VALUE (KafkaProducer.configureRetries, 0.11.0.2), so
// its NOT_ENOUGH_REPLICAS is retried, as from 2.1, and the batch is acknowledged once broker 1
// is back in the ISR; without idempotence the error is final.
func TestAudit10IdempotentProducerRetriesIn011(t *testing.T) {
	for _, idem := range []bool{false, true} {
		t.Run(fmt.Sprint("idempotence=", idem), func(t *testing.T) {
			sc := strings.Replace(notEnoughReplicasScenario, `"min.insync.replicas":2`,
				fmt.Sprintf(`"min.insync.replicas":2,"enable.idempotence":%v`, idem), 1)
			e := runAudit10(t, sc, "0.11.0")
			op := e.Produces()[0]
			want := "NOT_ENOUGH_REPLICAS"
			if idem {
				want = ResultAcked
			}
			if op.Result != want {
				t.Fatalf("produce %+v; want %s", op, want)
			}
		})
	}
}

// TestAudit10RetryAtOnceOnNewLeader: 3.7.0's producer (KIP-951) retries a batch without its
// backoff once its metadata names a newer leader epoch than the one the batch was last sent
// under: the NOT_LEADER_OR_FOLLOWER answer carries the new leader (KafkaApis
// .handleProduceRequest's currentLeader; Sender.completeBatch updates the metadata with it), and
// RecordAccumulator.shouldBackoff skips the backoff when ProducerBatch
// .hasLeaderChangedForTheOngoingRetry. Before, every retry waits retry.backoff.ms (100). Leader 1
// holds an acks=all produce it cannot commit (follower 2's link is cut) and shuts down at 2000:
// the answer reaches the producer at 2003, and the retry leaves for leader 0 then in 3.7, at 2103
// in 2.1.
func TestAudit10RetryAtOnceOnNewLeader(t *testing.T) {
	for _, tc := range []struct {
		era   string
		retry int64
	}{{"2.1", 2103}, {"3.7", 2003}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}}, eraCfg(tc.era))
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":-1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, tc.retry-1-e.now)
			if op := e.Produces()[0]; op.Attempts != 1 {
				t.Fatalf("at %d: attempts %d, want 1", e.now, op.Attempts)
			}
			runFor(t, e, 1)
			if op := e.Produces()[0]; op.Attempts != 2 {
				t.Fatalf("at %d: attempts %d, want the retry sent", e.now, op.Attempts)
			}
			runFor(t, e, 1000)
			if op := e.Produces()[0]; op.Result != ResultAcked {
				t.Fatalf("produce %+v, want acknowledged by leader 0", op)
			}
		})
	}
}

// produceSendTimes plays a scenario and returns when the producer sent each Produce.
func produceSendTimes(t *testing.T, scenario string) []int64 {
	t.Helper()
	sc, err := ParseScenario([]byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	if _, _, err := Run(sc, func(evs []Event) {
		for i := range evs {
			if evs[i].Type == MsgProduce {
				at = append(at, evs[i].T)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestAudit10ExponentialRetryBackoff: 3.7.0's producer backs a batch off
// RecordAccumulator.retryBackoff.backoff(attempts - 1), an ExponentialBackoff from retry.backoff.ms
// (100) doubling to retry.backoff.max.ms (1000) (KIP-580; its ±20% jitter is not modelled), and
// with a maximum not above retry.backoff.ms, retry.backoff.ms each time (ExponentialBackoff's
// expMax 0). 2.1.1's waits retry.backoff.ms each time (RecordAccumulator.ready: `waitedTimeMs <
// retryBackoffMs`). notEnoughReplicasScenario: each NOT_ENOUGH_REPLICAS answer comes 2 ms after
// its send; broker 1 is back in the ISR from 21003, and the next attempt is acknowledged.
func TestAudit10ExponentialRetryBackoff(t *testing.T) {
	for _, tc := range []struct {
		era, cfg string
		sends    []int64
	}{
		{"3.7", ``, []int64{20000, 20102, 20304, 20706, 21508}},
		{"3.7", `,"retry.backoff.max.ms":100`, []int64{20000, 20102, 20204, 20306, 20408, 20510, 20612, 20714, 20816, 20918, 21020}},
		{"2.1", ``, []int64{20000, 20102, 20204, 20306, 20408, 20510, 20612, 20714, 20816, 20918, 21020}},
	} {
		t.Run(tc.era+tc.cfg, func(t *testing.T) {
			sc := strings.Replace(fmt.Sprintf(notEnoughReplicasScenario, tc.era), `"min.insync.replicas":2`, `"min.insync.replicas":2`+tc.cfg, 1)
			if got := produceSendTimes(t, sc); !slices.Equal(got, tc.sends) {
				t.Fatalf("Produce sent at %v, want %v", got, tc.sends)
			}
		})
	}
}

// TestAudit10PreKIP91BatchExpiresAfterRequestTimeout: before 2.1 the producer has no
// delivery.timeout.ms; RecordAccumulator.abortExpiredBatches expires a batch that was not sent
// once `requestTimeoutMs < now - (createdMs + lingerMs)` (RecordBatch.maybeExpire, 0.10.2.2;
// ProducerBatch.maybeExpire, 0.11.0.2): request.timeout.ms 30000, linger.ms 0. The only replica
// of t-0 dies at 1000 and is declared dead at 7000; a produce at 8000 waits for a leader, which
// comes back at 48000. 0.10.2's and 0.11.0's batch expired at 38001; 2.1's waits up to
// delivery.timeout.ms (120000, KIP-91) and is acknowledged.
func TestAudit10PreKIP91BatchExpiresAfterRequestTimeout(t *testing.T) {
	for _, era := range audit10Eras[:3] {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["unclean.leader.election.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{1}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 7000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
			runFor(t, e, 30000)
			expires := era != "2.1"
			if op := e.Produces()[0]; op.Done {
				t.Fatalf("at %d: %s; want still waiting", e.now, op.Result)
			}
			runFor(t, e, 1)
			if op := e.Produces()[0]; op.Done != expires {
				t.Fatalf("at %d: done %v (%s), want done %v", e.now, op.Done, op.Result, expires)
			}
			runFor(t, e, 47999-e.now)
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 5000)
			want := map[bool]int64{true: 0, false: 1}[expires]
			if got := e.client(p).Acked(); got != want {
				t.Fatalf("acked %d after the replica's return, want %d (%+v)", got, want, e.Produces()[0])
			}
		})
	}
}

// TestAudit10AcksZeroWaitsForAReachableLeader: a producer sends a batch only to a leader it can
// reach (Sender.sendProducerData drains a node only when NetworkClient.ready; a dead broker's
// connection is refused) and learns leaders from the brokers' metadata, which UpdateMetadata
// fills after the new leader's LeaderAndIsr; until then the batch waits in the accumulator
// (0.10.2.2 to 3.7.0). Leader 0 of t-0 is killed at 1000 and an acks=0 produce follows at 2000:
// it is not sent to the dead broker (where it was lost: acks=0 gets no answer and is not retried)
// nor to broker 1 before broker 1 leads, but appended by broker 1 once it does, in its first
// leader epoch (3.7: epoch 2, the controller first taking the dead leader offline; 0.10.2: 1).
// It is never acknowledged.
func TestAudit10AcksZeroWaitsForAReachableLeader(t *testing.T) {
	for _, tc := range []struct {
		era   string
		epoch int32
	}{{"0.10.2", 1}, {"3.7", 2}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":0}`)
			runFor(t, e, 23000)
			for _, b := range []int32{1, 2} {
				var epochs []int32
				for _, r := range e.replicaOn(p.pid, b).Log().Records() {
					epochs = append(epochs, r.Epoch)
				}
				if !slices.Equal(epochs, []int32{tc.epoch}) {
					t.Fatalf("broker %d's log epochs %v, want [%d]", b, epochs, tc.epoch)
				}
			}
			if a := e.client(p).Acked(); a != 0 {
				t.Fatalf("acked %d, want 0 (acks=0)", a)
			}
		})
	}
}

// TestAudit10NoRetriesBefore21: the era's client before 2.1 has retries 0 (ProducerConfig,
// 0.10.2.2 and 0.11.0.2; KIP-91 made it Integer.MAX_VALUE in 2.1), so Sender.canRetry
// (`batch.attempts < this.retries`) is false for every error, the metadata ones included, and
// for a broken connection: the batch fails with NOT_LEADER_FOR_PARTITION or NETWORK_EXCEPTION.
// Leader 1 holds an acks=all produce it cannot commit (follower 2's link is cut); a controlled
// shutdown moves the leadership to 0 (NOT_LEADER answer), or a kill breaks the connection. 2.1
// retries on leader 0, which appends the batch again after the copy it fetched as a follower.
func TestAudit10NoRetriesBefore21(t *testing.T) {
	for _, tc := range []struct {
		era, action, result string
		leo                 int64
	}{
		{"0.10.2", "shutdown", "NOT_LEADER_FOR_PARTITION", 2},
		{"0.11.0", "shutdown", "NOT_LEADER_FOR_PARTITION", 2},
		{"2.1", "shutdown", ResultAcked, 4},
		{"0.10.2", "kill", "NETWORK_EXCEPTION", 2},
		{"2.1", "kill", ResultAcked, 4},
	} {
		t.Run(tc.era+"/"+tc.action, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":-1}`)
			runFor(t, e, 1000)
			apply(t, e, fmt.Sprintf(`{"do":%q,"broker":1}`, tc.action))
			runFor(t, e, 20000)
			op := e.Produces()[0]
			if op.Result != tc.result {
				t.Fatalf("produce %+v; want %s", op, tc.result)
			}
			if got := e.replicaOn(p.pid, 0).Log().LogEndOffset(); got != tc.leo {
				t.Fatalf("leader 0's LEO %d, want %d", got, tc.leo)
			}
			if want := map[bool]int64{true: 2, false: 0}[tc.result == ResultAcked]; e.client(p).Acked() != want {
				t.Fatalf("acked %d, want %d", e.client(p).Acked(), want)
			}
		})
	}
}

// TestAudit10InFlightBatchExpiresAtDeliveryTimeout: from 2.1 the Sender fails a batch whose
// delivery timeout passed while its request is in flight (Sender.sendProducerData →
// getExpiredInflightBatches → failBatch, TimeoutException; 2.1.1 and 3.7.0): an answer after it
// is no acknowledgement. requestTimedOutScenario with delivery.timeout.ms 80000: the third
// attempt (3.7: 61304, 2.1: 61204) waits in the purgatory until follower 2 leaves the ISR at
// 90000, after the batch expired at 81000, so nothing is acknowledged though the leader commits
// the batch.
func TestAudit10InFlightBatchExpiresAtDeliveryTimeout(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			sc := strings.Replace(requestTimedOutScenario, `"replica.lag.time.max.ms":60000`,
				`"replica.lag.time.max.ms":60000,"delivery.timeout.ms":80000`, 1)
			e := runAudit10(t, sc, era)
			p := e.partitionOf(ktTopic, 0)
			op := e.Produces()[0]
			if op.Result != "DELIVERY_TIMEOUT" || op.Attempts != 3 || e.client(p).Acked() != 0 {
				t.Fatalf("produce %+v, acked %d; want DELIVERY_TIMEOUT after 3 attempts, acked 0", op, e.client(p).Acked())
			}
			if hw := e.replicaOn(p.pid, 0).Log().HighWatermark(); hw == 0 {
				t.Fatalf("leader's HW %d, want the batch committed", hw)
			}
		})
	}
}

// TestAudit10IdempotenceNeedsAcksAll: 3.7.0's producer with acks 0 or 1 is not idempotent
// whatever the default enable.idempotence (ProducerConfig.postProcessAndValidateIdempotenceConfigs:
// "Idempotence will be disabled because acks is set to 1, not set to 'all'"), so the leader
// appends its retry of a batch it already has again; with acks=all it finds it. The first answer
// is replaced by a NOT_LEADER_OR_FOLLOWER one, as if it had been lost with the leader's role.
func TestAudit10IdempotenceNeedsAcksAll(t *testing.T) {
	for _, tc := range []struct {
		acks string
		base int64
		leo  int64
	}{{"1", 1, 2}, {"-1", 0, 1}} {
		t.Run("acks="+tc.acks, func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, eraCfg("3.7"))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":`+tc.acks+`}`)
			runFor(t, e, 100)
			op := e.clients.ProduceOps()[0]
			if !op.Done || op.BaseOffset != 0 {
				t.Fatalf("first answer: %+v, want acked at 0", op)
			}
			op.Done, op.Result, op.BaseOffset = false, "", -1
			e.produceAnswered(&ProduceResponse{Op: op.ID, Error: ErrNotLeaderOrFollower, BaseOffset: -1})
			runFor(t, e, 1000)
			if !op.Done || op.Result != ResultAcked || op.BaseOffset != tc.base {
				t.Fatalf("retry: %+v, want acked at %d", op, tc.base)
			}
			if got := e.replicaOn(p.pid, 0).Log().LogEndOffset(); got != tc.leo {
				t.Fatalf("leader's LEO %d, want %d", got, tc.leo)
			}
		})
	}
}
