package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestKafkaOutOfRangeTruncationNotAllowed: before 2.1 a follower that finds its leader's log
// ending below its own (OFFSET_OUT_OF_RANGE, then the leader's offsets) truncates only if
// unclean.leader.election.enable allows it; otherwise the broker exits, "Exiting because log
// truncation is not allowed" (ReplicaFetcherThread.handleOffsetOutOfRange in 0.10.2 and 0.11.0;
// KAFKA-7414 made it a plain truncation in 2.1). Here an operator's unclean election makes broker
// 2, cut off since 1 s and out of the ISR, the leader with one record; broker 1 has three, its
// high watermark 3, and fetches at 3 (truncating to its HW, before KIP-101). The link from broker 2
// comes back just before the election: the reassignment's LeaderAndIsr comes first, and the
// controller sends broker 2 the election's only once broker 2 has answered it (TCP delivers that
// answer behind broker 2's Fetch held since 1.1 s, at 26.5 s). Broker 0, the old leader, is in
// broker 1's place too, and exits as well when unclean election is off.
func TestKafkaOutOfRangeTruncationNotAllowed(t *testing.T) {
	for _, unclean := range []bool{false, true} {
		t.Run(fmt.Sprintf("unclean.leader.election.enable=%v", unclean), func(t *testing.T) {
			sc, err := ParseScenario([]byte(fmt.Sprintf(`{"name":"out of range","seed":1,"brokers":3,
				"config":{"inter.broker.protocol.version":"0.10.2","unclean.leader.election.enable":%v,"auto.leader.rebalance.enable":false},
				"topics":[{"name":"t","partitions":1,"replicationFactor":3}],
				"steps":[
					{"at":100,"do":"produce","topic":"t","partition":0,"count":1},
					{"at":1000,"do":"link","from":2,"to":0,"down":true},
					{"at":2000,"do":"produce","topic":"t","partition":0,"count":2},
					{"at":20000,"do":"expect","topic":"t","partition":0,"leader":0,"isr":[0,1],"replicas":{"1":{"leo":3,"hw":3}}},
					{"at":20999,"do":"link","from":2,"to":0,"down":false},
					{"at":21000,"do":"elect","topic":"t","partition":0,"broker":2,"unclean":true},
					{"at":40000,"do":"expect","topic":"t","partition":0,"leader":2,"violations":["acked-write-lost"]}]}`, unclean)))
			if err != nil {
				t.Fatal(err)
			}
			var evs []Event
			e, res, err := Run(sc, func(b []Event) { evs = append(evs, b...) })
			if err != nil || !res.OK() {
				t.Fatalf("%v %v", err, res.Failures)
			}
			exits := eventsOf(evs, EvFailed, func(ev Event) bool { return ev.Reason == "fatal" && ev.Broker == Some(int32(1)) })
			b1 := e.Broker(1)
			if !unclean {
				if len(exits) != 1 || exits[0].Broker != Some(int32(1)) || !strings.Contains(exits[0].Text, "log truncation is not allowed") || !b1.Dead {
					t.Fatalf("broker 1 exit events %v, dead %v; want it to exit once and be down", exits, b1.Dead)
				}
				if got := e.replicaOn(0, 1).Log().LogEndOffset(); got != 3 {
					t.Errorf("broker 1's log ends at %d after exiting, want 3: it refused to truncate", got)
				}
				return
			}
			if len(exits) != 0 || b1.Dead {
				t.Fatalf("unclean election allowed: exit events %v, broker 1 down %v; want it to truncate and fetch on", exits, b1.Dead)
			}
			if got := truncations(evs, 1, e.partitions[0]); len(got) != 1 || got[0] != 1 {
				t.Errorf("broker 1 truncated to %v, want once to 1, the leader's log end", got)
			}
		})
	}
}
