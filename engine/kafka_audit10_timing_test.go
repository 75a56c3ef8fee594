package engine

import (
	"slices"
	"strconv"
	"testing"
)

// Audit of the timing a grader observes at a given millisecond (ISR changes, HW moves, their
// schedules) against each era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test
// names the Kafka function it follows.

// isrChangeTimes returns, per partition pid, the times the controller's ISR of it changed.
func isrChangeTimes(e *Engine, pids ...int32) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, ev := range eventsOf(e.events, "isr-change", nil) {
		for _, pid := range pids {
			if ev.Partition.Set && e.partitions[pid].topic == ev.Topic && ev.Partition.V == e.partitions[pid].index {
				out[pid] = append(out[pid], ev.T)
			}
		}
	}
	return out
}

// TestAuditOneAlterPartitionInFlightPerBroker: 3.7.0 DefaultAlterPartitionManager (core
// AlterPartitionManager.scala) keeps one AlterPartition in flight per broker: submit puts the
// change in unsentIsrUpdates and maybePropagateIsrChanges sends every unsent change only when
// inflightRequest is false; the response handler clears the flag and sends what was submitted
// meanwhile. Leader 0 leads t-0 and t-1, and follower 1's Fetch link is cut at 1000 (the last
// Fetch it got through arrived at 503: lastCaughtUpTimeMs 503); a record goes to each partition.
// The isr-expiration run at 15000 finds follower 1 out of sync in both: the first partition's
// AlterPartition leaves at 15000 and the controller (broker 0) commits it at 15001; the second
// waits for the answer (15002), so the controller commits it at 15003 and its HW moves at 15004.
// The engine sent both at 15000. Which partition goes first is the order of ReplicaManager's
// allPartitions, a hash map (the engine walks partition order), so the test reads the two times
// as a set.
func TestAuditOneAlterPartitionInFlightPerBroker(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["replica.lag.time.max.ms"] = "10000"
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {0, 1, 2}}, cfg)
	p0, p1 := e.partitionOf(ktTopic, 0), e.partitionOf(ktTopic, 1)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
	apply(t, e, `{"do":"produce","topic":"t","partition":1,"acks":1}`)
	if err := e.RunUntil(15004); err != nil {
		t.Fatal(err)
	}
	changes := isrChangeTimes(e, p0.pid, p1.pid)
	got := []int64{}
	for _, pid := range []int32{p0.pid, p1.pid} {
		if len(changes[pid]) != 1 {
			t.Fatalf("ISR changes of pid %d at %v, want one", pid, changes[pid])
		}
		got = append(got, changes[pid][0])
		if isr := e.ctrl.ISR(pid); !slices.Equal(isr, []int32{0, 2}) {
			t.Fatalf("ISR of pid %d at 15004: %v, want [0 2]", pid, isr)
		}
		if hw := e.replicaOn(pid, 0).Log().HighWatermark(); hw != 1 {
			t.Fatalf("leader's HW of pid %d at 15004: %d, want 1", pid, hw)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{15001, 15003}) {
		t.Fatalf("the controller committed the two shrinks at %v, want 15001 and 15003 (one AlterPartition in flight per broker)", got)
	}
}

// TestAuditTimingSchedules holds timings checked against Kafka's schedulers that were already
// right, each with an expect a millisecond before the change and one at it (the predictions were
// made from the source before running):
//   - the isr-expiration task runs every replica.lag.time.max.ms / 2 from the replica manager's
//     startup (ReplicaManager.startup: schedule("isr-expiration", ..., period =
//     replicaLagTimeMaxMs / 2), delay 0 in every era), and a follower leaves when now -
//     lastCaughtUpTimeMs > replica.lag.time.max.ms (Partition.getOutOfSyncReplicas): cut at
//     1000 after its last Fetch arrived at 503, it is still in at the 10000 run and out at 15000;
//     before 2.7 the leader's own ZooKeeper write changes the ISR at once, in 3.7 the controller
//     commits the AlterPartition one latency later;
//   - a broker restarted at 3000 runs the task at 3000 + k * 5000 (its own startup), so as a
//     leader again it shrinks a follower cut at 6500 at 18000, not at 15000 or 20000;
//   - a dead follower leaves the ISR, with a leader-epoch bump, when its ZooKeeper session
//     expires (zookeeper.session.timeout.ms: 6000 before 2.5, 18000 after, KIP-537), and a dead
//     leader's partition is elected then (KafkaController onBrokerFailure);
//   - a new controller checks leader imbalance 5 s after it took over, then every
//     leader.imbalance.check.interval.seconds (0.10.2.2 autoRebalanceScheduler.schedule(...,
//     5, interval, SECONDS); 2.1.1 and 3.7.0 scheduleAutoLeaderRebalanceTask(delay = 5)).
func TestAuditTimingSchedules(t *testing.T) {
	shrink := func(era string, d int) string {
		return `{"name":"shrink","brokers":3,"topics":[{"name":"t","assignment":[[0,1,2]]}],
		"config":{"inter.broker.protocol.version":"` + era + `","replica.lag.time.max.ms":10000},
		"steps":[{"at":1000,"do":"link","from":1,"to":0,"down":true},
		{"at":2000,"do":"produce","topic":"t","partition":0,"acks":1},
		{"at":` + strconv.Itoa(14999+d) + `,"do":"expect","topic":"t","partition":0,"isr":[0,1,2]},
		{"at":` + strconv.Itoa(15000+d) + `,"do":"expect","topic":"t","partition":0,"isr":[0,2]}]}`
	}
	restarted := func(era string, d int) string {
		return `{"name":"restarted","brokers":3,"topics":[{"name":"t","assignment":[[0,1,2]]}],
		"config":{"inter.broker.protocol.version":"` + era + `","replica.lag.time.max.ms":10000},
		"steps":[{"at":1000,"do":"shutdown","broker":0},{"at":3000,"do":"restart","broker":0},
		{"at":6500,"do":"link","from":2,"to":0,"down":true},
		{"at":6600,"do":"expect","topic":"t","partition":0,"leader":0,"isr":[0,1,2]},
		{"at":7000,"do":"produce","topic":"t","partition":0,"acks":1},
		{"at":` + strconv.Itoa(17999+d) + `,"do":"expect","topic":"t","partition":0,"isr":[0,1,2]},
		{"at":` + strconv.Itoa(18000+d) + `,"do":"expect","topic":"t","partition":0,"isr":[0,1]}]}`
	}
	expiry := func(era string, to int) string {
		return `{"name":"expiry","brokers":4,"topics":[{"name":"t","assignment":[[1,2,3]]}],
		"config":{"inter.broker.protocol.version":"` + era + `"},
		"steps":[{"at":1000,"do":"kill","broker":2},{"at":3000,"do":"kill","broker":1},
		{"at":` + strconv.Itoa(1000+to-1) + `,"do":"expect","topic":"t","partition":0,"leader":1,"leaderEpoch":0,"isr":[1,2,3]},
		{"at":` + strconv.Itoa(1000+to) + `,"do":"expect","topic":"t","partition":0,"leader":1,"leaderEpoch":1,"isr":[1,3]},
		{"at":` + strconv.Itoa(3000+to-1) + `,"do":"expect","topic":"t","partition":0,"leader":1,"leaderEpoch":1},
		{"at":` + strconv.Itoa(3000+to) + `,"do":"expect","topic":"t","partition":0,"leader":3,"leaderEpoch":2,"isr":[3]}]}`
	}
	rebalance := func(era string) string {
		return `{"name":"rebalance","brokers":3,"topics":[{"name":"t","assignment":[[0,1,2]]}],
		"config":{"inter.broker.protocol.version":"` + era + `","leader.imbalance.check.interval.seconds":10},
		"steps":[{"at":1000,"do":"shutdown","broker":0},{"at":2000,"do":"restart","broker":0},
		{"at":6001,"do":"expect","topic":"t","partition":0,"leader":1},
		{"at":6002,"do":"expect","topic":"t","partition":0,"leader":0},
		{"at":7000,"do":"shutdown","broker":0},{"at":8000,"do":"restart","broker":0},
		{"at":16001,"do":"expect","topic":"t","partition":0,"leader":1},
		{"at":16002,"do":"expect","topic":"t","partition":0,"leader":0}]}`
	}
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		d, to := 0, 6000
		if era == "3.7" {
			d, to = 1, 18000
		}
		for _, c := range []struct{ name, src string }{{"shrink", shrink(era, d)}, {"restarted", restarted(era, d)},
			{"expiry", expiry(era, to)}, {"rebalance", rebalance(era)}} {
			t.Run(era+"/"+c.name, func(t *testing.T) {
				sc, err := ParseScenario([]byte(c.src))
				if err != nil {
					t.Fatal(err)
				}
				_, res, err := Run(sc, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !res.OK() {
					t.Fatalf("%v", res.Failures)
				}
			})
		}
	}
}
