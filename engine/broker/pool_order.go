package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// ReplicaManager.allPartitions is a kafka.utils.Pool, a java.util.concurrent.ConcurrentHashMap
// keyed by TopicPartition (0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0), and the isr-expiration task walks
// it (maybeShrinkIsr: allPartitions.values / .keys.foreach), so the leader checks its partitions
// in the map's iteration order: by bin, spread(hash) & (table size - 1). That order shows in 3.7,
// where a broker has one AlterPartition in flight (DefaultAlterPartitionManager) and the
// partitions found out of sync after the first wait for its answer, a round trip each; and before
// 2.7 in which partitions wait behind an ISR write blocked on ZooKeeper (zkBlockedWrite). For one
// topic the bins run down from the partition the topic's hash puts lowest: topic "t" walks t-5,
// t-4, ..., t-0, then t-11 down to t-6 (TopicPartition.hashCode = 31 * (31 + partition) +
// topic.hashCode()).
//
// Simplified: partitions sharing a bin (of different topics) keep pid order, where Kafka keeps
// their insertion order (the LeaderAndIsr's) and a resize's transfer may reverse part of a bin;
// the table is sized for the broker's replica count (a ConcurrentHashMap of 16 bins doubles when
// three quarters full) and never shrinks.

// chmTableSize is the bins of a ConcurrentHashMap built empty and filled with n keys: 16, doubled
// each time the count reaches its sizeCtl, three quarters of the table (addCount).
func chmTableSize(n int) int32 {
	size := int32(16)
	for n >= int(size-size>>2) {
		size <<= 1
	}
	return size
}

// poolOrder returns pids in allPartitions' iteration order: ConcurrentHashMap's bin index
// (spread(h) & (size - 1), spread(h) = (h ^ h >>> 16) & 0x7fffffff) for its TopicPartition, pid
// order within a bin.
func poolOrder(pids []int32, tp func(int32) protocol.TP) []int32 {
	size := chmTableSize(len(pids))
	type binned struct{ bin, pid int32 }
	bs := make([]binned, len(pids)) // each key hashed once: a broker may host a million replicas
	for i, pid := range pids {
		h := tp(pid).HashCode()
		bs[i] = binned{(h ^ int32(uint32(h)>>16)) & 0x7fffffff & (size - 1), pid}
	}
	slices.SortFunc(bs, func(a, b binned) int {
		if a.bin != b.bin {
			return int(a.bin - b.bin)
		}
		return int(a.pid - b.pid)
	})
	out := make([]int32, len(bs))
	for i, b := range bs {
		out[i] = b.pid
	}
	return out
}
