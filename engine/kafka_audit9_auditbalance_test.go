package engine

import "testing"

// Audit 9 of the controller's multi-partition policies (operator elections, auto leader
// rebalance, controlled shutdown) against each era's Kafka source (tags 0.10.2.2, 0.11.0.2,
// 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAuditPreferredElectionOfPreferredLeader: an operator's preferred election of a partition
// whose preferred replica already leads. 2.1.1's PreferredReplicaLeaderElection event hands every
// partition of /admin/preferred_replica_election to PartitionStateMachine.handleStateChanges
// (OnlinePartition, PreferredReplicaPartitionLeaderElectionStrategy); leaderForPreferredReplica
// checks only that the preferred replica is live and in the ISR, so it is elected again at the
// next leader epoch (LeaderAndIsr.newLeader). 0.10.2.2 and 0.11.0.2's
// PreferredReplicaPartitionLeaderSelector throws LeaderElectionNotNeededException; 2.2's
// KafkaController (KAFKA-5692) and 3.7.0's processReplicaLeaderElection answer
// ELECTION_NOT_NEEDED: nothing is written. The chosen-leader form (`broker` already first in the
// assignment) is the same preferred election.
func TestAuditPreferredElectionOfPreferredLeader(t *testing.T) {
	for _, tc := range []struct {
		era  string
		want string
	}{
		{"0.10.2", "leader 0 epoch 0 isr [0 1 2]"},
		{"0.11.0", "leader 0 epoch 0 isr [0 1 2]"},
		{"2.1", "leader 0 epoch 1 isr [0 1 2]"},
		{"3.7", "leader 0 epoch 0 isr [0 1 2]"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 2, 0}}, eraCfg(tc.era))
			p0, p1 := e.partitionOf(ktTopic, 0).pid, e.partitionOf(ktTopic, 1).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"elect","topic":"t","partition":0}`)
			if got := ctrlState(e, p0); got != tc.want {
				t.Fatalf("preferred election: %s, want %s", got, tc.want)
			}
			apply(t, e, `{"do":"elect","topic":"t","partition":1,"broker":1}`)
			want := "leader 1 epoch 0 isr [0 1 2]"
			if tc.era == "2.1" {
				want = "leader 1 epoch 1 isr [0 1 2]"
			}
			if got := ctrlState(e, p1); got != want {
				t.Fatalf("chosen-leader election of the leader: %s, want %s", got, want)
			}
		})
	}
}

// TestAuditUncleanElectionOfShuttingDownLeader: 3.7.0 KafkaController.processReplicaLeaderElection
// counts a partition electable for an UNCLEAN election when its leader is none or not in
// controllerContext.liveBrokerIds, which leaves out the brokers shutting down. A leader whose
// controlled shutdown found no other ISR member (it keeps leading and retries every
// controlled.shutdown.retry.backoff.ms) is replaced: leaderForOffline with allowUnclean, no live
// ISR member (isReplicaOnline leaves out shutting-down brokers), so the first live replica leads
// alone, at the next leader epoch. The engine answered ELECTION_NOT_NEEDED. The broker's next
// attempt then finds nothing it leads and stops.
func TestAuditUncleanElectionOfShuttingDownLeader(t *testing.T) {
	e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, nil)
	pid := e.partitionOf(ktTopic, 0).pid
	runFor(t, e, 100)
	apply(t, e, `{"do":"shutdown","broker":2}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"shutdown","broker":3}`)
	runFor(t, e, 50)
	apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`) // broker 2 will not catch up
	runFor(t, e, 50)
	apply(t, e, `{"do":"restart","broker":2}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"shutdown","broker":1}`)
	runFor(t, e, 600)
	if got := ctrlState(e, pid); got != "leader 1 epoch 2 isr [1]" {
		t.Fatalf("broker 1 shutting down: %s, want leader 1 epoch 2 isr [1] (nobody to move to)", got)
	}
	apply(t, e, `{"do":"elect","topic":"t","partition":0,"unclean":true}`)
	if got := ctrlState(e, pid); got != "leader 2 epoch 3 isr [2]" {
		t.Fatalf("after the unclean election: %s, want leader 2 epoch 3 isr [2]", got)
	}
	runFor(t, e, 4400) // the second ControlledShutdown leaves at 5402
	if e.brokers[1].Dead() {
		t.Fatalf("broker 1 stopped before its second attempt")
	}
	runFor(t, e, 10)
	if !e.brokers[1].Dead() {
		t.Fatalf("broker 1 still runs after its second attempt found nothing to move")
	}
}

// TestAuditNoControlledShutdownAttempts: controlled.shutdown.max.retries has no validator
// (KafkaConfig, 0.10.2.2 to 3.7.0), and with 0 KafkaServer.controlledShutdown's
// doControlledShutdown loop `while (!shutdownSucceeded && remainingRetries > 0)` sends nothing;
// it warns "Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed"
// and the broker stops at once. Its leaderships move when the controller sees its registration
// gone (onBrokerFailure: the offline election, then OfflineReplica), not through a
// ControlledShutdown. The engine rejected 0 as an invalid scenario.
func TestAuditNoControlledShutdownAttempts(t *testing.T) {
	for _, era := range []string{"0.10.2", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["controlled.shutdown.max.retries"] = "0"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}, {2, 1}}, cfg)
			p0, p1 := e.partitionOf(ktTopic, 0).pid, e.partitionOf(ktTopic, 1).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":1}`)
			if !e.brokers[1].Dead() {
				t.Fatalf("broker 1 still runs after a shutdown with no attempt to make")
			}
			if got := ctrlState(e, p0); got != "leader 2 epoch 1 isr [2]" {
				t.Fatalf("t-0: %s, want leader 2 epoch 1 isr [2] (offline election)", got)
			}
			if got := ctrlState(e, p1); got != "leader 2 epoch 1 isr [2]" {
				t.Fatalf("t-1: %s, want leader 2 epoch 1 isr [2] (OfflineReplica)", got)
			}
		})
	}
}
