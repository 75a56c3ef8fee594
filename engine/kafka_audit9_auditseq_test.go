package engine

import "testing"

// Audit 9, sequences of failures and recoveries (kills, restarts, isolation and healing, in every
// era), against each era's Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names
// the Kafka function it follows.

// TestAuditHealedZombieFetchesAtOnce: a zombie leader's first request to the new leader after the
// heal is not held back behind an answer the zombie had sent, while cut off, to the new leader's
// old fetcher thread. That answer travels on the connection of the new leader's fetcher for the
// zombie, which became idle when the new leader took over and was shut down
// (AbstractFetcherManager.shutdownIdleFetcherThreads; ReplicaFetcherThread.initiateShutdown closes
// its leaderEndpoint, 2.1.1 and 3.7.0; each fetcher thread has its own NetworkClient, so its own
// connection). The zombie's new fetcher opens a new connection: its OffsetsForLeaderEpoch (0.11.0,
// 2.1) or Fetch (0.10.2, 3.7) arrives one latency later, and the zombie truncates its acks=1
// record at once. The engine delivered it after the old answer's TCP retransmission (13.7 s
// instead of 10.0 s).
func TestAuditHealedZombieFetchesAtOnce(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 4, [][]int32{{1, 2, 3}}, cfg)
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`) // the zombie's alone
			runFor(t, e, 8000)
			if l, le := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid); l != 2 || le != 1 {
				t.Fatalf("at %d: leader %d in epoch %d, want 2 in 1", e.now, l, le)
			}
			apply(t, e, `{"do":"heal","broker":1}`)
			runFor(t, e, 100)
			var first *Message
			for _, ev := range e.events {
				if m := ev.Message; m != nil && ev.Type == m.Type && m.From == 1 && m.To == 2 && isRequest(m.Type) && ev.T >= 10000 {
					first = m
					break
				}
			}
			if first == nil || first.Deliver != first.Sent+1 {
				t.Fatalf("broker 1's first request to broker 2 after the heal: %+v; want it delivered 1 ms after its send", first)
			}
			if leo := e.replicaOn(p.pid, 1).Log().LogEndOffset(); leo != 1 {
				t.Fatalf("broker 1's LEO %d at %d, want 1 (its acks=1 record truncated)", leo, e.now)
			}
		})
	}
}
