package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The idempotent producer (enable.idempotence, KIP-98, 0.11.0; on by default in 3.0+ clients,
// KIP-679, ProducerConfig): a leader does not append a retried batch it already has. 3.7.0
// UnifiedLog.append: analyzeAndValidateProducerState finds the batch among the producer's last
// cached ones (ProducerStateEntry.findDuplicateBatch), the append is skipped and the answer
// carries the original batch's first and last offsets; ReplicaManager.appendRecords parks an
// acks=all answer until the HW reaches lastOffset + 1, as for any append. The min.insync check of
// Partition.appendRecordsToLeader comes first.

// idemScenario: broker 2 stops fetching from leader 1 (its link cut), a batch of 2 reaches
// leader 1 and follower 0 but is not committed (2 is still in the ISR), then leader 1 shuts down:
// 0 leads in epoch 1 with the batch, the producer's acks=all request fails NOT_LEADER and its
// retry reaches 0.
const idemScenario = `{"name":"idem","brokers":3,"topics":[{"name":"t","assignment":[[1,0,2]]}],"config":%s,
"steps":[{"at":900,"do":"link","from":2,"to":1,"down":true},{"at":1000,"do":"produce","topic":"t","partition":0,"count":2},
{"at":2000,"do":"shutdown","broker":1},{"at":3000,"do":"expect","topic":"t","partition":0,"acked":2}]}`

// runIdem plays idemScenario with config cfg (JSON) and returns the engine, broker 0's log as
// record epochs, and the trace's texts.
func runIdem(t *testing.T, cfg string) (*Engine, []int32, []string) {
	t.Helper()
	sc, err := ParseScenario([]byte(strings.Replace(idemScenario, "%s", cfg, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	e, res, err := Run(sc, func(evs []Event) {
		for i := range evs {
			texts = append(texts, evs[i].Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("expectations failed: %+v", res.Failures)
	}
	p := e.partitionOf(ktTopic, 0)
	var epochs []int32
	for _, r := range e.replicaOn(p.pid, 0).Log().Records() {
		epochs = append(epochs, r.Epoch)
	}
	return e, epochs, texts
}

// TestAuditIdempotentRetryNotAppendedTwice: 3.7's client is idempotent, so the retry is found
// at offsets 0..1 and acknowledged there: the log stays [0 0]. 2.1's contemporary client is not
// (and 3.7 with enable.idempotence false): the retry is appended again in epoch 1.
func TestAuditIdempotentRetryNotAppendedTwice(t *testing.T) {
	cases := []struct {
		name, cfg string
		epochs    []int32
		base      int64
		dup       bool
	}{
		{"3.7", `{}`, []int32{0, 0}, 0, true},
		{"3.7-off", `{"enable.idempotence":false}`, []int32{0, 0, 1, 1}, 2, false},
		{"2.1", `{"inter.broker.protocol.version":"2.1"}`, []int32{0, 0, 1, 1}, 2, false},
		{"2.1-on", `{"inter.broker.protocol.version":"2.1","enable.idempotence":true}`, []int32{0, 0}, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, epochs, texts := runIdem(t, c.cfg)
			if !slices.Equal(epochs, c.epochs) {
				t.Fatalf("broker 0's log epochs %v, want %v", epochs, c.epochs)
			}
			ops := e.Produces()
			if len(ops) != 1 || ops[0].Result != ResultAcked || ops[0].BaseOffset != c.base || ops[0].Attempts != 2 {
				t.Fatalf("produce %+v, want acked at %d after 2 attempts", ops, c.base)
			}
			const want = "leader 0 found t-0's batch already at offsets 0..1 (idempotent producer, a retry): not appended again"
			if got := slices.Contains(texts, want); got != c.dup {
				t.Fatalf("narration has %q: %v, want %v", want, got, c.dup)
			}
		})
	}
}

// TestAuditIdempotentRetryWaitsForHW: the found batch, answered with acks=all, waits in the
// produce purgatory until the HW passes its end (ReplicaManager.appendRecords' required offset
// lastOffset + 1), as an append does: with follower 2 cut off from the new leader too, the ISR
// shrinks to [0] first, and the answer comes only then.
func TestAuditIdempotentRetryWaitsForHW(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{1, 0, 2}}, map[string]string{"replica.lag.time.max.ms": "5000"})
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 900)
	apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
	apply(t, e, `{"do":"link","from":2,"to":0,"down":true}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"shutdown","broker":1}`)
	runFor(t, e, 1000)
	op := e.Produces()[0]
	if op.Done {
		t.Fatalf("produce %+v answered at 3000, want it parked (follower 2 still in the ISR, HW 0)", op)
	}
	if leo := e.replicaOn(p.pid, 0).Log().LogEndOffset(); leo != 2 {
		t.Fatalf("leader 0's LEO %d, want 2 (the retry not appended)", leo)
	}
	runFor(t, e, 10000) // 2 leaves the ISR after replica.lag.time.max.ms; the HW moves to 2
	op = e.Produces()[0]
	if op.Result != ResultAcked || op.BaseOffset != 0 {
		t.Fatalf("produce %+v, want acked at offset 0", op)
	}
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0}) {
		t.Fatalf("ISR %v, want [0]", isr)
	}
}

// TestAuditEnableIdempotenceConfig: enable.idempotence defaults to the era's contemporary
// client's (3.0+ ProducerConfig: true; before: false), and true needs message format v2, which
// 0.10.2 brokers lack.
func TestAuditEnableIdempotenceConfig(t *testing.T) {
	for era, want := range map[string]bool{"0.10.2": false, "0.11.0": false, "2.1": false, "3.7": true} {
		cfg, err := NewConfig(map[string]json.RawMessage{ibpName: json.RawMessage(`"` + era + `"`)})
		if err != nil || cfg.EnableIdempotence != want {
			t.Errorf("%s: enable.idempotence %v (%v), want %v", era, cfg.EnableIdempotence, err, want)
		}
	}
	if cfg, _ := NewConfig(nil); !cfg.EnableIdempotence {
		t.Error("default (3.7): enable.idempotence false, want true")
	}
	_, err := NewConfig(map[string]json.RawMessage{ibpName: json.RawMessage(`"0.10.2"`), "enable.idempotence": json.RawMessage(`true`)})
	if err == nil || !strings.Contains(err.Error(), "config.enable.idempotence") {
		t.Errorf("0.10.2 with enable.idempotence true: %v, want an error naming config.enable.idempotence", err)
	}
	if _, err := NewConfig(map[string]json.RawMessage{ibpName: json.RawMessage(`"0.11.0"`), "enable.idempotence": json.RawMessage(`true`)}); err != nil {
		t.Errorf("0.11.0 with enable.idempotence true: %v", err)
	}
	// A config step cannot turn it on in 0.10.2 either.
	e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, eraCfg("0.10.2"))
	if err := e.setConfig(map[string]json.RawMessage{"enable.idempotence": json.RawMessage(`true`)}); err == nil ||
		!strings.Contains(err.Error(), "set.enable.idempotence") {
		t.Errorf("config step enable.idempotence true in 0.10.2: %v, want an error naming set.enable.idempotence", err)
	}
}
