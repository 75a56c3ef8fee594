package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRulesKeptUpToDate: the rules every broker reads in place (Engine.rules, lent through
// brk.Cluster.RuleBook) are the ones their inputs make, at the end of every preset's run and after a
// config step that changes every setting they read: an input written without setRules fails
// here.
func TestRulesKeptUpToDate(t *testing.T) {
	set := map[string]json.RawMessage{}
	for name, v := range map[string]string{"replica.fetch.backoff.ms": "7", "replica.fetch.wait.max.ms": "123",
		"replica.fetch.min.bytes": "3", "unclean.leader.election.enable": "true", "num.replica.fetchers": "3",
		"replica.high.watermark.checkpoint.interval.ms": "777", "replica.fetch.max.bytes": "4321",
		"sim.record.size.bytes": "11", "max.incremental.fetch.session.cache.slots": "9",
		"replica.lag.time.max.ms": "4444", "retry.backoff.ms": "0", "min.insync.replicas": "2",
		"controlled.shutdown.max.retries": "5", "controlled.shutdown.retry.backoff.ms": "55"} {
		set[name] = json.RawMessage(v)
	}
	for _, c := range presetCases(t, "") {
		e, err := New(c.sc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.RunSteps(c.sc, func([]Event) {}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkRulesKept(t, c.name, e)
		mustApply(t, e, Action{Do: "config", Set: set})
		checkRulesKept(t, c.name+", after a config step", e)
		if r := &e.rules; r.Fetcher.BackoffMs != 7 || r.HW.MinInsyncReplicas != 2 || r.Isr.LagTimeMaxMs != 4444 || r.Process.ControlledShutdownMaxRetries != 5 {
			t.Errorf("%s: the config step did not reach the rules: %+v", c.name, e.rules)
		}
	}
}

// checkRulesKept fails unless e's kept rules equal fresh ones and every broker reads them.
func checkRulesKept(t *testing.T, name string, e *Engine) {
	t.Helper()
	if fresh := e.freshRules(); !reflect.DeepEqual(e.rules, fresh) {
		t.Errorf("%s: the kept rules are %+v, their inputs make %+v", name, e.rules, fresh)
	}
	for _, b := range e.brokers {
		h := b.Broker
		if !reflect.DeepEqual(h.Rules(), e.rules.Fetcher) || !reflect.DeepEqual(h.ReplicaRules(), e.rules.Replica) ||
			!reflect.DeepEqual(h.LeaderFetchRules(), e.rules.LeaderFetch) || h.IsrRules() != e.rules.Isr ||
			h.HWRules() != e.rules.HW || h.ProcessRules() != e.rules.Process {
			t.Errorf("%s: broker %d reads rules other than the engine's", name, b.id)
		}
	}
}
