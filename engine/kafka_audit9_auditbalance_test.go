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
