package engine

import "github.com/highwater-sim/highwater/engine/controller"

// Where a broker learns something from the cluster without a message, the engine takes a
// shortcut Kafka does not (docs/simplifications.md). Each shortcut is an interface named
// for the simplification, and broker code reads the cluster only through it: a reader sees at
// the call which knowledge came for free, and modelling the real path (the metadata cache the
// controller's UpdateMetadata fills, a ZooKeeper round trip) means replacing one implementation. Both are answered from the
// controller and its ZooKeeper (controller.go: zookeeper).

// metadataAtOnce: no metadata cache. A broker or client knows at once which brokers are
// registered in ZooKeeper, which broker is the active controller and which broker leads a
// partition; Kafka's broker reads these from its metadata cache, which the controller's
// UpdateMetadata requests fill some milliseconds later (and a client from a Metadata request).
// The engine's controller sends those requests (controller/update_metadata.go), for their place
// in its per-broker queue; they carry no partition states, and fill only the cache's live
// brokers, which a 3.7 leader's ISR eligibility reads (broker/metadata_cache.go).
type metadataAtOnce interface {
	// registered reports whether broker b has a live registration (/brokers/ids/b).
	registered(b int32) bool
	// activeController is the controller's broker id, or -1 while there is none.
	activeController() int32
	// leader is partition pid's leader as the controller wrote it, -1 for none (the producer's
	// and consumer's leader lookup).
	leader(pid int32) int32
	// leaderEpoch is partition pid's leader epoch as the controller wrote it (the producer's
	// view of a leader change: KIP-951's skipped backoff).
	leaderEpoch(pid int32) int32
}

// zookeeperAtOnce: ZooKeeper answers at once. A broker starting before broker epochs finds its
// old registration (NodeExists); a pre-2.7 leader writes the ISR to ZooKeeper itself, and its
// ISR-change notification.
type zookeeperAtOnce interface {
	// registered reports whether broker b has a live registration (/brokers/ids/b).
	registered(b int32) bool
	// updateIsr is the leader's conditional ISR write (Partition.updateIsr): broker b writes isr
	// to partition pid's znode if its session is connected and zkVersion is the znode's version.
	updateIsr(b, pid int32, isr []int32, zkVersion int32) controller.IsrWrite
	// propagateIsrChanges is the pre-2.7 broker's ISR-change notification (ReplicaManager
	// .maybePropagateIsrChanges): broker b writes /isr_change_notification/isr_change_NNN naming
	// pids if its session is connected; the controller's watch fires at once.
	propagateIsrChanges(b int32, pids []int32) bool
}
