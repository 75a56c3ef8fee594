package engine

import (
	"strings"
	"testing"
)

// Audit 15: the producer's requests in flight per connection, one mechanism as Kafka's
// (producer_conn.go): NetworkClient.isReady → InFlightRequests.canSendMore in
// Sender.sendProducerData, max.in.flight.requests.per.connection 5, and 1 with muting for 0.11.0's
// idempotent producer.

// behindOneRequest: t-0 on [1,3] with follower 3 cut off from 1 (still in the ISR), t-1 on [2,1].
// Broker 2 dies at 1000 and batch B (t-1) comes then and waits for a leader; batch A (t-0) leaves
// at 1500 and waits in broker 1's purgatory until request.timeout.ms (8000), answered at 9502.
// Broker 2's session expires at 7000 and 1 leads t-1; B's deadline (0.11.0.2
// ProducerBatch.maybeExpire) is 1000 + 8000 + 1.
const behindOneRequest = `{"name":"behind","brokers":4,"config":{"inter.broker.protocol.version":"%v",
"enable.idempotence":true,"zookeeper.session.timeout.ms":6000,"replica.lag.time.max.ms":60000,"request.timeout.ms":8000},
"topics":[{"name":"t","assignment":[[1,3],[2,1]]}],"steps":[{"at":500,"do":"link","from":3,"to":1,"down":true},
{"at":500,"do":"link","from":1,"to":3,"down":true},{"at":1000,"do":"kill","broker":2},
{"at":1000,"do":"produce","topic":"t","partition":1},{"at":1500,"do":"produce","topic":"t","partition":0},
{"at":12000,"do":"expect","topic":"t","partition":1,"leader":1}]}`

// TestAudit15WaitingBatchExpiresBehindTheOneRequest follows 0.11.0.2's
// RecordAccumulator.expiredBatches, which skips only muted partitions ("We only check if the
// batch should be expired if the partition does not have a batch in flight"): B, of t-1 (no
// batch in flight), waiting for broker 1 where the idempotent producer has its one request in
// flight (KafkaProducer.configureInflightRequests: 1; InFlightRequests.canSendMore false), expires
// at 9001, before A's answer frees the connection, and is never sent. (The engine held it for
// broker 1's answer without expiring it: sent at 9502 and acknowledged.) In 2.1 (5 in flight) B
// leaves once 1 leads t-1 and is acknowledged.
func TestAudit15WaitingBatchExpiresBehindTheOneRequest(t *testing.T) {
	for _, c := range []struct {
		era     string
		result  string
		appends int
	}{
		{"0.11.0", ErrDeliveryTimeout.String(), 0},
		{"2.1", ResultAcked, 1},
	} {
		t.Run(c.era, func(t *testing.T) {
			evs, res := runScenarioText(t, strings.Replace(behindOneRequest, "%v", c.era, 1))
			if !res.OK() {
				t.Fatalf("expectations failed: %+v", res.Failures)
			}
			var results []Event
			for _, ev := range evs {
				if ev.Type == EvProduceResult && ev.Partition == Some(int32(1)) {
					results = append(results, ev)
				}
			}
			if len(results) != 1 || results[0].Name != c.result {
				t.Fatalf("t-1's results %+v, want one %s", results, c.result)
			}
			if c.era == "0.11.0" && results[0].T != 9001 {
				t.Errorf("B expired at %d, want 9001 (created 1000, request.timeout.ms 8000)", results[0].T)
			}
			if got := appendsTo(evs, 1); got != c.appends {
				t.Errorf("%d appends to t-1, want %d", got, c.appends)
			}
		})
	}
}

// appendsTo counts the appends to partition t-index in the trace.
func appendsTo(evs []Event, index int32) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == EvAppend && ev.Partition == Some(index) {
			n++
		}
	}
	return n
}

// TestAudit15WaitingBatchGoesToNewLeader follows RecordAccumulator.ready/drain (0.11.0.2): a batch
// not drained stays in its partition's deque, and each sendProducerData looks up the partition's
// leader again (cluster.leaderFor); only a muted partition (guaranteeMessageOrder: a batch of it in
// flight) waits for an answer. Batch B (t-1) waits at 1700 for broker 1, where the idempotent
// producer's one request (A, t-0, parked for a dead follower until ~4500) is in flight; broker 2
// leads t-1 from 2003 (operator election), and B goes there (the engine's metadata is the
// controller's at once), acknowledged at 2104. (The engine held B for broker 1's answer, sent at
// 4501.)
func TestAudit15WaitingBatchGoesToNewLeader(t *testing.T) {
	const sc = `{"name":"moved","brokers":4,"config":{"inter.broker.protocol.version":"0.11.0","enable.idempotence":true,
"zookeeper.session.timeout.ms":60000,"replica.lag.time.max.ms":3000},"topics":[{"name":"t","assignment":[[1,3],[1,2]]}],
"steps":[{"at":1000,"do":"kill","broker":3},{"at":1500,"do":"produce","topic":"t","partition":0},
{"at":1700,"do":"produce","topic":"t","partition":1},{"at":2000,"do":"elect","topic":"t","partition":1,"broker":2},
{"at":8000,"do":"expect","topic":"t","partition":0,"acked":1}]}`
	evs, res := runScenarioText(t, sc)
	if !res.OK() {
		t.Fatalf("expectations failed: %+v", res.Failures)
	}
	for _, ev := range evs {
		if ev.Type == EvProduceResult && ev.Partition == Some(int32(1)) {
			if ev.Name != ResultAcked || ev.T >= 3000 {
				t.Errorf("B: %s at %d, want acknowledged by leader 2 before 3000", ev.Name, ev.T)
			}
			return
		}
	}
	t.Error("B has no result")
}

// TestAudit15TimeoutClosesOnlyItsProducersConnection: a produce step's acks is its producer's,
// and 0.11.0's idempotent producer has acks=all (KafkaProducer.configureAcks refuses another
// value with idempotence), so an acks=1 step is another KafkaProducer, not idempotent (retries 0,
// configureRetries overrides only the idempotent one's), with a NetworkClient and connections of
// its own. NetworkClient.handleTimedOutRequests (0.11.0.2) closes the connection of the request
// that timed out and fails the requests in flight on it, not the other producer's. x01's cluster
// in 0.11.0: acks=1 A (6000) and the idempotent acks=all B (7000) wait at isolated leader 0 for
// the partition's lock; A times out at 11000 and fails NETWORK_EXCEPTION (Sender.canRetry: retries
// 0); B is not failed with it, and its first request, appended once the link heals at 11500, is
// acknowledged. (The engine failed B with A at 11000 and sent it again at 11100, and retried A as
// if its producer were the idempotent one.)
func TestAudit15TimeoutClosesOnlyItsProducersConnection(t *testing.T) {
	const sc = `{"name":"mix","brokers":3,"config":{"inter.broker.protocol.version":"0.11.0","enable.idempotence":true,
"zookeeper.session.timeout.ms":60000,"replica.lag.time.max.ms":2000,"request.timeout.ms":5000},
"topics":[{"name":"t","assignment":[[0,1,2]]}],"steps":[{"at":1000,"do":"isolate","broker":0},
{"at":2000,"do":"produce","topic":"t","partition":0,"acks":1},{"at":6000,"do":"produce","topic":"t","partition":0,"acks":1},
{"at":7000,"do":"produce","topic":"t","partition":0},{"at":11500,"do":"heal"},
{"at":17000,"do":"expect","topic":"t","partition":0,"leader":0}]}`
	_, results, attempts := runAudit14Results(t, sc)
	if results[1] != "NETWORK_EXCEPTION" || attempts[1] != 1 {
		t.Errorf("A: %s after %d attempts, want NETWORK_EXCEPTION after 1 (its timeout at 11000)", results[1], attempts[1])
	}
	if results[2] != ResultAcked || attempts[2] != 1 {
		t.Errorf("B: %s after %d attempts, want acked after 1", results[2], attempts[2])
	}
}
