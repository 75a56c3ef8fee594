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

// TestAudit10DivergenceAtHWTruncation: before KIP-101 a follower's high watermark is final once
// it has truncated to it on becoming follower (0.10.2.2 ReplicaManager.makeFollowers:
// logManager.truncateTo(... highWatermark), the HW being the checkpoint's after a restart:
// Partition.getOrCreateReplica: the checkpoint, at most the LEO); nothing later truncates below
// it, so the contract's committed-divergence ("different records at an offset below both their
// high watermarks") holds from that moment. KIP-101's scenario 2 (the preset
// kip101-divergence-0.10.2): broker 0 returns at 32000 with m2 at offset 1 and HW 2, becomes
// follower of leader 1 (m3 at offset 1, HW 2) at 32003 (its first LeaderAndIsr waits for the
// answer to onBrokerStartup's UpdateMetadata, a round trip) and keeps m2. The engine waited for its
// first fetch answer (32503, the leader parks an empty fetch replica.fetch.wait.max.ms) to count
// that HW. From 0.11.0 the epoch round truncates m2 first, so there is no divergence (the preset
// kip101-divergence-0.11.0 still expects none).
func TestAudit10DivergenceAtHWTruncation(t *testing.T) {
	runCheckerScenario(t, `{"name":"KIP-101 scenario 2 (0.10.2)","seed":1,"brokers":3,
	"config":{"inter.broker.protocol.version":"0.10.2","log.flush.interval.messages":1,"auto.leader.rebalance.enable":false},
	"topics":[{"name":"t","assignment":[[0,1]]}],"steps":[
	{"at":100,"do":"produce","topic":"t","partition":0,"count":1},
	{"at":1000,"do":"link","from":0,"to":1,"latencyMs":3000},
	{"at":1200,"do":"produce","topic":"t","partition":0,"count":1},
	{"at":1300,"do":"config","set":{"log.flush.interval.messages":1000000}},
	{"at":10500,"do":"expect","topic":"t","partition":0,"acked":2,"replicas":{"0":{"leo":2,"hw":2},"1":{"leo":2}}},
	{"at":11000,"do":"kill","broker":0,"loseUnflushed":true},
	{"at":11000,"do":"kill","broker":1,"loseUnflushed":true},
	{"at":29500,"do":"heal"},
	{"at":30000,"do":"restart","broker":1},
	{"at":31000,"do":"produce","topic":"t","partition":0,"count":1},
	{"at":32000,"do":"restart","broker":0},
	{"at":32000,"do":"expect","topic":"t","partition":0,"violations":["acked-write-lost"]},
	{"at":32003,"do":"expect","topic":"t","partition":0,"leader":1,
	 "replicas":{"0":{"leo":2,"hw":2,"epochs":[0,0]},"1":{"leo":2,"hw":2,"epochs":[0,1]}},
	 "violations":["acked-write-lost","committed-divergence"]}]}`)
}
