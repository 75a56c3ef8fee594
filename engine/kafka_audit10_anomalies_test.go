package engine

import (
	"fmt"
	"testing"
)

// Audit 10, the famous anomalies (KIP-101, KIP-279, KIP-320/KAFKA-6880, KAFKA-7128, KAFKA-3410,
// KAFKA-2143, ...) replayed in the era before their fix and after it, against each era's Kafka
// (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). The grader-style files are in testdata/grader/a*.json.

// zombieFollowerScenario is KAFKA-6880's zombie follower (KIP-320): broker 2 misses every
// LeaderAndIsr (the controller's link to it is cut at 1200) and keeps fetching from broker 1 in
// leader epoch 0, holding records 5..9 that broker 1 wrote at epoch 0 and later truncated (1
// followed broker 3, elected at epoch 2, whose own 5..9 it fetched); broker 1 leads again from
// epoch 4 (operator elections at 1300 and 5000). The records of topic u keep broker 3's fetcher
// thread busy, so its becoming leader does not wait for the thread's in-flight fetch.
func zombieFollowerScenario(era string, tail string) string {
	return fmt.Sprintf(`{"name":"KAFKA-6880 zombie follower","brokers":4,
	"config":{"inter.broker.protocol.version":%q,"auto.leader.rebalance.enable":false},
	"topics":[{"name":"t","assignment":[[1,2,3]]},{"name":"u","assignment":[[1,3]]}],"steps":[
	{"at":100,"do":"produce","topic":"t","partition":0,"count":5},
	{"at":500,"do":"link","from":3,"to":1,"latencyMs":3000},
	{"at":1100,"do":"produce","topic":"t","partition":0,"count":5,"acks":1},
	{"at":1200,"do":"link","from":0,"to":2,"down":true},
	{"at":1300,"do":"link","from":3,"to":1,"latencyMs":1},
	{"at":1300,"do":"elect","topic":"t","partition":0,"broker":3},
	{"at":1500,"do":"produce","topic":"t","partition":0,"count":5,"acks":1},
	{"at":5000,"do":"elect","topic":"t","partition":0,"broker":1},
	%s]}`, era, tail)
}

// TestAudit10ZombieFollowerDivergence: before KIP-320 (2.1) a Fetch carries no leader epoch, so
// a leader answers a follower that never heard of its epoch (0.11.0.2 ReplicaManager.fetchMessages
// -> readFromLocalLog asks only getLeaderReplicaIfLocal; Partition.updateReplicaLogReadResult counts
// the fetch), and the follower takes the leader's HW (0.11.0.2 ReplicaFetcherThread.processPartitionData:
// min(LEO, leader HW)). Zombie broker 2 (epoch 0, records 5..9 of epoch 0) fetches at 10 from
// broker 1 (epoch 4, records 5..9 of epoch 2): its fetch at 10 counts it caught up, leader 1's HW
// goes to 10 and broker 2 learns HW 10 at 5812. Two live replicas now hold different records below
// both HWs: the contract's committed-divergence. The checker compared only replicas in the same
// leader epoch as each knows it (0 against 4), so it never reported it; the follower's HW comes from
// the answer of the leader in epoch 4, and is compared as such. From 2.1 the fetch carries epoch 0
// and the leader answers FENCED_LEADER_EPOCH (2.1.1 Partition.readRecords ->
// localReplicaWithEpochOrException): broker 2 never gets HW 10, and after the heal its LeaderAndIsr
// makes it truncate to 5 (OffsetsForLeaderEpoch) in both eras.
func TestAudit10ZombieFollowerDivergence(t *testing.T) {
	for _, c := range []struct{ era, violations, hw2 string }{
		{"0.11.0", `["committed-divergence"]`, "10"},
		{"2.1", `[]`, "5"},
	} {
		t.Run(c.era, func(t *testing.T) {
			runCheckerScenario(t, zombieFollowerScenario(c.era, fmt.Sprintf(`
			{"at":6000,"do":"expect","topic":"t","partition":0,"leader":1,"leaderEpoch":4,"isr":[1,2,3],
			 "replicas":{"1":{"leo":10,"epochs":[0,0,0,0,0,2,2,2,2,2]},"2":{"leo":10,"hw":%s,"epochs":[0,0,0,0,0,0,0,0,0,0]}},
			 "violations":%s},
			{"at":20000,"do":"heal"},
			{"at":30000,"do":"expect","topic":"t","partition":0,"leader":1,"leaderEpoch":4,"isr":[1,2,3],
			 "replicas":{"1":{"leo":10,"hw":10,"epochs":[0,0,0,0,0,2,2,2,2,2]},"2":{"leo":10,"hw":10,"epochs":[0,0,0,0,0,2,2,2,2,2]},
			 "3":{"leo":10,"hw":10,"epochs":[0,0,0,0,0,2,2,2,2,2]}},"violations":%s}`, c.hw2, c.violations, c.violations)))
		})
	}
}

// TestAudit10AnswerInFlightOutlivesCrash: a broker's answer already on the wire reaches the
// requester after the broker crashed; the connection's end (the crashed process's sockets
// closing) travels behind it on the same link. Leader 1's answer to follower 2's parked Fetch
// (ReplicaManager.fetchMessages -> DelayedFetch completed by the acks=1 append at 1101) carries
// record 2 over a 3 s link when broker 1 is killed at 1200; Kafka's follower reads it at 4101
// (NetworkClient hands over a complete response before the disconnect that follows it) and
// appends it (ReplicaFetcherThread.processPartitionData), so when broker 1's session expires
// (6000 in 2.1.1) broker 2 is elected holding 3 records. The engine failed every request to the
// crashed broker one default latency later, dropping the answer: broker 2 led with 2 records.
func TestAudit10AnswerInFlightOutlivesCrash(t *testing.T) {
	runCheckerScenario(t, `{"name":"answer in flight outlives the crash","brokers":3,
	"config":{"inter.broker.protocol.version":"2.1","auto.leader.rebalance.enable":false},
	"topics":[{"name":"t","assignment":[[1,2]]}],"steps":[
	{"at":100,"do":"produce","topic":"t","partition":0,"count":2},
	{"at":1000,"do":"link","from":1,"to":2,"latencyMs":3000},
	{"at":1100,"do":"produce","topic":"t","partition":0,"count":1,"acks":1},
	{"at":1200,"do":"kill","broker":1},
	{"at":4500,"do":"expect","topic":"t","partition":0,"leader":1,"replicas":{"2":{"leo":3,"epochs":[0,0,0]}}},
	{"at":8000,"do":"expect","topic":"t","partition":0,"leader":2,"leaderEpoch":1,"isr":[2],"acked":3,
	 "replicas":{"2":{"leo":3,"hw":3,"epochs":[0,0,0]}},"violations":[]}]}`)
}
