package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit of the controller and the broker's side of its requests against each era's Kafka source
// (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAuditControlledShutdownLastBackoff: KafkaServer.controlledShutdown sleeps
// controlled.shutdown.retry.backoff.ms after every failed attempt, the last one included, before
// 3.1 (`if (!shutdownSucceeded) Thread.sleep(...)` in 0.10.2.2, 0.11.0.2, 2.1.1): three failed
// attempts stop the broker 15 s after it began. 3.7.0 sleeps only while retries remain
// (`!shutdownSucceeded && remainingRetries > 0`): 10 s. Broker 1 is the last ISR member of t-0,
// so no attempt can move its leadership; until it stops it still leads and takes writes.
func TestAuditControlledShutdownLastBackoff(t *testing.T) {
	for _, tc := range []struct {
		era    string
		stopAt int64 // after the shutdown began
	}{{"0.10.2", 15000}, {"0.11.0", 15000}, {"2.1", 15000}, {"3.7", 10000}} {
		t.Run(tc.era, func(t *testing.T) {
			cfg := eraCfg(tc.era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			cfg["unclean.leader.election.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 7000)
			if !slices.Equal(e.ctrl.ISR(p.pid), []int32{1}) {
				t.Fatalf("ISR %v, want [1]", e.ctrl.ISR(p.pid))
			}
			start := e.now
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
			if took := e.now - start; took < tc.stopAt || took > tc.stopAt+100 {
				t.Fatalf("broker 1 stopped %d ms after it began, want about %d", took, tc.stopAt)
			}
			if e.brokers[1].ShutdownAttempts() != 3 {
				t.Fatalf("%d attempts, want 3", e.brokers[1].ShutdownAttempts())
			}
		})
	}
}

// leaderAndIsrTPs lists the partitions of every LeaderAndIsr sent to broker to since the events
// were last drained, in order, as "t-0".
func leaderAndIsrTPs(evs []Event, to int32) []string {
	var out []string
	for _, ev := range eventsOf(evs, MsgLeaderAndIsr, func(ev Event) bool { return ev.Message.To == to }) {
		for _, ps := range ev.Message.LeaderAndIsr.Partitions {
			out = append(out, fmt.Sprintf("%s-%d", ps.TP.Topic, ps.TP.Partition))
		}
	}
	return out
}

// TestAuditOfflineReplicaRecipients: the LeaderAndIsr of a state change goes to the recipients
// Kafka names for it. KafkaController.doControlledShutdown moves a follower to OfflineReplica,
// which sends the shrunk ISR to `partitionReplicaAssignment(partition).filterNot(_ == replicaId)`
// and the broker shutting down only StopReplica (ZkReplicaStateMachine, 3.7.0; ReplicaStateMachine,
// 0.10.2.2); the controlled-shutdown election goes to the live or shutting-down replicas
// (Election.leaderForControlledShutdown). An offline election goes to `assignment.filter(replica =>
// controllerContext.isReplicaOnline(replica, partition))` (Election.leaderForOffline), which leaves
// out a replica whose log directory failed.
func TestAuditOfflineReplicaRecipients(t *testing.T) {
	for _, era := range []string{"0.10.2", "3.7"} {
		t.Run(era+"/controlled shutdown", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 2, 0}}, eraCfg(era))
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			evs := e.Drain()
			if got := leaderAndIsrTPs(evs, 1); !slices.Equal(got, []string{"t-1"}) {
				t.Errorf("LeaderAndIsr to broker 1 (shutting down) named %v, want [t-1] (the election of its led partition only)", got)
			}
			// Three batches (2.1.1/3.7.0 doControlledShutdown): the election of t-1, StopReplica for
			// t-0, then t-0's OfflineReplica (the ISR shrink to the others, StopReplica again). Then
			// broker 1 stops and its session closes: onBrokerFailure moves its replicas to
			// OfflineReplica, and though neither is in an ISR any more, doRemoveReplicasFromIsr
			// (removeReplicaFromIsr in 0.10.2.2) sends both partitions' state, unchanged, to the other
			// replicas (audit 15, TestAudit15OfflineReplicaNotInIsrStillSent).
			for _, b := range []int32{0, 2} {
				if got := leaderAndIsrRequests(evs, b); fmt.Sprint(got) != "[[t-1:2/1] [t-0:0/1] [t-0:0/1 t-1:2/1]]" {
					t.Errorf("LeaderAndIsr requests to broker %d: %v, want [[t-1:2/1] [t-0:0/1] [t-0:0/1 t-1:2/1]]", b, got)
				}
			}
			stops := eventsOf(evs, MsgStopReplica, func(ev Event) bool { return ev.Message.To == 1 })
			for _, s := range stops {
				if ps := s.Message.StopReplica.Partitions; len(ps) != 1 || ps[0].Partition != 0 {
					t.Errorf("StopReplica to broker 1 for %v, want t-0", ps)
				}
			}
			// Both StopReplica requests (the batch's, and OfflineReplica's) queue on broker 1's
			// channel behind the election's LeaderAndIsr (RequestSendThread: one request at a
			// time). Broker 1 stops when the ControlledShutdown answer reaches it, with that
			// LeaderAndIsr, and the controller's removeBroker drops the queue before the
			// LeaderAndIsr's answer comes back: no StopReplica leaves
			// (kafka_audit12_stopreplica_test.go has one that does).
			if len(stops) != 0 {
				t.Errorf("StopReplica to broker 1: %d requests, want none (queued behind the LeaderAndIsr, dropped by removeBroker)", len(stops))
			}
			p0 := e.partitionOf(ktTopic, 0)
			if !slices.Equal(e.ctrl.ISR(p0.pid), []int32{0, 2}) || e.ctrl.Leader(e.partitionOf(ktTopic, 1).pid) != 2 {
				t.Errorf("t-0 ISR %v, t-1 leader %d; want [0 2], 2", e.ctrl.ISR(p0.pid), e.ctrl.Leader(e.partitionOf(ktTopic, 1).pid))
			}
		})
	}
	t.Run("3.7/log directory failure", func(t *testing.T) {
		e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 2, 0}}, nil)
		runFor(t, e, 1000)
		e.Drain()
		apply(t, e, `{"do":"failDisk","broker":1}`)
		runFor(t, e, 100)
		evs := e.Drain()
		// Only onBrokerLogDirFailure's OnlineReplica probe, with the state before the failure
		// (processLeaderAndIsrResponseReceived learns from its KAFKA_STORAGE_ERROR answers); none of
		// the elections that follow.
		if got := leaderAndIsrRequests(evs, 1); fmt.Sprint(got) != "[[t-0:0/0 t-1:1/0]]" {
			t.Errorf("LeaderAndIsr requests to broker 1 (its replicas offline): %v, want [[t-0:0/0 t-1:1/0]]", got)
		}
		if got := leaderAndIsrTPs(evs, 2); !slices.Contains(got, "t-1") {
			t.Errorf("LeaderAndIsr to broker 2 named %v, want t-1 (its election)", got)
		}
		if l := e.ctrl.Leader(e.partitionOf(ktTopic, 1).pid); l != 2 {
			t.Errorf("t-1 leader %d, want 2", l)
		}
	})
}

// TestAuditShutdownTruncatesBefore011: 0.10.2.2's ReplicaManager.makeFollowers truncates every
// new follower to its high watermark (logManager.truncateTo) before it looks at isShuttingDown,
// which skips only the adding of fetchers. Leader 1 holds two acks=1 records its follower could
// not fetch (the link 2 → 1 is cut) when it shuts down: the controlled-shutdown election makes it
// a follower of 2, and it truncates them before it stops.
func TestAuditShutdownTruncatesBefore011(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, eraCfg("0.10.2"))
	p := e.partitionOf(ktTopic, 0)
	r := e.replicaOn(p.pid, 1)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":-1}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2,"acks":1}`)
	runFor(t, e, 100)
	if r.Log().LogEndOffset() != 3 || r.Log().HighWatermark() != 1 {
		t.Fatalf("leader LEO %d HW %d, want 3, 1", r.Log().LogEndOffset(), r.Log().HighWatermark())
	}
	apply(t, e, `{"do":"shutdown","broker":1}`)
	runUntilTrue(t, e, 1000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
	if e.ctrl.Leader(p.pid) != 2 {
		t.Fatalf("leader %d, want 2", e.ctrl.Leader(p.pid))
	}
	if got := r.Log().LogEndOffset(); got != 1 {
		t.Fatalf("broker 1 stopped with LEO %d, want 1 (truncated to its HW on becoming follower)", got)
	}
}

// leaderAndIsrRequests lists the LeaderAndIsr requests sent to broker to, each as its partitions'
// "t-0:leader/epoch" states.
func leaderAndIsrRequests(evs []Event, to int32) [][]string {
	var out [][]string
	for _, ev := range eventsOf(evs, MsgLeaderAndIsr, func(ev Event) bool { return ev.Message.To == to }) {
		var req []string
		for _, ps := range ev.Message.LeaderAndIsr.Partitions {
			req = append(req, fmt.Sprintf("%s-%d:%d/%d", ps.TP.Topic, ps.TP.Partition, ps.Leader, ps.LeaderEpoch))
		}
		out = append(out, req)
	}
	return out
}

// TestAuditStateMachineBatches: each state machine's handleStateChanges ends in its own
// sendRequestsToBrokers. KafkaController.onBrokerStartup (0.10.2.2, 3.7.0) moves the new broker's
// replicas to OnlineReplica (its first LeaderAndIsr: every partition it hosts, as it stands) and
// then runs triggerOnlinePartitionStateChange (a second request with the elections);
// onBrokerFailure runs the elections and then the OfflineReplica transitions, two requests to a
// broker concerned by both.
func TestAuditStateMachineBatches(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era+"/startup", func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{1}}, eraCfg(era))
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 20000) // the session expired: t-0 has no leader
			e.Drain()
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, 100)
			got := leaderAndIsrRequests(e.Drain(), 1)
			want := [][]string{{"t-0:-1/1"}, {"t-0:1/2"}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("LeaderAndIsr requests to the restarted broker: %v, want %v", got, want)
			}
		})
		t.Run(era+"/failure", func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{1, 0}, {0, 1}}, eraCfg(era))
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 20000)
			got := leaderAndIsrRequests(e.Drain(), 0)
			// The OfflineReplica batch names t-0 too: its election left broker 1 out of the ISR, and
			// doRemoveReplicasFromIsr sends a partition without the replica as it stands
			// (leaderAndIsrsWithoutReplica; audit 15).
			want := [][]string{{"t-0:0/1"}, {"t-0:0/1", "t-1:0/1"}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("LeaderAndIsr requests to broker 0: %v, want %v (the election, then the ISR shrink)", got, want)
			}
		})
	}
}

// TestAuditRebalanceBatchPerBroker: checkAndTriggerAutoLeaderRebalance calls onReplicaElection
// once per imbalanced preferred broker (3.7.0; onPreferredReplicaElection in 2.1.1), each a batch
// of its own. Brokers 1 and 2 came back after controlled shutdowns that moved their leaderships
// to broker 3; the first check (5 s after the controller started) gives both back, and broker 3
// gets two LeaderAndIsr requests.
func TestAuditRebalanceBatchPerBroker(t *testing.T) {
	e := newKafkaEngine(t, 4, [][]int32{{1, 3}, {2, 3}}, nil)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"shutdown","broker":1}`)
	apply(t, e, `{"do":"shutdown","broker":2}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"restart","broker":1}`)
	apply(t, e, `{"do":"restart","broker":2}`)
	runFor(t, e, 2900) // t = 4900
	for i := int32(0); i < 2; i++ {
		if l := e.ctrl.Leader(e.partitionOf(ktTopic, i).pid); l != 3 {
			t.Fatalf("t-%d leader %d before the check, want 3", i, l)
		}
	}
	e.Drain()
	runFor(t, e, 200)
	var got []string
	for _, req := range leaderAndIsrRequests(e.Drain(), 3) {
		got = append(got, fmt.Sprintf("%d %s", len(req), req[0][:3]))
	}
	if fmt.Sprint(got) != "[1 t-0 1 t-1]" {
		t.Fatalf("LeaderAndIsr requests to broker 3 (partitions, first): %v, want one for t-0, then one for t-1", got)
	}
	if e.ctrl.Leader(e.partitionOf(ktTopic, 0).pid) != 1 || e.ctrl.Leader(e.partitionOf(ktTopic, 1).pid) != 2 {
		t.Fatal("the preferred leaders did not get their partitions back")
	}
}

// TestAuditUncleanEnabledAtRuntime: from 2.1.0 (KAFKA-6835) turning unclean.leader.election.enable
// on at runtime (a config step) raises the controller's UncleanLeaderElectionEnable event, which
// runs triggerOnlinePartitionStateChange at once (processUncleanLeaderElectionEnable, 3.7.0).
// Leader 0 dies while follower 1 is out of the ISR: the partition is offline until unclean
// election is enabled, and then broker 1 is elected without waiting for a broker change. Before
// 2.1 the setting is read at the next election only: the partition stays offline.
func TestAuditUncleanEnabledAtRuntime(t *testing.T) {
	for _, c := range []struct {
		era   string
		elect bool
	}{{"0.11.0", false}, {"2.1", true}, {"3.7", true}} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["unclean.leader.election.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
			runFor(t, e, 50000) // follower 1 leaves the ISR (replica.lag.time.max.ms, checked every half of it)
			if !slices.Equal(e.ctrl.ISR(p.pid), []int32{0}) {
				t.Fatalf("ISR %v, want [0]", e.ctrl.ISR(p.pid))
			}
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, 20000) // broker 0's session expired: no live ISR member
			if l := e.ctrl.Leader(p.pid); l != -1 && l != 0 {
				t.Fatalf("leader %d with unclean election off, want none (or dead broker 0 still recorded, before 2.3)", l)
			}
			apply(t, e, `{"do":"config","set":{"unclean.leader.election.enable":true}}`)
			runFor(t, e, 100)
			l, isr := e.ctrl.Leader(p.pid), e.ctrl.ISR(p.pid)
			if elected := l == 1 && slices.Equal(isr, []int32{1}); elected != c.elect {
				t.Fatalf("leader %d ISR %v after enabling unclean election; want broker 1 elected: %v", l, isr, c.elect)
			}
		})
	}
}
