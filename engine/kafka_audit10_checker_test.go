package engine

import (
	"fmt"
	"testing"
)

// Audit 10, the invariant checker against the scenario contract's definitions
// (../shared/docs/scenario-format.md), with each era's Kafka (tags 0.10.2.2, 0.11.0.2, 2.1.1,
// 3.7.0) deciding what the cluster does. Each test names the Kafka function it follows.

// runCheckerScenario runs a scenario file's text and fails the test on any failed expectation
// (an unexpected violation included).
func runCheckerScenario(t *testing.T, src string) *Engine {
	t.Helper()
	sc, err := ParseScenario([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e, res, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("%v", res.Failures)
	}
	return e
}

// TestAudit10ConsumedAfterElection: consumed-record-changed is "a record that a consumer read is
// no longer at its offset in the log of the partition's leader", so a read whose answer reaches
// the consumer after the leader changed is checked against the new leader's log. Leader 1 alone
// in the ISR (follower 2's fetches are cut: the ISR shrink, 0.10.2.2/0.11.0.2/2.1.1
// Partition.maybeShrinkIsr, 3.7.0 through AlterPartition) commits an acks=1 record at offset 1
// (maybeIncrementLeaderHW over an ISR of one); a consumer's fetch reads offsets 0 and 1 from it at
// 26001 (Partition.readRecords up to the HW), and the operator's unclean election of broker 2
// (which lacks offset 1) lands the same millisecond, after the read. The answer reaches the
// consumer at 26002, when the leader's log no longer holds record 2 at offset 1: the violation
// is then. The engine checked consumed records only at a leader's truncation or election, both
// before the read was recorded, so it never reported it.
func TestAudit10ConsumedAfterElection(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := runCheckerScenario(t, fmt.Sprintf(`{"name":"read, then elected away","brokers":3,
			"config":{"inter.broker.protocol.version":%q,"replica.lag.time.max.ms":10000,"auto.leader.rebalance.enable":false},
			"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[
			{"at":100,"do":"produce","topic":"t","partition":0,"count":1},
			{"at":200,"do":"link","from":2,"to":1,"down":true},
			{"at":20000,"do":"produce","topic":"t","partition":0,"count":1,"acks":1},
			{"at":26000,"do":"expect","topic":"t","partition":0,"leader":1,"isr":[1],"replicas":{"1":{"leo":2,"hw":2},"2":{"leo":1,"hw":1}}},
			{"at":26000,"do":"consume","topic":"t","partition":0},
			{"at":26001,"do":"elect","topic":"t","partition":0,"broker":2,"unclean":true},
			{"at":26001,"do":"expect","topic":"t","partition":0,"leader":2,"violations":[]},
			{"at":26002,"do":"expect","topic":"t","partition":0,"violations":["consumed-record-changed"]}]}`, era))
			if cs := e.Consumes(1); len(cs) != 1 || len(cs[0].Records) != 2 {
				t.Fatalf("consumes %+v, want one read of 2 records", cs)
			}
		})
	}
}
