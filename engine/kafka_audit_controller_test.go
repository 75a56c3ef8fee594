package engine

import (
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
			runUntilTrue(t, e, 30000, "broker 1 stopped", func() bool { return e.brokers[1].state == brokerDead })
			if took := e.now - start; took < tc.stopAt || took > tc.stopAt+100 {
				t.Fatalf("broker 1 stopped %d ms after it began, want about %d", took, tc.stopAt)
			}
			if e.brokers[1].shutdownAttempts != 3 {
				t.Fatalf("%d attempts, want 3", e.brokers[1].shutdownAttempts)
			}
		})
	}
}
