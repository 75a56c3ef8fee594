package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunContractExitCodes: `highwater run`'s exit codes and messages, clause by clause of the
// contract (../shared/docs/scenario-format.md, "CLI"): 0 every expectation held; 1 an expectation
// failed or an unexpected violation, the message naming the step (index and at), the field, the
// expected and the actual value; 2 not a valid scenario (bad JSON, unknown field, unknown action
// or config name, id out of range, times going backwards), the message naming the field and why.
func TestRunContractExitCodes(t *testing.T) {
	const topics = `"topics":[{"name":"t","partitions":1,"replicationFactor":3}]`
	sc := func(extra, steps string) string {
		return `{"name":"c","brokers":3,` + topics + extra + `,"steps":[` + steps + `]}`
	}
	for _, c := range []struct {
		name, file string
		code       int
		msg        string
	}{
		{"valid", sc("", `{"at":100,"do":"produce","topic":"t","partition":0},{"at":1000,"do":"expect","topic":"t","partition":0,"acked":1,"isr":[0,1,2]}`), 0, ""},
		{"bad JSON", `{"name":"c",`, 2, "not valid JSON"},
		{"unknown field", `{"name":"c","brokers":3,` + topics + `,"sead":1}`, 2, "sead: unknown field"},
		{"unknown step field", sc("", `{"at":0,"do":"kill","broker":1,"force":true}`), 2, `steps[0].force: not a field of "kill"`},
		{"unknown action", sc("", `{"at":0,"do":"reboot","broker":1}`), 2, `steps[0].do: unknown action "reboot"`},
		{"unknown config", sc(`,"config":{"replica.lag.max.ms":1}`, ``), 2, "config.replica.lag.max.ms: unknown config name"},
		{"broker out of range", sc("", `{"at":0,"do":"kill","broker":3}`), 2, "steps[0].broker: broker 3 is out of range 0..2"},
		{"assignment out of range", `{"name":"c","brokers":3,"topics":[{"name":"t","assignment":[[0,3]]}]}`, 2, "topics[0].assignment[0][1]: broker 3 is out of range 0..2"},
		{"times backwards", sc("", `{"at":200,"do":"kill","broker":1},{"at":100,"do":"restart","broker":1}`), 2, "steps[1].at: 100 is before the previous step's 200"},
		{"expectation failed", sc("", `{"at":100,"do":"expect","topic":"t","partition":0,"leader":2}`), 1, "steps[0] (at 100): leader: expected 2, actual 0"},
		{"unexpected violation", `{"name":"c","brokers":2,"config":{"unclean.leader.election.enable":true,"controlled.shutdown.max.retries":1},"topics":[{"name":"t","assignment":[[0,1]]}],"steps":[
			{"at":1000,"do":"shutdown","broker":1},{"at":2000,"do":"produce","topic":"t","partition":0},{"at":3000,"do":"shutdown","broker":0},
			{"at":4000,"do":"restart","broker":1},{"at":5000,"do":"expect","topic":"t","partition":0,"leader":1}]}`, 1, `violations: expected no violation that no expect step lists, actual ["acked-write-lost"`},
		// Actions on a broker already in the state they ask for: no error in the contract's list.
		{"restart a running broker", sc("", `{"at":100,"do":"restart","broker":1},{"at":200,"do":"expect","topic":"t","partition":0,"leader":0,"isr":[0,1,2]}`), 0, ""},
		{"shutdown a dead broker", sc("", `{"at":100,"do":"kill","broker":1},{"at":200,"do":"shutdown","broker":1},{"at":300,"do":"isolate","broker":2},{"at":400,"do":"isolate","broker":2}`), 0, ""},
		// null is a field not given.
		{"nulls", sc(`,"description":null,"seed":null,"duration":null`, `{"at":100,"do":"expect","topic":"t","partition":0,"isr":null,"violations":null,"leader":0}`), 0, ""},
		// inter.broker.protocol.version's internal versions.
		{"3.7-IV4", sc(`,"config":{"inter.broker.protocol.version":"3.7-IV4"}`, ``), 0, ""},
		{"2.1-IV2", sc(`,"config":{"inter.broker.protocol.version":"2.1-IV2"}`, ``), 0, ""},
		{"0.11.0-IV0", sc(`,"config":{"inter.broker.protocol.version":"0.11.0-IV0"}`, ``), 2, "config.inter.broker.protocol.version: \"0.11.0-IV0\" is a valid Kafka version, but not a modelled era"},
		{"3.7-IV9", sc(`,"config":{"inter.broker.protocol.version":"3.7-IV9"}`, ``), 2, "config.inter.broker.protocol.version: \"3.7-IV9\" is not one of"},
		{"controlled.shutdown.enable", sc(`,"config":{"controlled.shutdown.enable":"false"}`, `{"at":100,"do":"shutdown","broker":1}`), 0, ""},
		{"assignment and counts", `{"name":"c","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":2,"assignment":[[2,1]]}],"steps":[{"at":10,"do":"expect","topic":"t","partition":0,"leader":2}]}`, 0, ""},
		{"assignment and other counts", `{"name":"c","brokers":3,"topics":[{"name":"u","partitions":1,"replicationFactor":1},{"name":"t","partitions":2,"assignment":[[2,1]]}]}`, 2, "topics[1].partitions: 2, but the assignment lists 1 partitions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(file, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := runScenario([]string{file}, &out, &errOut)
			if code != c.code || !strings.Contains(errOut.String(), c.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errOut.String(), c.code, c.msg)
			}
		})
	}
}
