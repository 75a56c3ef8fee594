package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Audit 15, the controller's UpdateMetadata: KafkaController and ControllerBrokerRequestBatch
// (ControllerChannelManager.scala) at each era's tag (0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Every
// batch that adds a LeaderAndIsr partition also adds it to an UpdateMetadata for every live or
// shutting-down broker (addLeaderAndIsrRequestForBrokers → addUpdateMetadataRequestForBrokers),
// and sendRequestsToBrokers sends the batch's LeaderAndIsr requests, then its UpdateMetadata,
// then its StopReplica requests, all through the broker's one queue, whose RequestSendThread
// sends the next request only after the last one's answer. onControllerFailover and
// onBrokerStartup send an UpdateMetadata of their own before their first LeaderAndIsr. With 3 ms
// links each request ahead of a LeaderAndIsr in the queue delays it by a round trip, 6 ms. The
// tests below compare arrival times only (they build with or without UpdateMetadata).

// umdEras are the four eras with their ZooKeeper session timeout (6000 before 2.5, 18000 after).
var umdEras = []struct {
	era     string
	session int64
}{{"0.10.2", 6000}, {"0.11.0", 6000}, {"2.1", 6000}, {"3.7", 18000}}

// umdCfg is era's configuration with 3 ms links.
func umdCfg(era string) map[string]string {
	c := eraCfg(era)
	c["sim.network.latency.ms"] = "3"
	return c
}

// leaderAndIsrArrivals lists when LeaderAndIsr requests sent at or after from reached broker to,
// each with the leader it names for t-0.
func leaderAndIsrArrivals(evs []Event, to int32, from int64) []string {
	var out []string
	for _, ev := range eventsOf(evs, MsgLeaderAndIsr, func(ev Event) bool { return ev.Message.To == to && ev.T >= from }) {
		out = append(out, fmt.Sprintf("%d leader %d", ev.Message.Deliver, ev.Message.LeaderAndIsr.Partitions[0].Leader))
	}
	return out
}

// TestAudit15UpdateMetadataBeforeFailoverLeaderAndIsr: controller 0 (leading t-0 on [0,1,2]) is
// killed at 1000; at its session's expiry broker 1 becomes controller (T). onControllerFailover
// sends every live broker an UpdateMetadata "before the state machines are started" (0.10.2.2
// l.339, 2.1.1 l.257, 3.7.0 l.314), then ReplicaStateMachine.startup's OnlineReplica batch (its
// LeaderAndIsr, then its UpdateMetadata), from 2.3 (KAFKA-3143) the OfflineReplica batch for
// broker 0's replica (out of the ISR, leader none: a LeaderAndIsr and an UpdateMetadata), then
// PartitionStateMachine.startup's election of broker 1. Broker 2's queue: the OnlineReplica
// LeaderAndIsr arrives at T+9 (behind one UpdateMetadata; it was T+3), the election at T+21
// (behind three requests; it was T+9), in 3.7 the OfflineReplica's at T+21 and the election at
// T+33 (it was T+15): the 12 ms the timing audit found.
func TestAudit15UpdateMetadataBeforeFailoverLeaderAndIsr(t *testing.T) {
	for _, c := range umdEras {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, umdCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, c.session+100)
			T := 1000 + c.session
			want := []string{fmt.Sprintf("%d leader 0", T+9), fmt.Sprintf("%d leader 1", T+21)}
			if c.era == "3.7" {
				want = []string{fmt.Sprintf("%d leader 0", T+9), fmt.Sprintf("%d leader -1", T+21), fmt.Sprintf("%d leader 1", T+33)}
			}
			if got := leaderAndIsrArrivals(e.Drain(), 2, T); !slices.Equal(got, want) {
				t.Errorf("LeaderAndIsr at broker 2 from the new controller (T = %d): %v, want %v", T, got, want)
			}
		})
	}
}

// TestAudit15UpdateMetadataBeforeStartupLeaderAndIsr: broker 2 (a follower of t-0 on [0,1,2]) is
// killed at 1000 and restarted after its session expired. onBrokerStartup sends an UpdateMetadata
// first (0.10.2.2 l.432 and 2.1.1 l.364 to every live broker; 3.7.0 l.579-583, KAFKA-7537: one
// without partition states to the others, the full one to the new broker), then the
// OnlineReplica LeaderAndIsr: it reaches broker 2 9 ms after the registration, not 3.
func TestAudit15UpdateMetadataBeforeStartupLeaderAndIsr(t *testing.T) {
	for _, c := range umdEras {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, umdCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, c.session+1000)
			e.Drain()
			apply(t, e, `{"do":"restart","broker":2}`)
			runFor(t, e, 1000)
			evs := e.Drain()
			reg := eventsOf(evs, EvZKRegister, onBroker(2))
			if len(reg) != 1 {
				t.Fatalf("registrations of broker 2: %d, want 1", len(reg))
			}
			R := reg[0].T
			if got, want := leaderAndIsrArrivals(evs, 2, R), []string{fmt.Sprintf("%d leader 0", R+9)}; !slices.Equal(got, want) {
				t.Errorf("LeaderAndIsr at broker 2 after its registration at %d: %v, want %v", R, got, want)
			}
		})
	}
}

// TestAudit15UpdateMetadataBeforeChosenLeaderElection: an operator moves t-0 (on [0,1,2], led by
// 0) to broker 2 at 1000: the reassignment that puts 2 first completes at once (every replica is
// in the ISR) with moveReassignedPartitionLeaderIfRequired's LeaderAndIsr (leader 0, a new leader
// epoch) and its batch's UpdateMetadata, then onPartitionReassignment's own UpdateMetadata for the
// partition (0.10.2.2 l.609, 2.1.1 l.558, 3.7.0 l.810), then the preferred election's LeaderAndIsr
// (leader 2). At broker 1 the first arrives at 1003 and the election at 1021 (behind two
// UpdateMetadata round trips; it was 1009). 3.7 only: before 2.4 the completed reassignment also
// moves each target replica to OnlineReplica, one handleStateChanges (a LeaderAndIsr to it and an
// UpdateMetadata to every broker) each, before moveReassignedPartitionLeaderIfRequired
// (onPartitionReassignment step 5, 0.10.2.2 and 2.1.1), which the engine does not send
// (docs/simplifications.md); 3.7.0's B1 moves only the adding replicas, none for a reorder.
func TestAudit15UpdateMetadataBeforeChosenLeaderElection(t *testing.T) {
	for _, c := range umdEras[3:] {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, umdCfg(c.era))
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"elect","topic":"t","partition":0,"broker":2}`)
			runFor(t, e, 100)
			if got, want := leaderAndIsrArrivals(e.Drain(), 1, 1000), []string{"1003 leader 0", "1021 leader 2"}; !slices.Equal(got, want) {
				t.Errorf("LeaderAndIsr at broker 1: %v, want %v", got, want)
			}
		})
	}
}

// umdCounts lists the partition-state counts of the UpdateMetadata requests sent to broker to in
// [from, until).
func umdCounts(evs []Event, to int32, from, until int64) []int {
	var out []int
	for _, ev := range eventsOf(evs, MsgUpdateMetadata, func(ev Event) bool { return ev.Message.To == to && ev.T >= from && ev.T < until }) {
		out = append(out, ev.Message.UpdateMetadata.Partitions)
	}
	return out
}

// TestAudit15UpdateMetadataPartitions: which partition states KafkaController's own UpdateMetadata
// requests carry. t has three partitions on [0,1,2], [1,0,2], [0,1,2] (broker 2 leads none).
// Before 2.2 sendUpdateMetadataRequest with no partitions sends every partition's state
// (addUpdateMetadataRequestForBrokers' `partitionLeadershipInfo.keySet`, 0.10.2.2 and 2.1.1);
// from 2.2 (KAFKA-7537) none, and onBrokerStartup sends the full one only to the new broker.
//   - Broker 2 dies (its session expires): onBrokerFailure's OfflineReplica batch sends every live
//     broker an UpdateMetadata for the three partitions; as no partition lost its leader, before
//     3.1 onBrokerFailure / onReplicasBecomeOffline sends one more (`partitionsWithoutLeader.isEmpty`:
//     three states before 2.2); 3.7.0 does not (KAFKA-13225: only when no replica went offline).
//   - It restarts: onBrokerStartup's UpdateMetadata, three states to broker 0 before 2.2, none in
//     3.7; three to broker 2 in every era; then the OnlineReplica batch's, three. In 3.7 the leaders
//     then add broker 2 back to each ISR through AlterPartition, and tryProcessAlterPartition sends
//     every live broker an UpdateMetadata for the partition each time (3.7.0 l.2479): one state,
//     three times (before 2.7 the leader writes ZooKeeper itself and the controller hears of it
//     only through isr_change_notification: kafka_audit15_isrnotify_test.go).
//   - Controller 0 dies: onControllerFailover's UpdateMetadata to broker 2, three states before
//     2.2, none in 3.7; then the OnlineReplica batch's (three), in 3.7 the OfflineReplica batch's
//     for broker 0's replicas (three: it leaves every ISR, KAFKA-3143), and the elections' (two:
//     t-0 and t-2). Before 2.7 one more: leader 1 wrote broker 2's return to t-1's ISR at about
//     8010 (lastIsrChangeMs); its isr-change-propagation task, every 2500 ms from 0, first finds
//     that change more than 5000 ms old at 15000 (ReplicaManager.maybePropagateIsrChanges), the
//     instant of controller 0's session expiry, which the engine runs first (its timer was set
//     first): the new controller's IsrChangeNotification sends an UpdateMetadata for t-1 alone
//     after the failover's requests.
func TestAudit15UpdateMetadataPartitions(t *testing.T) {
	for _, c := range umdEras {
		t.Run(c.era, func(t *testing.T) {
			old := c.era != "3.7"
			pick := func(before, after []int) []int {
				if old {
					return before
				}
				return after
			}
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 0, 2}, {0, 1, 2}}, umdCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, c.session+1000)
			T := 1000 + c.session
			evs := e.Drain()
			if got, want := umdCounts(evs, 1, T, T+1000), pick([]int{3, 3}, []int{3}); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata to broker 1 after broker 2's death: %v, want %v", got, want)
			}
			apply(t, e, `{"do":"restart","broker":2}`)
			runFor(t, e, 1000)
			evs = e.Drain()
			R := eventsOf(evs, EvZKRegister, onBroker(2))[0].T
			if got, want := umdCounts(evs, 0, R, R+1000), pick([]int{3, 3}, []int{0, 3, 1, 1, 1}); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata to broker 0 after broker 2's registration: %v, want %v", got, want)
			}
			if got, want := umdCounts(evs, 2, R, R+1000), pick([]int{3, 3}, []int{3, 3, 1, 1, 1}); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata to broker 2 after its registration: %v, want %v", got, want)
			}
			apply(t, e, `{"do":"kill","broker":0}`)
			F := e.now + c.session
			runFor(t, e, c.session+1000)
			if got, want := umdCounts(e.Drain(), 2, F, F+1000), pick([]int{3, 3, 2, 1}, []int{0, 3, 3, 2}); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata to broker 2 after the failover at %d: %v, want %v", F, got, want)
			}
		})
	}
}

// TestAudit15IsrEligibilityReadsLeadersMetadataCache: 3.7.0 Partition.isReplicaIsrEligible asks
// the leader's own metadata cache (ZkMetadataCache.hasAliveBroker, KIP-841), which the
// controller's UpdateMetadata fills, not ZooKeeper. Grader F11: with the controller's link to
// leader 1 slow (100 ms), the UpdateMetadata that tells it restarted follower 3 is alive
// (onBrokerStartup's) arrives at 20100, after 3's first Fetch (20012): that Fetch adds nothing,
// and 3 rejoins at its next Fetch (asked at 20518, written at 20521). With the old shortcut (the
// leader read ZooKeeper's registrations at once) 3 rejoined at its first Fetch.
func TestAudit15IsrEligibilityReadsLeadersMetadataCache(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("testdata", "grader", "F11-restarted-follower-isr-eligible-after-leaders-updatemetadata-3.7.json"))
	if err != nil {
		t.Fatal(err)
	}
	evs, res := runScenarioText(t, string(file))
	if !res.OK() {
		t.Errorf("expectations failed: %+v", res.Failures)
	}
	var asked []int64
	for _, ev := range evs {
		if ev.Type == EvISRPending && ev.Reason == "expand" && slices.Contains(ev.ISR, 3) {
			asked = append(asked, ev.T)
		}
	}
	if want := []int64{20518}; !slices.Equal(asked, want) {
		t.Errorf("leader 1 asked to add 3 to the ISR at %v, want %v (its first Fetch at 20012 came before the leader's metadata cache had 3 alive, at 20100)", asked, want)
	}
}
