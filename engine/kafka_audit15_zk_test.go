package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit 15: the controller's state machines, its ControllerChannelManager and its ZooKeeper writes
// (PartitionStateMachine, ReplicaStateMachine, PartitionLeaderSelector / Election,
// ControllerChannelManager, ControllerContext, ZkUtils / KafkaZkClient, ReplicationUtils), read at
// each era's tag (0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0) and through their history between them. Each
// test names the Kafka function or change it follows.

// stopReplicaSends lists, in order, when the controller sent broker to a StopReplica and the
// partitions (of topic t) each named.
func stopReplicaSends(evs []Event, to int32) ([]int64, []string) {
	var at []int64
	var parts []string
	for _, ev := range eventsOf(evs, MsgStopReplica, func(ev Event) bool { return ev.Message.To == to }) {
		at = append(at, ev.T)
		var ps []int32
		for _, tp := range ev.Message.StopReplica.Partitions {
			ps = append(ps, tp.Partition)
		}
		parts = append(parts, fmt.Sprint(ps))
	}
	return at, parts
}

// TestAudit15StopReplicaOneRequestPerPartition: in 2.1.1 doControlledShutdown adds each followed
// partition's StopReplica with a callback (`addStopReplicaRequestForBrokers(Seq(id), partition,
// deletePartition = false, (_, _) => ())`), and so does ReplicaStateMachine's OfflineReplica
// transition; ControllerBrokerRequestBatch.sendRequestsToBrokers sends the StopReplicas without a
// callback as one request (`replicasToGroup`, here none: an empty request, sent all the same),
// then each of the others as its own request (`replicasToNotGroup.foreach`), in the order they
// were added, which is ControllerContext.partitionsOnBroker's: t's partitions in a Scala 2.11/2.12
// mutable.HashMap of Int (0..3 iterate 2, 1, 3, 0), a Set4 keeping it. Every request waits in
// broker 1's queue for the answer to the one before (RequestSendThread). 1.1.0 added the callbacks
// (KAFKA-5642's rewrite) and 2.3 removed them (KAFKA-8294); 3.7.0 sends one StopReplica per broker
// and batch (sendStopReplicaRequests, StopReplica v3).
//
// t-0, t-1, t-2 on [0,1] (led by 0), t-3 on [1,2]. Broker 2 shuts down at 1000, leaving t-3's ISR
// [1]; at 2000 broker 1 asks to shut down: t-3 cannot move, so it stays up (60 s backoff) and its
// queue drains. The ControlledShutdown arrives at 2001; broker 1 gets no LeaderAndIsr (its one led
// partition found no leader), so its first StopReplica leaves at once, and each next one two ms
// later (1 ms links). Its fetcher for leader 0 stops when the last of its partitions is stopped.
func TestAudit15StopReplicaOneRequestPerPartition(t *testing.T) {
	for _, c := range []struct {
		era   string
		at    []int64
		parts []string
		stop  int64
	}{
		{"2.1", []int64{2001, 2003, 2005, 2007, 2009, 2011, 2013, 2015},
			[]string{"[]", "[2]", "[1]", "[0]", "[]", "[2]", "[1]", "[0]"}, 2008},
		{"3.7", []int64{2001, 2003}, []string{"[0 1 2]", "[0 1 2]"}, 2002},
	} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["controlled.shutdown.retry.backoff.ms"] = "60000"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1}, {0, 1}, {0, 1}, {1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"shutdown","broker":2}`)
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			evs := e.Drain()
			at, parts := stopReplicaSends(evs, 1)
			if !slices.Equal(at, c.at) || !slices.Equal(parts, c.parts) {
				t.Errorf("StopReplica to broker 1 at %v naming %v, want at %v naming %v", at, parts, c.at, c.parts)
			}
			stopped := eventsOf(evs, EvFetcher, func(ev Event) bool { return ev.Broker.Set && ev.Broker.V == 1 && ev.Reason == "stopped" })
			if len(stopped) != 1 || stopped[0].T != c.stop {
				t.Errorf("broker 1's fetcher stops: %d events, want one at %d", len(stopped), c.stop)
			}
		})
	}
}
