package engine

import (
	"slices"
	"strings"
	"testing"
)

// Audit 14: the producer against Kafka's clients at each era tag.

// runAudit14 plays scenario JSON sc (which must hold its expectations) and returns the engine.
func runAudit14(t *testing.T, sc string) *Engine {
	t.Helper()
	s, err := ParseScenario([]byte(sc))
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := Run(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("expectations failed: %+v", res.Failures)
	}
	return e
}

// expiryScenario: leader 1 of t-0 (RF 1) dies at 1000 just after batch 1 left for it (refused at
// 1001, a connection failure); batch 2 comes at 1500 and waits for a leader; broker 1 restarts at
// 33000 and leads again from ~33003. retry.backoff.ms 7000: a waiting batch looks every 7000 ms.
const expiryScenario = `{"name":"expiry","brokers":2,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":%i,"retry.backoff.ms":7000},
"topics":[{"name":"t","assignment":[[1]]}],"steps":[{"at":1000,"do":"produce","topic":"t","partition":0},{"at":1000,"do":"kill","broker":1},
{"at":1500,"do":"produce","topic":"t","partition":0},{"at":33000,"do":"restart","broker":1},{"at":40000,"do":"expect","topic":"t","partition":0,"leader":1}]}`

// TestAudit14IdempotentBatchExpiresAfterBackoffPlusRequestTimeout follows 0.11.0.2's
// ProducerBatch.maybeExpire(requestTimeoutMs, retryBackoffMs, now, lingerMs, isFull) as
// RecordAccumulator.expiredBatches calls it (0.10.2.2: RecordBatch.maybeExpire from
// abortExpiredBatches): a batch not in retry expires once more than request.timeout.ms passed
// since its creation, a batch in retry once more than request.timeout.ms passed since its last
// attempt (ProducerBatch.reenqueued sets lastAttemptMs) plus retry.backoff.ms; there is no
// delivery.timeout.ms before 2.1. 0.11.0's idempotent producer (retries Integer.MAX_VALUE):
// batch 1 failed at 1001 and expires only at 1001 + 7000 + 30001 = 38002, so its retry at
// 36001 reaches the restarted leader and is acknowledged at 36003. Batch 2 waits behind it in
// the deque (reenqueue: addFirst), where expiredBatches stops at the first batch that has not
// expired, and behind its request (max.in.flight.requests.per.connection 1, the partition muted):
// it leaves at 36003 and is acknowledged at 36005. (The engine gave 0.11.0's idempotent producer
// delivery.timeout.ms, 120000 from creation, and sent batch 2 on its own at 36500.) 0.10.2 and
// 0.11.0 without idempotence (retries 0): batch 1 fails NETWORK_EXCEPTION, batch 2 expires at
// 1500 + 30001 = 31501. 2.1 and 3.7 (idempotent): delivery.timeout.ms from creation; batch 2
// leaves right behind batch 1.
func TestAudit14IdempotentBatchExpiresAfterBackoffPlusRequestTimeout(t *testing.T) {
	cases := []struct {
		era, idem string
		results   [2]string
		at        [2]int64 // when the two results came, in time order
	}{
		{"0.11.0", "true", [2]string{ResultAcked, ResultAcked}, [2]int64{36003, 36005}},
		{"0.11.0", "false", [2]string{"NETWORK_EXCEPTION", "DELIVERY_TIMEOUT"}, [2]int64{1001, 31501}},
		{"0.10.2", "false", [2]string{"NETWORK_EXCEPTION", "DELIVERY_TIMEOUT"}, [2]int64{1001, 31501}},
		{"2.1", "true", [2]string{ResultAcked, ResultAcked}, [2]int64{36003, 36003}},
		// 3.7: batch 1's backoff is retry.backoff.max.ms (1000, below retry.backoff.ms: see
		// TestAudit14StaticBackoffIsTheMaximum), then it waits for a leader from 2001 on.
		{"3.7", "true", [2]string{ResultAcked, ResultAcked}, [2]int64{37003, 37003}},
	}
	for _, c := range cases {
		t.Run(c.era+"-idem-"+c.idem, func(t *testing.T) {
			sc := strings.NewReplacer("%v", c.era, "%i", c.idem).Replace(expiryScenario)
			var at [2]int64
			s, err := ParseScenario([]byte(sc))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			e, res, err := Run(s, func(evs []Event) {
				for i := range evs {
					if evs[i].Type == EvProduceResult {
						at[n] = evs[i].T
						n++
					}
				}
			})
			if err != nil || !res.OK() {
				t.Fatalf("run: %v %+v", err, res.Failures)
			}
			ops := e.Produces()
			for i, op := range ops {
				if op.Result != c.results[i] {
					t.Errorf("batch %d: %s, want %s", i+1, op.Result, c.results[i])
				}
			}
			if at != c.at {
				t.Errorf("results at %v, want %v", at, c.at)
			}
		})
	}
}

// TestAudit14StaticBackoffIsTheMaximum follows 3.7.0's ExponentialBackoff constructor as
// RecordAccumulator builds it (retry.backoff.ms, 2, retry.backoff.max.ms, 0.2): with
// retry.backoff.ms above retry.backoff.max.ms, initialInterval is the maximum and expMax 0, so
// every retry waits retry.backoff.max.ms (CommonClientConfigs.warnDisablingExponentialBackoff:
// "A static backoff with value retry.backoff.max.ms will be applied"). The engine waited
// retry.backoff.ms. Before 3.7 there is no retry.backoff.max.ms: retry.backoff.ms each time.
func TestAudit14StaticBackoffIsTheMaximum(t *testing.T) {
	cases := []struct {
		cfg  map[string]string
		want [3]int64
	}{
		{map[string]string{"retry.backoff.ms": "7000"}, [3]int64{1000, 1000, 1000}},
		{map[string]string{"retry.backoff.ms": "7000", "retry.backoff.max.ms": "7000"}, [3]int64{7000, 7000, 7000}},
		{map[string]string{"retry.backoff.ms": "300", "retry.backoff.max.ms": "1000"}, [3]int64{300, 600, 1000}},
		{map[string]string{"retry.backoff.ms": "7000", "inter.broker.protocol.version": `"2.1"`}, [3]int64{7000, 7000, 7000}},
	}
	for _, c := range cases {
		e := newKafkaEngine(t, 1, [][]int32{{0}}, c.cfg)
		var got [3]int64
		for i := range got {
			got[i] = e.produceBackoff(i + 1)
		}
		if got != c.want {
			t.Errorf("%v: backoffs %v, want %v", c.cfg, got, c.want)
		}
	}
}

// runAudit14Results plays scenario JSON sc and returns its produce steps' results and when each
// came, in step order.
func runAudit14Results(t *testing.T, sc string) (*Engine, []string, []int) {
	t.Helper()
	s, err := ParseScenario([]byte(sc))
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := Run(s, nil)
	if err != nil || !res.OK() {
		t.Fatalf("run: %v %+v", err, res.Failures)
	}
	var results []string
	var at []int
	for _, op := range e.Produces() {
		results = append(results, op.Result)
		at = append(at, op.Attempts)
	}
	return e, results, at
}

// gapScenario: t-0 on [1,2], unclean election on; batch A reaches both, follower 2 is cut off at
// 2000 and leaves the ISR, batch B is acknowledged by leader 1 alone at 12002, broker 1 dies at
// 13000 and 2 is elected uncleanly (its log [A]); batch C comes at 32000 with sequence 2.
const gapScenario = `{"name":"gap","brokers":3,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":%i,
"unclean.leader.election.enable":true,"replica.lag.time.max.ms":5000},"topics":[{"name":"t","assignment":[[1,2]]}],
"steps":[{"at":1000,"do":"produce","topic":"t","partition":0},{"at":2000,"do":"link","from":2,"to":1,"down":true},
{"at":12000,"do":"produce","topic":"t","partition":0},{"at":13000,"do":"kill","broker":1},
{"at":32000,"do":"produce","topic":"t","partition":0},{"at":33000,"do":"expect","violations":["acked-write-lost"]}]}`

// TestAudit14OutOfOrderSequenceAfterUncleanElection follows the leader's sequence check
// (3.7.0 ProducerAppendInfo.checkSequence, 2.1.1 ProducerStateManager's
// ProducerAppendInfo.checkSequence, 0.11.0.2 ProducerIdEntry.validateAppend: a batch of the
// producer's epoch must follow its last sequence, else OUT_OF_ORDER_SEQUENCE_NUMBER) and the
// producer's answer to it: 3.7.0 TransactionManager.canRetry (KIP-360) retries, bumping the
// epoch (requestEpochBumpForPartition, bumpIdempotentProducerEpoch → startSequencesAtBeginning)
// because C is the next after the last acknowledged batch, and sequence 0 of the new epoch is
// accepted; 2.1.1's canRetry does not retry the next batch and Sender.failBatch fails it (and
// resets the producer id); 0.11.0.2's does not retry an OutOfOrderSequenceException at all.
// Before, the engine appended C at once in every era. 0.10.2 has no idempotence: appended.
func TestAudit14OutOfOrderSequenceAfterUncleanElection(t *testing.T) {
	cases := []struct {
		era, idem string
		c         string
		attempts  int
		epochs    []int32
	}{
		{"3.7", "true", ResultAcked, 2, []int32{0, 1}},
		{"3.7", "false", ResultAcked, 1, []int32{0, 1}},
		{"2.1", "true", "OUT_OF_ORDER_SEQUENCE_NUMBER", 1, []int32{0}},
		{"0.11.0", "true", "OUT_OF_ORDER_SEQUENCE_NUMBER", 1, []int32{0}},
		{"0.10.2", "false", ResultAcked, 1, []int32{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.era+"-idem-"+c.idem, func(t *testing.T) {
			sc := strings.NewReplacer("%v", c.era, "%i", c.idem).Replace(gapScenario)
			e, results, attempts := runAudit14Results(t, sc)
			if len(results) != 3 || results[0] != ResultAcked || results[1] != ResultAcked {
				t.Fatalf("results %v, want A and B acked", results)
			}
			if results[2] != c.c || attempts[2] != c.attempts {
				t.Errorf("C: %s after %d attempts, want %s after %d", results[2], attempts[2], c.c, c.attempts)
			}
			p := e.partitionOf(ktTopic, 0)
			var epochs []int32
			for _, r := range e.replicaOn(p.pid, 2).Log().Records() {
				epochs = append(epochs, r.Epoch)
			}
			if !slices.Equal(epochs, c.epochs) {
				t.Errorf("leader 2's log epochs %v, want %v", epochs, c.epochs)
			}
		})
	}
}

// TestAudit14UnknownProducerSequence: a new leader with none of the producer's batches (follower 2
// was cut off before batch A, and is elected uncleanly) gets batch C with sequence 1. 3.7.0
// ProducerAppendInfo.checkSequence accepts any sequence from a producer it has no epoch of
// (currentEntry.producerEpoch() == NO_PRODUCER_EPOCH); 2.1.1's answers UNKNOWN_PRODUCER_ID
// (UnknownProducerIdException: the producer's epoch is not the entry's, sequence not 0, and
// the entry has no epoch), which 2.1.1's producer fails (TransactionManager.canRetry: the last
// acknowledged offset 0 is not below the log start 0); 0.11.0.2's ProducerIdEntry.validateAppend
// takes the empty entry's epoch -1 for another epoch and wants sequence 0:
// OUT_OF_ORDER_SEQUENCE_NUMBER, not retried.
func TestAudit14UnknownProducerSequence(t *testing.T) {
	const sc = `{"name":"unknown","brokers":3,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":true,
"unclean.leader.election.enable":true,"replica.lag.time.max.ms":5000},"topics":[{"name":"t","assignment":[[1,2]]}],
"steps":[{"at":500,"do":"link","from":2,"to":1,"down":true},{"at":12000,"do":"produce","topic":"t","partition":0},
{"at":13000,"do":"kill","broker":1},{"at":32000,"do":"produce","topic":"t","partition":0},{"at":33000,"do":"expect","violations":["acked-write-lost"]}]}`
	for era, want := range map[string]string{"3.7": ResultAcked, "2.1": "UNKNOWN_PRODUCER_ID", "0.11.0": "OUT_OF_ORDER_SEQUENCE_NUMBER"} {
		t.Run(era, func(t *testing.T) {
			_, results, attempts := runAudit14Results(t, strings.Replace(sc, "%v", era, 1))
			if len(results) != 2 || results[0] != ResultAcked || results[1] != want || attempts[1] != 1 {
				t.Errorf("results %v after %v attempts, want [acked %s] after 1", results, attempts, want)
			}
		})
	}
}

// TestAudit14IdempotentOneRequestInFlight follows 0.11.0.2's
// KafkaProducer.configureInflightRequests (max.in.flight.requests.per.connection 1 with
// idempotence) as the Sender applies it: NetworkClient.ready is false for a broker with a
// request in flight (InFlightRequests.canSendMore) and drained partitions are muted
// (guaranteeMessageOrder); once the answer came, the next drain takes the first batch of each
// partition (RecordAccumulator.drain). Two t-0 batches and a t-1 batch at 1000, all on leader 1
// (RF 1): the drain at 1000 takes the first batch of each partition, the first t-0 batch and the
// t-1 batch, in one request (the engine's steps at one instant are in the accumulator before the
// Sender drains, as TestAudit14OneRequestCarriesABatchPerPartition), acknowledged at 1002; the
// second t-0 batch, muted, leaves then and is acknowledged at 1004. (Audit 14 held the t-1 batch
// too, for 1004: the engine's 0.11.0 rule let no batch join the request in flight; audit 15's one
// mechanism, producer_conn.go, counts both producers' requests alike.) From 1.0 (KAFKA-5494) up
// to 5 may be in flight: all three at 1002.
func TestAudit14IdempotentOneRequestInFlight(t *testing.T) {
	const sc = `{"name":"inflight","brokers":2,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":true},
"topics":[{"name":"t","assignment":[[1],[1]]}],"steps":[{"at":1000,"do":"produce","topic":"t","partition":0},
{"at":1000,"do":"produce","topic":"t","partition":0},{"at":1000,"do":"produce","topic":"t","partition":1},
{"at":1010,"do":"expect","violations":[]}]}`
	for era, want := range map[string][]int64{"0.11.0": {1002, 1002, 1004}, "2.1": {1002, 1002, 1002}, "3.7": {1002, 1002, 1002}} {
		t.Run(era, func(t *testing.T) {
			s, err := ParseScenario([]byte(strings.Replace(sc, "%v", era, 1)))
			if err != nil {
				t.Fatal(err)
			}
			var at []int64
			_, _, err = Run(s, func(evs []Event) {
				for i := range evs {
					if evs[i].Type == EvProduceResult && evs[i].Name == ResultAcked {
						at = append(at, evs[i].T)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(at, want) {
				t.Errorf("acknowledged at %v, want %v", at, want)
			}
		})
	}
}

// TestAudit14ClientTimeoutIsNetworkException: an acks=1 produce to leader 0, isolated at 1000,
// waits behind its ISR write blocked on ZooKeeper (zkBlockedWrite) until the producer's request
// timeout (request.timeout.ms 5000). Before 3.5 NetworkClient.handleTimedOutRequests disconnects
// and Sender.handleProduceResponse fails the batch NETWORK_EXCEPTION (response.wasDisconnected;
// 0.10.2.2, 0.11.0.2, 2.1.1); from 3.5 (3.7.0) it is REQUEST_TIMED_OUT (response.wasTimedOut). The
// engine named it REQUEST_TIMED_OUT in every era. Retries 0 before 2.1: it is the result.
func TestAudit14ClientTimeoutIsNetworkException(t *testing.T) {
	const sc = `{"name":"rto","brokers":3,"config":{"inter.broker.protocol.version":"%v","zookeeper.session.timeout.ms":60000,
"replica.lag.time.max.ms":2000,"request.timeout.ms":5000},"topics":[{"name":"t","assignment":[[0,1,2]]}],
"steps":[{"at":1000,"do":"isolate","broker":0},{"at":6000,"do":"produce","topic":"t","partition":0,"acks":1},{"at":20000,"do":"expect","acked":0}]}`
	for _, era := range []string{"0.10.2", "0.11.0"} {
		_, results, attempts := runAudit14Results(t, strings.Replace(sc, "%v", era, 1))
		if len(results) != 1 || results[0] != "NETWORK_EXCEPTION" || attempts[0] != 1 {
			t.Errorf("%s: %v after %v attempts, want NETWORK_EXCEPTION after 1", era, results, attempts)
		}
	}
}

// TestAudit14RetryWaitsForFirstInFlight follows 3.7.0's RecordAccumulator
// .shouldStopDrainBatchesForPartition (from 1.0, KAFKA-5494): a retried idempotent batch is
// drained only when its base sequence is TransactionManager.firstInFlightSequence, so a later
// batch never overtakes an earlier one. t-0 on [1,2], min.insync.replicas 2, follower 2 dead
// (ISR [1] from 6100): batch A (sequence 0) is refused NOT_ENOUGH_REPLICAS at 7000, 7102, 7304
// and 7706, batch B (sequence 1, behind A) at 7706; B's backoff (100) ends at 7808 after the ISR
// is back (7753), A's (800) at 8508. B waits for A: A is appended at offset 0, B at 1, both
// acknowledged. (The engine sent B at 7808: appended first, and A's sequence 0 then refused
// OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout.)
func TestAudit14RetryWaitsForFirstInFlight(t *testing.T) {
	const sc = `{"name":"ord","brokers":3,"config":{"min.insync.replicas":2,"zookeeper.session.timeout.ms":6000},
"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[{"at":100,"do":"kill","broker":2},
{"at":7000,"do":"produce","topic":"t","partition":0},{"at":7650,"do":"produce","topic":"t","partition":0},
{"at":7750,"do":"restart","broker":2},{"at":9500,"do":"expect","topic":"t","partition":0,"isr":[1,2],"acked":2}]}`
	e, results, _ := runAudit14Results(t, sc)
	ops := e.Produces()
	if results[0] != ResultAcked || results[1] != ResultAcked || ops[0].BaseOffset != 0 || ops[1].BaseOffset != 1 {
		t.Errorf("A %s at %d, B %s at %d; want A acked at 0, B at 1", results[0], ops[0].BaseOffset, results[1], ops[1].BaseOffset)
	}
}
