package engine

import (
	"fmt"
	"testing"
)

// Audit 10 of elections and operator actions (preferred, chosen-leader and unclean elections,
// controlled shutdown, offline partitions) against each era's Kafka source (tags 0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAudit10ReorderWaitsForIsrBefore24: an operator's chosen-leader election reorders the
// assignment through a partition reassignment. Before 2.4 (KIP-455) KafkaController's
// onPartitionReassignment (0.10.2.2, 0.11.0.2, 2.1.1) completes it only when every target replica
// is in the ISR (areReplicasInIsr); until then it writes the reordered list, bumps the leader
// epoch (updateLeaderEpochAndSendRequest) and waits. A broker start with a replica of it runs
// onPartitionReassignment again (onBrokerStartup: another bump while still out of the ISR), and
// the ISR change that brings the last replica in (PartitionReassignmentIsrChange, the znode's
// watch) completes it: moveReassignedPartitionLeaderIfRequired bumps once more. 3.7.0's
// reassignment of the same replicas is complete at once (ReplicaAssignment.isBeingReassigned is
// false), so its two bumps are all. Broker 1 is alive (registered, as the reassignment tool
// requires from 0.11.0) but out of the ISR when the operator elects: its link to the leader is cut.
func TestAudit10ReorderWaitsForIsrBefore24(t *testing.T) {
	for _, tc := range []struct {
		era              string
		atRestart, final string
	}{
		{"0.10.2", "leader 2 epoch 3 isr [0 2]", "leader 2 epoch 4 isr [0 1 2]"},
		{"0.11.0", "leader 2 epoch 3 isr [0 2]", "leader 2 epoch 4 isr [0 1 2]"},
		{"2.1", "leader 2 epoch 3 isr [0 2]", "leader 2 epoch 4 isr [0 1 2]"},
		{"3.7", "leader 2 epoch 2 isr [0 2]", "leader 2 epoch 2 isr [0 1 2]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			cfg["replica.lag.time.max.ms"] = "10000"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, cfg)
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`) // broker 1 falls behind
			runFor(t, e, 18900)
			if got := ctrlState(e, pid); got != "leader 0 epoch 0 isr [0 2]" {
				t.Fatalf("broker 1 cut from the leader: %s, want leader 0 epoch 0 isr [0 2]", got)
			}
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":2}`)
			if got := ctrlState(e, pid); got != "leader 2 epoch 2 isr [0 2]" {
				t.Fatalf("chosen leader 2: %s, want leader 2 epoch 2 isr [0 2]", got)
			}
			apply(t, e, `{"do":"kill","broker":1}`)
			apply(t, e, `{"do":"heal"}`)
			runFor(t, e, 7000)
			apply(t, e, `{"do":"restart","broker":1}`)
			if got := ctrlState(e, pid); got != tc.atRestart {
				t.Fatalf("broker 1 restarted: %s, want %s", got, tc.atRestart)
			}
			runFor(t, e, 5000)
			if got := ctrlState(e, pid); got != tc.final {
				t.Fatalf("broker 1 caught up: %s, want %s", got, tc.final)
			}
		})
	}
}

// TestAudit10RebalanceWaitsForReassignmentBefore24: before 2.4 the leader-imbalance check elects
// nothing while a reassignment waits (checkAndTriggerPartitionRebalance, 0.10.2.2 and 0.11.0.2:
// `controllerContext.partitionsBeingReassigned.isEmpty`; 2.1.1 checkAndTriggerAutoLeaderRebalance,
// the same test), and the reassignment tool refuses another while one runs ("There is an existing
// assignment running.", ReassignPartitionsCommand.executeAssignment). A chosen-leader election
// of t-0 while broker 3, its replica, is out of the ISR (cut from the leader) leaves its reordering
// reassignment waiting; t-1's preferred leader 2, back from a crash, then does not get its
// leadership back. In 3.7.0 the reordering completed at
// once and the check elects broker 2.
func TestAudit10RebalanceWaitsForReassignmentBefore24(t *testing.T) {
	for _, tc := range []struct {
		era, want string
	}{
		{"0.10.2", "leader 0 epoch 1 isr [0 1 2]"},
		{"2.1", "leader 0 epoch 1 isr [0 1 2]"},
		{"3.7", "leader 2 epoch 2 isr [0 1 2]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			cfg["replica.lag.time.max.ms"] = "10000"
			cfg["leader.imbalance.check.interval.seconds"] = "10"
			cfg["unclean.leader.election.enable"] = "false"
			e := newKafkaEngine(t, 4, [][]int32{{0, 1, 3}, {2, 0, 1}}, cfg)
			p0, p1 := e.partitionOf(ktTopic, 0).pid, e.partitionOf(ktTopic, 1).pid
			runFor(t, e, 100)
			apply(t, e, `{"do":"link","from":3,"to":0,"down":true}`)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`) // broker 3 falls behind
			runFor(t, e, 19800)
			if got := ctrlState(e, p0); got != "leader 0 epoch 0 isr [0 1]" {
				t.Fatalf("broker 3 cut from the leader: %s, want leader 0 epoch 0 isr [0 1]", got)
			}
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":1}`)
			if got := ctrlState(e, p0); got != "leader 1 epoch 2 isr [0 1]" {
				t.Fatalf("chosen leader 1 of t-0: %s, want leader 1 epoch 2 isr [0 1]", got)
			}
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 7000)
			apply(t, e, `{"do":"restart","broker":2}`)
			runFor(t, e, 26000) // the checks at 35 s, 45 s and 55 s
			if got := ctrlState(e, p1); got != tc.want {
				t.Fatalf("t-1 after the leader-imbalance checks: %s, want %s", got, tc.want)
			}
			apply(t, e, `{"do":"elect","topic":"t","partition":1,"broker":1}`)
			want := "leader 1 epoch 4 isr [0 1 2]" // 3.7: the reordering, then the election
			if tc.era != "3.7" {
				want = tc.want // refused: REASSIGNMENT_IN_PROGRESS
			}
			if got := ctrlState(e, p1); got != want {
				t.Fatalf("chosen leader 1 of t-1: %s, want %s", got, want)
			}
		})
	}
}

// TestAudit10WholeIsrLostKeepsGroupByLast: when a partition's whole ISR dies at once (one broker
// change), the offline election finds no live ISR member, and the OfflineReplica transition then
// removes the dead replicas broker by broker in the iteration order of `replicas.groupBy(_.replica)`
// (2.1.1 ReplicaStateMachine.handleStateChanges, 3.7.0 ZkReplicaStateMachine.handleStateChanges),
// keeping the last one processed (doRemoveReplicasFromIsr: "isr.size == 1"). Kafka 2.1.1's Scala
// 2.11/2.12 groupBy fills a mutable.HashMap, whose iteration (buckets from the last, indexed by
// byteswap32) takes broker 2 before broker 1, so broker 1 stays; Kafka 3.7.0's Scala 2.13 groupBy
// is an immutable.HashMap (CHAMP) iterated by Hashing.improve's low bits: 1 before 2 (2 stays),
// but 5 before 1 (1 stays). The engine took every era's brokers in id order, so the last was
// always the highest id. Which broker's return brings the partition back depends on it.
func TestAudit10WholeIsrLostKeepsGroupByLast(t *testing.T) {
	for _, tc := range []struct {
		era    string
		pair   []int32
		kept   int32
		kill   string
		killed string
	}{
		{"2.1", []int32{1, 2}, 1, `{"do":"kill","broker":1}`, `{"do":"kill","broker":2}`},
		{"3.7", []int32{1, 2}, 2, `{"do":"kill","broker":1}`, `{"do":"kill","broker":2}`},
		{"3.7", []int32{1, 5}, 1, `{"do":"kill","broker":1}`, `{"do":"kill","broker":5}`},
	} {
		t.Run(fmt.Sprintf("%s-%v", tc.era, tc.pair), func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 6, [][]int32{tc.pair}, cfg)
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 100)
			apply(t, e, tc.kill)
			apply(t, e, tc.killed)
			runFor(t, e, 7000)
			want := fmt.Sprintf("leader -1 epoch 2 isr [%d]", tc.kept)
			if got := ctrlState(e, pid); got != want {
				t.Fatalf("whole ISR dead: %s, want %s", got, want)
			}
			other := tc.pair[0]
			if other == tc.kept {
				other = tc.pair[1]
			}
			apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, other))
			runFor(t, e, 100)
			if got := ctrlState(e, pid); got != want {
				t.Fatalf("broker %d back (outside the ISR): %s, want %s", other, got, want)
			}
			apply(t, e, fmt.Sprintf(`{"do":"restart","broker":%d}`, tc.kept))
			runFor(t, e, 100)
			if got, want := ctrlState(e, pid), fmt.Sprintf("leader %d epoch 3 isr [%d]", tc.kept, tc.kept); got != want {
				t.Fatalf("broker %d back: %s, want %s", tc.kept, got, want)
			}
		})
	}
}

// TestAudit10ReassignmentWatchAfterReconnect: the watch on a waiting reassignment's partition
// state (2.1.1 PartitionReassignmentIsrChangeHandler) is a ZooKeeper watch: an ISR write made
// while the controller is cut from ZooKeeper fires at its reconnection (the client re-sets its
// watches with its last zxid and the server fires those whose znodes changed), and the
// reassignment completes then (onPartitionReassignment → moveReassignedPartitionLeaderIfRequired,
// a leader-epoch bump). The engine fired the watch only on the write.
func TestAudit10ReassignmentWatchAfterReconnect(t *testing.T) {
	cfg := eraCfg("2.1")
	cfg["zookeeper.session.timeout.ms"] = "6000"
	e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
	pid := e.partitionOf(ktTopic, 0).pid
	runFor(t, e, 100)
	apply(t, e, `{"do":"kill","broker":3}`)
	apply(t, e, `{"do":"link","from":3,"to":2,"latencyMs":2000}`) // broker 3 will catch up slowly
	runFor(t, e, 6900)
	apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":2}`)
	if got := ctrlState(e, pid); got != "leader 2 epoch 3 isr [1 2]" {
		t.Fatalf("chosen leader 2: %s, want leader 2 epoch 3 isr [1 2]", got)
	}
	runFor(t, e, 1000)
	apply(t, e, `{"do":"restart","broker":3}`)
	runFor(t, e, 10)
	apply(t, e, `{"do":"isolate","broker":0}`) // the controller
	runFor(t, e, 5000)
	if got := ctrlState(e, pid); got != "leader 2 epoch 4 isr [1 2 3]" {
		t.Fatalf("broker 3 caught up while the controller is cut off: %s, want leader 2 epoch 4 isr [1 2 3]", got)
	}
	apply(t, e, `{"do":"heal","broker":0}`)
	if got := ctrlState(e, pid); got != "leader 2 epoch 5 isr [1 2 3]" {
		t.Fatalf("controller reconnected: %s, want leader 2 epoch 5 isr [1 2 3]", got)
	}
}

// TestAudit10WholeIsrLostSetOrderBefore21: before 2.1 the OfflineReplica transition of a broker
// failure walks one replica at a time (0.11.0.2 ReplicaStateMachine.handleStateChanges,
// `replicas.foreach`) over ControllerContext.replicasOnBrokers' Set of PartitionAndReplica(topic,
// partition, replica): up to four replicas in the order they were added (the dead brokers sorted,
// then their partitions), from five a Scala HashSet iterated by the case class's MurmurHash3. With
// t-0..t-2 each on brokers 1 and 2 (six replicas), Scala 2.11 walks (t,2,2) (t,0,1) (t,1,2) (t,0,2)
// (t,1,1) (t,2,1): t-0 loses broker 1 first and keeps 2, t-1 and t-2 lose broker 2 first and keep
// 1 (unclean election off keeps the last member, KafkaController.removeReplicaFromIsr). The engine
// kept broker 2 in all three.
func TestAudit10WholeIsrLostSetOrderBefore21(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}, {1, 2}, {1, 2}}, eraCfg("0.11.0"))
	runFor(t, e, 100)
	apply(t, e, `{"do":"kill","broker":1}`)
	apply(t, e, `{"do":"kill","broker":2}`)
	runFor(t, e, 7000)
	for p, kept := range []int32{2, 1, 1} {
		pid := e.partitionOf(ktTopic, int32(p)).pid
		if got, want := ctrlState(e, pid), fmt.Sprintf("leader -1 epoch 2 isr [%d]", kept); got != want {
			t.Errorf("t-%d after brokers 1 and 2 died together: %s, want %s", p, got, want)
		}
	}
}
