package engine

import (
	"slices"
	"strings"
	"testing"
)

// Audit 14: the producer's RecordAccumulator deque, for every producer.

// logIDs are the record ids of broker b's log of t-0, in offset order.
func logIDs(e *Engine, b int32) []int64 {
	p := e.partitionOf(ktTopic, 0)
	var ids []int64
	for _, r := range e.replicaOn(p.pid, b).Log().Records() {
		ids = append(ids, r.ID)
	}
	return ids
}

// backoffScenario: d01's cluster (engine/testdata/grader/d01-*): batch A (record 1) is refused
// NOT_ENOUGH_REPLICAS at 7000 while follower 2 is out of the ISR, follower 2 is back from ~8003,
// and batch B (record 2) comes at 9000, during A's 5000 ms backoff.
const backoffScenario = `{"name":"backoff","brokers":3,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":false,
"min.insync.replicas":2,"zookeeper.session.timeout.ms":6000,"retry.backoff.ms":5000,"retry.backoff.max.ms":5000},
"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[{"at":100,"do":"kill","broker":2},
{"at":7000,"do":"produce","topic":"t","partition":0},{"at":8000,"do":"restart","broker":2},
{"at":9000,"do":"produce","topic":"t","partition":0},{"at":14000,"do":"expect","topic":"t","partition":0,"isr":[1,2]}]}`

// TestAudit14RetryBackoffHoldsLaterBatch follows RecordAccumulator.reenqueue (2.1.1, 3.7.0:
// without a transaction manager the failed batch goes first, deque.addFirst) and
// RecordAccumulator.ready/drain, which look only at a deque's first batch and skip the partition
// while `first.attempts() > 0 && first.waitedTimeMs(now) < retryBackoffMs`: a batch created
// during the retry's backoff leaves after it, so A is at offset 0 and B at 1, both acknowledged
// after 12002. (The engine sent B at once and on its own: B at offset 0, acknowledged at ~9003.)
// Before 2.1 retries is 0 (Sender.canRetry): A fails, and B leaves at once.
func TestAudit14RetryBackoffHoldsLaterBatch(t *testing.T) {
	cases := []struct {
		era     string
		ids     []int64
		results []string
	}{
		{"0.10.2", []int64{2}, []string{"NOT_ENOUGH_REPLICAS", ResultAcked}},
		{"0.11.0", []int64{2}, []string{"NOT_ENOUGH_REPLICAS", ResultAcked}},
		{"2.1", []int64{1, 2}, []string{ResultAcked, ResultAcked}},
		{"3.7", []int64{1, 2}, []string{ResultAcked, ResultAcked}},
	}
	for _, c := range cases {
		t.Run(c.era, func(t *testing.T) {
			sc := strings.ReplaceAll(backoffScenario, "%v", c.era)
			if c.era == "0.10.2" {
				sc = strings.Replace(sc, `"enable.idempotence":false,`, "", 1)
			}
			e := runAudit14(t, sc)
			if got := logIDs(e, 1); !slices.Equal(got, c.ids) {
				t.Errorf("leader 1's log holds records %v, want %v", got, c.ids)
			}
			ops := e.Produces()
			for i, want := range c.results {
				if ops[i].Result != want {
					t.Errorf("batch %d: %s, want %s", i+1, ops[i].Result, want)
				}
			}
			if len(c.ids) == 2 && ops[1].Attempts != 1 {
				t.Errorf("B was sent %d times, want once (after A)", ops[1].Attempts)
			}
		})
	}
}

// leaderWaitScenario: t-0 on [1] (RF 1); broker 1 is killed at 900, batch A (record 1) comes at
// 1000 and batch B (record 2) at 1050, both with no leader to go to; broker 1 restarts at 2120
// and leads again (at once in 3.7, after its session's expiry before).
const leaderWaitScenario = `{"name":"leaderwait","brokers":2,"config":{"inter.broker.protocol.version":"%v"},
"topics":[{"name":"t","assignment":[[1]]}],"steps":[{"at":900,"do":"kill","broker":1},
{"at":1000,"do":"produce","topic":"t","partition":0},{"at":1050,"do":"produce","topic":"t","partition":0},
{"at":2120,"do":"restart","broker":1},{"at":10000,"do":"expect","topic":"t","partition":0,"leader":1}]}`

// TestAudit14LeaderWaitKeepsDequeOrder follows RecordAccumulator.ready (0.10.2.2 to 3.7.0):
// while a partition's leader cannot be sent to, nothing of its deque is drained, and once it
// can, drain takes the deque's batches from its head (pollFirst), so A leaves before B. (The
// engine had each batch look for a leader on its own every retry.backoff.ms, B 50 ms after A:
// B looked first after the leader came back, and was appended first.)
func TestAudit14LeaderWaitKeepsDequeOrder(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := runAudit14(t, strings.ReplaceAll(leaderWaitScenario, "%v", era))
			if got := logIDs(e, 1); !slices.Equal(got, []int64{1, 2}) {
				t.Errorf("leader 1's log holds records %v, want [1 2]", got)
			}
			for _, op := range e.Produces() {
				if op.Result != ResultAcked {
					t.Errorf("batch %d: %s, want acked", op.ID, op.Result)
				}
			}
		})
	}
}

// inFlightScenario: d02's cluster (engine/testdata/grader/d02-*): t-0 on [1] (RF 1), every link
// 1000 ms; seven produce steps to t-0 at 1000, each its own batch.
const inFlightScenario = `{"name":"inflight","brokers":2,"config":{"inter.broker.protocol.version":"%v","sim.network.latency.ms":1000},
"topics":[{"name":"t","assignment":[[1]]}],"steps":[
{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},
{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},
{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},
{"at":1000,"do":"produce","topic":"t","partition":0,"acks":%a},{"at":6000,"do":"expect","topic":"t","partition":0,"leader":1}]}`

// TestAudit14FiveRequestsInFlightPerConnection follows NetworkClient.isReady →
// InFlightRequests.canSendMore (`queue.size() < maxInFlightRequestsPerConnection`, 0.10.2.2 to
// 3.7.0; max.in.flight.requests.per.connection 5 by default, and at most 5 for the idempotent
// producer from 1.0) with RecordAccumulator.drain taking one batch per partition per request:
// seven batches of one partition need seven requests, five leave at 1000 and are answered at
// 3000, the other two leave then and are answered at 5000. An acks=0 request leaves the in-flight
// queue once written (NetworkClient.handleCompletedSends: `!request.expectResponse`), so seven
// acks=0 batches all leave at 1000 and reach the leader at 2000. (The engine had no cap: all seven
// acks=all batches reached the leader at 2000 and were answered at 3000.)
func TestAudit14FiveRequestsInFlightPerConnection(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		for _, acks := range []string{`"all"`, "0"} {
			t.Run(era+"-acks-"+acks, func(t *testing.T) {
				sc := strings.NewReplacer("%v", era, "%a", acks).Replace(inFlightScenario)
				s, err := ParseScenario([]byte(sc))
				if err != nil {
					t.Fatal(err)
				}
				var appended []int64 // when each record reached the leader's log
				var results []int64
				e, res, err := Run(s, func(evs []Event) {
					for i := range evs {
						switch {
						case evs[i].Type == EvProduceResult:
							results = append(results, evs[i].T)
						case evs[i].Type == "produce" && evs[i].Message != nil && evs[i].Message.Produce != nil:
							appended = append(appended, evs[i].Message.Deliver)
						}
					}
				})
				if err != nil || !res.OK() {
					t.Fatalf("run: %v %+v", err, res.Failures)
				}
				want := []int64{2000, 2000, 2000, 2000, 2000, 4000, 4000}
				wantResults := []int64{3000, 3000, 3000, 3000, 3000, 5000, 5000}
				if acks == "0" {
					want = []int64{2000, 2000, 2000, 2000, 2000, 2000, 2000}
					wantResults = []int64{1000, 1000, 1000, 1000, 1000, 1000, 1000}
				}
				if !slices.Equal(appended, want) {
					t.Errorf("the Produces reached the leader at %v, want %v", appended, want)
				}
				if !slices.Equal(results, wantResults) {
					t.Errorf("results at %v, want %v", results, wantResults)
				}
				if got := logIDs(e, 1); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6, 7}) {
					t.Errorf("leader 1's log holds records %v, want 1-7", got)
				}
			})
		}
	}
}

// TestAudit14OneRequestCarriesABatchPerPartition follows RecordAccumulator.drain
// (drainBatchesForOneNode: one request per broker with the first batch of each partition, 2.1.1;
// the same loop in 0.10.2.2, 0.11.0.2 and 3.7.0): six batches each of t-0 and t-1, both led by
// broker 1, at one instant take six requests of two batches, not twelve: five leave at once (ten
// batches), and the sixth of each once the first answers came back.
func TestAudit14OneRequestCarriesABatchPerPartition(t *testing.T) {
	steps := ""
	for range 6 {
		steps += `{"at":1000,"do":"produce","topic":"t","partition":0},{"at":1000,"do":"produce","topic":"t","partition":1},`
	}
	sc := `{"name":"two","brokers":2,"config":{"inter.broker.protocol.version":"2.1","sim.network.latency.ms":1000},
"topics":[{"name":"t","assignment":[[1],[1]]}],"steps":[` + steps + `{"at":6000,"do":"expect","topic":"t","partition":0,"leader":1}]}`
	s, err := ParseScenario([]byte(sc))
	if err != nil {
		t.Fatal(err)
	}
	var reached []int64
	if _, res, err := Run(s, func(evs []Event) {
		for i := range evs {
			if evs[i].Type == "produce" && evs[i].Message != nil && evs[i].Message.Produce != nil {
				reached = append(reached, evs[i].Message.Deliver)
			}
		}
	}); err != nil || !res.OK() {
		t.Fatalf("run: %v %+v", err, res)
	}
	want := []int64{2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 4000, 4000}
	if !slices.Equal(reached, want) {
		t.Errorf("the Produces reached the leader at %v, want %v", reached, want)
	}
}

// reversedScenario: batches A (record 1) and B (record 2) of t-0 leave at 7000 while follower 2
// is out of the ISR (min.insync.replicas 2), both are refused NOT_ENOUGH_REPLICAS (answers at
// 7002, A's first), and follower 2 is back in the ISR from ~7053.
const reversedScenario = `{"name":"reversed","brokers":3,"config":{"inter.broker.protocol.version":"%v","enable.idempotence":%i,
"min.insync.replicas":2,"zookeeper.session.timeout.ms":6000},
"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[{"at":100,"do":"kill","broker":2},
{"at":7000,"do":"produce","topic":"t","partition":0},{"at":7000,"do":"produce","topic":"t","partition":0},
{"at":7050,"do":"restart","broker":2},{"at":9000,"do":"expect","topic":"t","partition":0,"isr":[1,2],"acked":2}]}`

// TestAudit14RetriesReenqueuedAtTheHead follows RecordAccumulator.reenqueue (2.1.1, 3.7.0):
// without a transaction manager each failed batch goes first (addFirst), so A, then B, failing
// leave the deque [B, A], and drain sends B before A (Kafka's reordering with retries and more
// than one request in flight: B at offset 0, A at 1). The idempotent producer puts a retry in
// sequence order (insertInSequenceOrder): A before B. (The engine retried each on its own, A
// first, without idempotence too.)
func TestAudit14RetriesReenqueuedAtTheHead(t *testing.T) {
	cases := []struct {
		era, idem string
		ids       []int64
	}{
		{"2.1", "false", []int64{2, 1}},
		{"3.7", "false", []int64{2, 1}},
		{"2.1", "true", []int64{1, 2}},
		{"3.7", "true", []int64{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.era+"-idem-"+c.idem, func(t *testing.T) {
			e := runAudit14(t, strings.NewReplacer("%v", c.era, "%i", c.idem).Replace(reversedScenario))
			if got := logIDs(e, 1); !slices.Equal(got, c.ids) {
				t.Errorf("leader 1's log holds records %v, want %v", got, c.ids)
			}
		})
	}
}
