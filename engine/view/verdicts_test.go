package view

import (
	"fmt"
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

// verdictOf returns the verdict of record id in partition 0 of the engine's first topic.
func verdictOf(t *testing.T, e *engine.Engine, id int64) Verdict {
	t.Helper()
	for _, v := range Build(e, Options{}).Partitions[0].Verdicts {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no verdict for record %d at %d", id, e.Now())
	return Verdict{}
}

// TestVerdictsKIP101: the acknowledged record KIP-101's first scenario loses is lost before 0.11
// (broker 1 truncated it to its high watermark, then became leader) and committed in 3.7.
func TestVerdictsKIP101(t *testing.T) {
	for _, c := range []struct{ era, verdict string }{{"0.10.2", VerdictLost}, {"0.11.0", VerdictCommitted}, {"3.7", VerdictCommitted}} {
		e := runPreset(t, "kip101-hw-truncation-"+c.era+".json")
		lost := e.Violations()
		id := int64(2) // the second record, at offset 1: the one the preset's description follows
		if len(lost) > 0 {
			id = lost[0].Records[0].ID
		}
		v := verdictOf(t, e, id)
		if v.Verdict != c.verdict || v.Acks != "all" || v.Offset != 1 {
			t.Errorf("%s: record m%d: %+v; want %s at offset 1 with acks=all", c.era, id, v, c.verdict)
		}
		t.Logf("%s: m%d %s: %s", c.era, id, v.Verdict, v.Why)
	}
}

// TestVerdictsOverTime follows two records through a failure: an acks=all record is committed,
// at risk while its leader is down and unnoticed, and committed again under the new leader; an
// acks=1 record that only the leader holds is at risk, and lost when the leader dies and the
// controller elects a follower that never got it (still in the ISR: acks=1 promised no more).
func TestVerdictsOverTime(t *testing.T) {
	src := `{"name":"v","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}]}`
	sc, err := engine.ParseScenario([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int64, actions ...string) {
		t.Helper()
		if err := e.RunUntil(ms); err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			st, err := engine.ParseStep([]byte(fmt.Sprintf(`{"at":%d,%s}`, ms, a)))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Apply(st.Action); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(id int64, verdict, why string) {
		t.Helper()
		if v := verdictOf(t, e, id); v.Verdict != verdict || v.Why != why {
			t.Errorf("at %d: m%d %s (%s); want %s (%s)", e.Now(), id, v.Verdict, v.Why, verdict, why)
		}
	}
	at(100, `"do":"produce","topic":"t","partition":0,"acks":"all"`)
	at(200)
	want(1, VerdictCommitted, "below leader 0's high watermark 1; on brokers 0, 1, 2")
	at(1000, `"do":"kill","broker":0`)
	at(1100)
	want(1, VerdictAtRisk, "leader 0 is down; live copies on brokers 1, 2")
	at(20000)
	want(1, VerdictCommitted, "below leader 1's high watermark 1; on brokers 1, 2")
	// The link between broker 2 and the new leader 1 is cut both ways (a fetch parked on the
	// leader would otherwise carry the record): an acks=1 record stays on the leader alone.
	at(21000, `"do":"link","from":2,"to":1,"down":true`, `"do":"link","from":1,"to":2,"down":true`,
		`"do":"produce","topic":"t","partition":0,"acks":1`)
	at(21100)
	want(2, VerdictAtRisk, "acks=1: only leader 1 has it (above its high watermark 1)")
	// The leader dies; its session expires at 40 s and the controller elects broker 2 (in the ISR).
	at(22000, `"do":"kill","broker":1`, `"do":"heal"`)
	at(45000)
	if l := Build(e, Options{}).Partitions[0].Leader; l != 2 {
		t.Fatalf("leader %d at 45 s, want 2", l)
	}
	want(2, VerdictLost, "not in leader 2's log, which ends at offset 1")
	want(1, VerdictCommitted, "below leader 2's high watermark 1; on broker 2")
}

// TestVerdictsBounded: verdicts come in views that list at most maxVerdictPartitions partitions
// (detail of a small cluster, an overview's focus), not in one drawing every partition of a large
// cluster, and never with noRecords.
func TestVerdictsBounded(t *testing.T) {
	sc, err := engine.ParseScenario([]byte(`{"name":"b","brokers":3,"topics":[{"name":"t","partitions":100,"replicationFactor":3}],
		"steps":[{"at":10,"do":"produce","topic":"t","partition":7}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := engine.Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(500); err != nil {
		t.Fatal(err)
	}
	verdicts := func(opt Options) int {
		n := 0
		for _, p := range Build(e, opt).Partitions {
			n += len(p.Verdicts)
		}
		return n
	}
	focus := []TP{{Topic: "t", Partition: 7}}
	if n := verdicts(Options{Focus: focus}); n != 1 {
		t.Errorf("overview focused on t-7: %d verdicts, want 1", n)
	}
	if n := verdicts(Options{DetailLimit: 1000}); n != 0 {
		t.Errorf("every one of 100 partitions in detail: %d verdicts, want none", n)
	}
	if n := verdicts(Options{Focus: focus, NoRecords: true}); n != 0 {
		t.Errorf("noRecords: %d verdicts, want none", n)
	}
}
