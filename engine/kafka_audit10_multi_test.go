package engine

import (
	"slices"
	"testing"
)

// Audit 10, larger and busier clusters (the m*.json grader scenarios), against each era's Kafka
// source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAudit10StopReplicaStopsFollowerFetchers: the StopReplica a controlled shutdown sends the
// broker for the partitions it follows (KafkaController.shutdownBroker in 0.10.2.2 and 0.11.0.2,
// doControlledShutdown in 2.1.1 and 3.7.0, deletePartition false) reaches it and stops its
// fetchers for them (ReplicaManager.stopReplicas → replicaFetcherManager.removeFetcherForPartitions).
// So a broker whose controlled shutdown fails on another partition (here t-0, whose ISR is the
// shutting-down broker alone) no longer fetches t-1 and is not added back to its ISR; the retries
// find it out of the ISR and write nothing (removeReplicaFromIsr: "Cannot remove replica ... since
// it is not in the ISR"), and neither does onBrokerFailure when it stops: t-1 stays at epoch 1.
// The engine never delivered StopReplica (the network took it for an answer to no request): the
// broker kept fetching, its leader added it back, and each attempt, then its stop, bumped t-1's
// epoch again (4 in all).
func TestAudit10StopReplicaStopsFollowerFetchers(t *testing.T) {
	for _, era := range []string{"0.10.2", "0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["zookeeper.session.timeout.ms"] = "6000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}, {0, 1}}, cfg)
			t1 := e.partitionOf(ktTopic, 1)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":2}`)
			runFor(t, e, 7000) // at 7000 the controller takes 2 out of t-0's ISR: [1]
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 4000) // attempt 1 at 8000 moved 1 out of t-1's ISR; the next is at 13000
			if isr, ep := e.ctrl.ISR(t1.pid), e.ctrl.LeaderEpoch(t1.pid); !slices.Equal(isr, []int32{0}) || ep != 1 {
				t.Fatalf("at 12000: t-1 ISR %v epoch %d, want [0] and 1 (broker 1 stopped fetching it)", isr, ep)
			}
			if f := fetcherOfPartition(e.brokers[1], t1); f != nil {
				t.Fatalf("at 12000: broker 1 still fetches t-1 after StopReplica")
			}
			runFor(t, e, 20000) // every attempt made and broker 1 stopped
			if !e.brokers[1].Dead() {
				t.Fatalf("broker 1 still running at 32000")
			}
			if isr, ep := e.ctrl.ISR(t1.pid), e.ctrl.LeaderEpoch(t1.pid); !slices.Equal(isr, []int32{0}) || ep != 1 {
				t.Fatalf("at 32000: t-1 ISR %v epoch %d, want [0] and 1", isr, ep)
			}
		})
	}
}
