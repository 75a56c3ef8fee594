package engine

import (
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
// 36001 reaches the restarted leader and is acknowledged; batch 2, never sent, expires at
// 1500 + 30001 = 31501. (The engine gave both delivery.timeout.ms, 120000 from creation, and
// acknowledged both.) 0.10.2 (retries 0): batch 1 fails NETWORK_EXCEPTION, batch 2 expires at
// 31501. 2.1 and 3.7: delivery.timeout.ms from creation, both acknowledged.
func TestAudit14IdempotentBatchExpiresAfterBackoffPlusRequestTimeout(t *testing.T) {
	cases := []struct {
		era, idem string
		results   [2]string
		at        [2]int64 // when the two results came, in time order
	}{
		{"0.11.0", "true", [2]string{ResultAcked, "DELIVERY_TIMEOUT"}, [2]int64{31501, 36003}},
		{"0.11.0", "false", [2]string{"NETWORK_EXCEPTION", "DELIVERY_TIMEOUT"}, [2]int64{1001, 31501}},
		{"0.10.2", "false", [2]string{"NETWORK_EXCEPTION", "DELIVERY_TIMEOUT"}, [2]int64{1001, 31501}},
		{"2.1", "true", [2]string{ResultAcked, ResultAcked}, [2]int64{36003, 36502}},
		// 3.7: batch 1's backoff is retry.backoff.max.ms (1000, below retry.backoff.ms: see
		// TestAudit14StaticBackoffIsTheMaximum), then it waits for a leader from 2001 on.
		{"3.7", "true", [2]string{ResultAcked, ResultAcked}, [2]int64{36502, 37003}},
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
