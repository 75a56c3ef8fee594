package engine

import (
	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/clients"
)

// partition is one partition of the cluster: its replicas' broker-local state. The controller's
// record of it (what ZooKeeper holds: leader, epochs, ISR, assignment) is package controller's.
type partition struct {
	pid   int32
	topic string
	index int32
	// hosts are the brokers holding a replica, in the original assignment order. The replicas
	// are theirs (brk.Broker.Replica; e.replicaOn for the readers).
	hosts []int32
}

// offsetID is a record known to be at an offset.
type offsetID = clients.OffsetID

// replica is a broker's copy of a partition: Kafka's Partition object plus its UnifiedLog,
// package broker's Partition (the broker, leader and leader epoch, known, offline, HW confirmed,
// partition epoch, its pid, epoch start offset, HW checkpoint, unflushed count, the log, the
// followers' state, the ISR state, the parked produces and fetches, and the fetch sessions
// caching it). A HW recovered from the checkpoint after a restart is only a claim until
// confirmed; committed-divergence is checked over the whole committed range when the HW becomes
// confirmed.
type replica = brk.Partition

// broker is one Kafka broker process and its machine.
type broker struct {
	// Broker is the broker (package broker's): its replicas, replica manager and fetchers, the
	// Host its handlers are handed, its entry points (kafka_apis.go) and its process's state
	// (running, shutting down, dead, a failed log directory, the controlled shutdown's attempts:
	// kafka_server.go); cluster (broker_cluster.go) is what it asks of the engine. Below: the
	// world's part of the process, and rm and fetchers, the Broker's at hand.
	*brk.Broker
	id int32
	// incarnation rises at every start; timers and requests of an older one are ignored.
	incarnation uint64
	isolated    bool
	// brokerEpoch is the current ZooKeeper registration's (the czxid, KIP-380).
	brokerEpoch int64
	// rm and fetchers are Broker's replica manager (LeaderAndIsr, StopReplica, the HW
	// checkpoint task, Fetch with the FetchSessionCache of the followers fetching from this
	// broker, Produce, the ISR's changes) and fetcher manager.
	rm       *brk.ReplicaManager
	fetchers *brk.FetcherManager
	// startsOnExpiry: before KIP-380 a restart could not register while the old ZooKeeper
	// session lived; the broker starts when that session expires (restart).
	startsOnExpiry bool
}
