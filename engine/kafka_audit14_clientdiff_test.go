package engine

import "testing"

// Audit 14, broker start-up, client and checkpoint rules that changed between the eras (the git
// history of core/src/main/scala/kafka/server/KafkaServer.scala, log/LogManager.scala,
// ReplicaManager's HW checkpoint and the clients' Sender, RecordAccumulator, NetworkClient,
// Metadata and Fetcher between tags 0.10.2.2, 0.11.0.2, 2.1.1 and 3.7.0). Each test names the
// Kafka function and commit it follows; the grader files j* (testdata/grader) play the same
// rules through the CLI.

// TestAudit14ControllerElectedBeforeRegistrationIn0102: 0.10.2.2's KafkaServer.startup calls
// kafkaController.startup() (ZookeeperLeaderElector.startup → elect → onControllerFailover, in
// the call) before kafkaHealthcheck.startup() registers the broker in /brokers/ids, and after a
// session expiry the controller's SessionExpirationListener (subscribed first; zkclient keeps its
// state listeners in a CopyOnWriteArraySet, fired in subscription order) re-elects before
// KafkaHealthcheck's SessionExpireListener re-registers. A broker that finds no controller takes
// over counting itself dead: PartitionStateMachine.initializePartitionState puts the partition
// it led OfflinePartition, the election finds no live replica, and only the BrokerChange its own
// registration then fires (onBrokerStartup: the partition as it stands, then
// triggerOnlinePartitionStateChange) elects it, at the next leader epoch. KAFKA-6320 (1.1.0,
// 27c2c81663d) registers first (zkClient.registerBrokerInZk, then kafkaController.startup(); 2.1.1
// and 3.7.0 the same): the new controller finds the leader alive, OnlinePartition, no election.
// The engine registered first in every era. Both paths: a restart after the session expired,
// and a heal after an isolation that outlived the session.
func TestAudit14ControllerElectedBeforeRegistrationIn0102(t *testing.T) {
	for _, c := range []struct {
		era   string
		epoch int32
	}{
		{"0.10.2", 1},
		{"0.11.0", 0}, // the election runs on the controller's event thread: a race, taken as lost
		{"2.1", 0},
		{"3.7", 0},
	} {
		for _, path := range []string{"restart", "heal"} {
			t.Run(c.era+"/"+path, func(t *testing.T) {
				e := newKafkaEngine(t, 1, [][]int32{{0}}, eraCfg(c.era))
				runFor(t, e, 1000)
				if path == "restart" {
					apply(t, e, `{"do":"kill","broker":0}`)
				} else {
					apply(t, e, `{"do":"isolate","broker":0}`)
				}
				runFor(t, e, 19000) // the session expired at 7000 (3.7: 19000): no controller
				if e.ctrl.Active() {
					t.Fatalf("a controller at 20000, want none")
				}
				if path == "restart" {
					apply(t, e, `{"do":"restart","broker":0}`)
				} else {
					apply(t, e, `{"do":"heal","broker":0}`)
				}
				runFor(t, e, 1000)
				pid := e.partitionOf(ktTopic, 0).pid
				if l, ep := e.ctrl.Leader(pid), e.ctrl.LeaderEpoch(pid); l != 0 || ep != c.epoch {
					t.Fatalf("t-0 leader %d epoch %d after the %s, want 0, %d", l, ep, path, c.epoch)
				}
				if !e.ctrl.Active() || e.ctrl.Broker() != 0 {
					t.Fatalf("no controller on broker 0 after the %s", path)
				}
			})
		}
	}
}
