package engine

import (
	"testing"
)

// Audit 10 of restart and recovery (kill, power loss, restart, a restart before the ZooKeeper
// session expired) against each era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0).
// Each test names the Kafka function it follows.

// TestAudit10ControllerBrokerRestartWaitsForItsSession: the controller's own broker crashes and
// is restarted before its ZooKeeper session expired, in 3.7 (broker epochs). The new process
// cannot register: KafkaServer.startup calls zkClient.registerBroker, whose
// CheckedEphemeral.create finds /brokers/ids/0 (NODEEXISTS) and getAfterNodeExists throws, since
// the znode's owner, the old session, is not the new client's (currentZooKeeperSessionId is -1 in
// a new process, so the KAFKA-7165 re-create does not apply; 3.7.0 KafkaZkClient l.2168-2190):
// "Fatal error during KafkaServer startup", and the process exits. No controller can see a bounce
// either: the controller lived in the crashed process, and /controller stays the old session's
// until it expires. So nothing changes until the session expires (19 s); then broker 1 becomes
// controller (3.7: the dead replica goes offline first, epoch 1, then the election, epoch 2), and
// broker 0 starts, as in the eras before broker epochs. The engine took the restart for a bounce
// seen by the dead controller itself (leader 1 in epoch 1 at once), then failed that controller
// over to the restarted broker.
func TestAudit10ControllerBrokerRestartWaitsForItsSession(t *testing.T) {
	for _, era := range []string{"2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, map[string]string{
				"inter.broker.protocol.version": `"` + era + `"`, "zookeeper.session.timeout.ms": "18000",
				"auto.leader.rebalance.enable": "false"})
			pid := e.partitionOf(ktTopic, 0).pid
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, 2000)
			apply(t, e, `{"do":"restart","broker":0}`)
			runFor(t, e, 1000)
			if got := ctrlState(e, pid); got != "leader 0 epoch 0 isr [0 1 2]" || !e.brokers[0].Dead() || e.ctrl.Broker() != 0 {
				t.Fatalf("1 s after the restart: %s, broker 0 dead %v, controller %d; want the start's state, broker 0 not started, controller 0 (its session lives)",
					got, e.brokers[0].Dead(), e.ctrl.Broker())
			}
			runFor(t, e, 15000) // 19000: broker 0's session expires
			if e.brokers[0].Dead() || e.ctrl.Broker() != 1 {
				t.Fatalf("at the session's expiry: broker 0 dead %v, controller %d; want started, controller 1", e.brokers[0].Dead(), e.ctrl.Broker())
			}
			want := "leader 1 epoch 2 isr [1 2]" // 3.7: OfflineReplica at the failover, then the election (KAFKA-3143)
			if era == "2.1" {
				want = "leader 1 epoch 1 isr [1 2]"
			}
			if got := ctrlState(e, pid); got != want {
				t.Fatalf("at the session's expiry: %s, want %s", got, want)
			}
		})
	}
	// Another broker's restart before its session expired stays a bounce in 3.7 (the contract's
	// "counts as a bounce", KIP-380's processBrokerChange): the live controller takes broker 2
	// out of the ISR at once.
	t.Run("3.7/follower bounce", func(t *testing.T) {
		e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, map[string]string{"auto.leader.rebalance.enable": "false"})
		pid := e.partitionOf(ktTopic, 0).pid
		runFor(t, e, 1000)
		apply(t, e, `{"do":"kill","broker":2}`)
		runFor(t, e, 2000)
		apply(t, e, `{"do":"restart","broker":2}`)
		if got := ctrlState(e, pid); got != "leader 1 epoch 1 isr [1]" || e.brokers[2].Dead() {
			t.Fatalf("at the bounce: %s, broker 2 dead %v; want leader 1 epoch 1 isr [1], started", got, e.brokers[2].Dead())
		}
	})
}

// TestAudit10PowerLossWhileStartPending: a broker restarted before its old session expired (before
// broker epochs, or the controller's own broker) has exited (NodeExists) and waits for that session;
// a kill with loseUnflushed then is its machine losing power: the page cache goes, so the records
// past the last flush are gone from its disk (log.flush.interval.messages; Kafka's
// UnifiedLog.flush, 0.10.2.2 Log.append: unflushedMessages >= config.flushInterval), and its
// pending start is off. The engine cancelled the start but kept the page cache.
//
// The refused start itself had loaded the logs and, failing, run KafkaServer.shutdown, whose
// LogManager.shutdown flushes every log (audit 12, recovery_point.go: Broker.FailedStart). In
// 0.10.2 the load left the recovery point at its checkpoint (0, none written yet: the task first
// runs 30 s after the start), so the flush wrote record 2 and the power loss keeps it: LEO 3. In
// 2.1 Log.recoverLog put the recovery point at the LEO, and Log.flush skips a log at its
// recovery point (`if (offset <= this.recoveryPoint) return`), so record 2 is still only in
// the page cache: LEO 2.
func TestAudit10PowerLossWhileStartPending(t *testing.T) {
	for _, era := range []string{"0.10.2", "2.1"} {
		wantLEO := map[string]int64{"0.10.2": 3, "2.1": 2}[era]
		t.Run(era, func(t *testing.T) {
			e, r2 := withOneUnflushed(t, map[string]string{"inter.broker.protocol.version": `"` + era + `"`})
			if leo, un := r2.Log().LogEndOffset(), r2.Log().UnflushedCount(); leo != 3 || un != 1 {
				t.Fatalf("broker 2: LEO %d, unflushed %d; want 3, 1", leo, un)
			}
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"restart","broker":2}`) // NodeExists: starts when the session expires
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
			if leo := r2.Log().LogEndOffset(); leo != wantLEO || !e.brokers[2].Dead() || e.brokers[2].startsOnExpiry {
				t.Fatalf("after the power loss: broker 2 LEO %d, dead %v, start pending %v; want %d, dead, no start",
					leo, e.brokers[2].Dead(), e.brokers[2].startsOnExpiry, wantLEO)
			}
		})
	}
}
