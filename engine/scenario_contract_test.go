package engine

import (
	"reflect"
	"strings"
	"testing"
)

// Clauses of the scenario contract (../shared/docs/scenario-format.md) that an audit found the
// CLI did not keep.

const contractHead = `"name":"c","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}]`

func runContract(t *testing.T, steps string) Result {
	t.Helper()
	sc, err := ParseScenario([]byte(`{` + contractHead + `,"steps":[` + steps + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestContractBadAcksNamesTheField: exit 2's message "names the field and why"; a bad acks said
// `steps[0].want "all", 1 or 0, got 2`, without the field's name.
func TestContractBadAcksNamesTheField(t *testing.T) {
	for _, acks := range []string{`2`, `"ALL"`, `true`} {
		_, err := ParseScenario([]byte(`{` + contractHead + `,"steps":[{"at":0,"do":"produce","topic":"t","partition":0,"acks":` + acks + `}]}`))
		if err == nil || !strings.HasPrefix(err.Error(), "steps[0].acks: ") {
			t.Errorf("acks %s: error %v, want one naming steps[0].acks", acks, err)
		}
	}
}

// TestContractISRAndViolationsAreSets: expect's `isr` is checked "as a set" and `violations` is
// "the exact set": a member listed twice is the same set (it failed: expected [0,1,1,2], actual
// [0,1,2]).
func TestContractISRAndViolationsAreSets(t *testing.T) {
	res := runContract(t, `{"at":100,"do":"expect","topic":"t","partition":0,"isr":[2,0,1,1],"violations":[]}`)
	if !res.OK() {
		t.Fatalf("isr [2,0,1,1] is the set {0,1,2}: %v", res.Failures)
	}
	res = runContract(t, `{"at":100,"do":"expect","topic":"t","partition":0,"isr":[0,1,1]}`)
	if len(res.Failures) != 1 || res.Failures[0].Field != "isr" {
		t.Fatalf("isr {0,1} against {0,1,2}: %v", res.Failures)
	}
	sc, err := ParseScenario([]byte(`{"name":"u","brokers":3,"config":{"unclean.leader.election.enable":true,"controlled.shutdown.max.retries":1},
		"topics":[{"name":"t","assignment":[[0,1]]}],"steps":[
		{"at":1000,"do":"shutdown","broker":1},{"at":2000,"do":"produce","topic":"t","partition":0},
		{"at":3000,"do":"shutdown","broker":0},{"at":4000,"do":"restart","broker":1},
		{"at":5000,"do":"expect","violations":["acked-write-lost","acked-write-lost"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, res, err = Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		if f.Field == "violations" && f.Step >= 0 {
			t.Fatalf("a violation listed twice is the set of one: %v", f)
		}
	}
}

// TestContractUnexpectedViolationNamesIt: exit 1's message names the field, the expected and the
// actual value; the actual value of `violations` is a set of invariant names, which the message
// for a violation no expect step lists did not give (only the violation's narration).
func TestContractUnexpectedViolationNamesIt(t *testing.T) {
	sc, err := ParseScenario([]byte(`{"name":"u","brokers":3,"config":{"unclean.leader.election.enable":true,"controlled.shutdown.max.retries":1},
		"topics":[{"name":"t","assignment":[[0,1]]}],"steps":[
		{"at":1000,"do":"shutdown","broker":1},{"at":2000,"do":"produce","topic":"t","partition":0},
		{"at":3000,"do":"shutdown","broker":0},{"at":4000,"do":"restart","broker":1},
		{"at":5000,"do":"expect","topic":"t","partition":0,"leader":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 {
		t.Fatalf("want one failure, the unexpected violation: %v", res.Failures)
	}
	if s := res.Failures[0].String(); !strings.Contains(s, `violations: expected `) || !strings.Contains(s, `actual ["acked-write-lost"] (at `) {
		t.Fatalf("the message does not name the invariant: %s", s)
	}
}

// TestLenientNumbersAndBOM: a file whose whole numbers are written 1500.0 or 1.5e3 (a script's
// JSON writer), or that starts with a UTF-8 byte order mark, parses to the same scenario as its
// plain twin, through ParseScenario and ParseScenarioHead; a number that is not whole still
// fails, naming its field, and a string's digits are left alone.
func TestLenientNumbersAndBOM(t *testing.T) {
	plain := `{"name":"n 1.0","seed":2,"brokers":3,"topics":[{"name":"t","partitions":2,"replicationFactor":3}],` +
		`"config":{"replica.lag.time.max.ms":10000},"duration":5000,` +
		`"steps":[{"at":1500,"do":"produce","topic":"t","partition":1,"count":2},{"at":1500,"do":"caption","text":"at 2.0e3"}]}`
	want, err := ParseScenario([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{
		strings.NewReplacer(`"seed":2`, `"seed":2.0`, `"brokers":3`, `"brokers":3.0`, `10000}`, `1e4}`,
			`"duration":5000`, `"duration":5.0e3`, `"at":1500`, `"at":1500.0`, `"count":2`, `"count":2.00`).Replace(plain),
		"\xEF\xBB\xBF" + plain,
	} {
		got, err := ParseScenario([]byte(variant))
		if err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: parsed %+v, want %+v", variant, got, want)
		}
		head, err := ParseScenarioHead([]byte(variant))
		if err != nil || head.Brokers != 3 || head.Seed != 2 || head.Duration != 5000 {
			t.Errorf("%s: head %+v, %v", variant, head, err)
		}
	}
	if got := want.Steps[1].Action.Text; got != "at 2.0e3" {
		t.Errorf("caption text %q: a string's number was rewritten", got)
	}
	_, err = ParseScenario([]byte(strings.Replace(plain, `"at":1500,"do":"produce"`, `"at":1500.5,"do":"produce"`, 1)))
	if err == nil || !strings.Contains(err.Error(), "steps[0]") {
		t.Errorf("a fractional at: error %v, want one naming steps[0]", err)
	}
}
