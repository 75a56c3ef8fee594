package controller

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The order in which Kafka's ReplicaStateMachine takes a batch's replicas broker by broker: the
// iteration order of `replicas.groupBy(_.replica)`, a Scala map of broker ids whose order comes
// from hashing. It decides which member of a partition's ISR stays last when the whole ISR is lost
// at once (removeReplicasFromIsr keeps the last member).

// Scala versions whose groupBy order the controller follows (Era.GroupByScala).
const (
	// GroupByBrokerOrder: no groupBy: 0.10.2.2 and 0.11.0.2 take the replicas one by one from a
	// Set of (topic, partition, replica) (setOrder).
	GroupByBrokerOrder = 0
	// GroupByScala212 is Scala 2.11 and 2.12 (Kafka 2.1.1's builds): TraversableLike.groupBy fills a
	// mutable.HashMap, then an immutable.Map builder, which keeps the mutable map's order up to four
	// keys (Map1..Map4) and is a HashTrieMap from five.
	GroupByScala212 = 12
	// GroupByScala213 is Scala 2.13 (Kafka 3.7.0's default build): IterableOps.groupBy builds an
	// immutable.HashMap (CHAMP) whatever its size.
	GroupByScala213 = 13
)

// groupByOrder returns the broker ids in the iteration order of a Scala groupBy keyed by them, for
// Scala version v (GroupBy* constants). The ids are given in broker order, which is also the
// insertion order assumed where it matters (keys sharing a bucket of the mutable map).
func groupByOrder(ids []int32, v int) []int32 {
	switch {
	case v == GroupByScala212 && len(ids) <= 4:
		return mutableHashMapOrder(ids)
	case v == GroupByScala212:
		return hashTrieOrder(ids)
	case v == GroupByScala213:
		return champOrder(ids, 0)
	}
	return ids
}

// improve is Scala's hash improvement of immutable.HashMap (2.11/2.12 HashMap.improve, 2.13
// Hashing.improve).
func improve(h uint32) uint32 {
	h += ^(h << 9)
	h ^= h >> 14
	h += h << 4
	return h ^ (h >> 10)
}

// mutableHashMapOrder is the iteration order of a Scala 2.11/2.12 mutable.HashMap of Int keys
// inserted in the given order (mutableHashTableOrder with an Int's ## as the hash).
func mutableHashMapOrder(keys []int32) []int32 {
	return mutableHashTableOrder(keys, func(k int32) uint32 { return uint32(k) })
}

// mutableHashTableOrder is the iteration order of a Scala 2.11/2.12 mutable.HashMap whose keys
// hash to hash(k), inserted in the given order (HashTable: 16 buckets, growing by doubling past a
// 0.75 load; the index is the top bits of rotateRight(byteswap32(hash), seed) with the seed fixed
// at the initial table's bitCount(15) = 4; a new entry goes first in its bucket; foreachEntry and
// entriesIterator walk the buckets from the last to the first).
func mutableHashTableOrder(keys []int32, hash func(int32) uint32) []int32 {
	const seed = 4
	byteswap32 := func(v uint32) uint32 { return bits.ReverseBytes32(v*0x9e3775cd) * 0x9e3775cd }
	index := func(k int32, n int) int {
		improved := bits.RotateLeft32(byteswap32(hash(k)), -seed)
		return int(improved>>bits.LeadingZeros32(uint32(n-1))) & (n - 1)
	}
	table := make([][]int32, 16)
	size := 0
	for _, k := range keys {
		h := index(k, len(table))
		table[h] = append([]int32{k}, table[h]...)
		size++
		if size > len(table)*750/1000 {
			old := table
			table = make([][]int32, 2*len(old))
			for i := len(old) - 1; i >= 0; i-- {
				for _, e := range old[i] {
					h := index(e, len(table))
					table[h] = append([]int32{e}, table[h]...)
				}
			}
		}
	}
	out := make([]int32, 0, len(keys))
	for i := len(table) - 1; i >= 0; i-- {
		out = append(out, table[i]...)
	}
	return out
}

// topicAndPartitionMapOrder is the iteration order of a Scala 2.11 mutable.HashMap keyed by
// case class TopicAndPartition(topic, partition) (its hashCode MurmurHash3.productHash over the
// topic's String.hashCode and the partition), the pids inserted in the given order. name gives a
// pid's topic and partition.
func topicAndPartitionMapOrder(pids []int32, name func(pid int32) (string, int32)) []int32 {
	return mutableHashTableOrder(pids, func(pid int32) uint32 {
		topic, partition := name(pid)
		return productHash(javaStringHash(topic), uint32(partition))
	})
}

// partitionsOnBrokerScalaOrder is the order of 0.10.2.2/0.11.0.2's
// allPartitionsAndReplicationFactorOnBroker for broker b: ControllerContext.partitionsOnBroker
// (the assignment map, a mutable.HashMap of TopicAndPartition filled here in pid order, collected
// to the partitions b hosts, then toSet), mapped to (TopicAndPartition, replication factor)
// tuples. Up to four elements the immutable Sets keep the map's order (Set1..Set4); from five the
// result is a HashSet iterated by the improved Tuple2 hash (MurmurHash3.productHash of the
// TopicAndPartition's hash and the replication factor) in 5-bit chunks, lowest first.
func (k *Controller) partitionsOnBrokerScalaOrder(b int32) []int32 {
	name := func(pid int32) (string, int32) { t := k.topicOf(pid); return t.name, pid - t.first }
	all := make([]int32, len(k.zk.partitions))
	for pid := range all {
		all[pid] = int32(pid)
	}
	var on []int32
	for _, pid := range topicAndPartitionMapOrder(all, name) {
		if slices.Contains(k.zk.partitions[pid].assignment, b) {
			on = append(on, pid)
		}
	}
	if len(on) <= 4 {
		return on
	}
	hash := func(pid int32) uint32 {
		topic, partition := name(pid)
		return improve(productHash(productHash(javaStringHash(topic), uint32(partition)), uint32(len(k.zk.partitions[pid].assignment))))
	}
	slices.SortStableFunc(on, func(x, y int32) int {
		return trieCompare(hash(x), hash(y))
	})
	return on
}

// hashTrieOrder is the iteration order of a Scala 2.11/2.12 immutable.HashMap (HashTrieMap) of Int
// keys: by the improved hash's 5-bit chunks, lowest chunk first, each trie level in index order.
func hashTrieOrder(keys []int32) []int32 {
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b int32) int {
		return trieCompare(improve(uint32(a)), improve(uint32(b)))
	})
	return out
}

// trieCompare orders two improved hashes as a Scala 2.11/2.12 hash trie iterates them: by their
// 5-bit chunks, lowest chunk first (each trie level in index order).
func trieCompare(ha, hb uint32) int {
	for shift := 0; shift < 32; shift += 5 {
		if c := cmp.Compare((ha>>shift)&31, (hb>>shift)&31); c != 0 {
			return c
		}
	}
	return 0
}

// champOrder is the iteration order of a Scala 2.13 immutable.HashMap (CHAMP) of Int keys at a
// node of the given shift: the keys alone at their position of the improved hash first, in
// position order, then the sub-nodes of the positions shared by several keys, in position order
// (BitmapIndexedMapNode.foreachEntry: payload, then nodes).
func champOrder(keys []int32, shift int) []int32 {
	if len(keys) <= 1 || shift >= 32 {
		return keys
	}
	var at [32][]int32
	for _, k := range keys {
		m := (improve(uint32(k)) >> shift) & 31
		at[m] = append(at[m], k)
	}
	out := make([]int32, 0, len(keys))
	for _, ks := range at {
		if len(ks) == 1 {
			out = append(out, ks[0])
		}
	}
	for _, ks := range at {
		if len(ks) > 1 {
			out = append(out, champOrder(ks, shift+5)...)
		}
	}
	return out
}

// replicaPair is one replica of a batch: partition pid on broker b.
type replicaPair struct{ pid, b int32 }

// setOrder is the iteration order of a Scala 2.10/2.11 immutable Set of
// PartitionAndReplica(topic, partition, replica), the batch 0.10.2.2 and 0.11.0.2's
// ReplicaStateMachine.handleStateChanges walks one replica at a time (`replicas.foreach`). pairs
// come in the order the Set was built (ControllerContext.replicasOnBrokers: the dead brokers, then
// each one's partitions): up to four elements the Set keeps it (Set1..Set4); from five it is a
// HashSet, iterated by the improved case-class hash (MurmurHash3.productHash over the topic's
// String.hashCode, the partition and the replica) in 5-bit chunks, lowest first. name gives a
// pair's topic and partition.
func setOrder(pairs []replicaPair, name func(pid int32) (string, int32)) []replicaPair {
	if len(pairs) <= 4 {
		return pairs
	}
	hash := func(p replicaPair) uint32 {
		topic, partition := name(p.pid)
		return improve(productHash3(javaStringHash(topic), uint32(partition), uint32(p.b)))
	}
	out := slices.Clone(pairs)
	slices.SortStableFunc(out, func(x, y replicaPair) int {
		return trieCompare(hash(x), hash(y))
	})
	return out
}

// javaStringHash is java.lang.String.hashCode (over UTF-16 code units).
func javaStringHash(s string) uint32 { return uint32(protocol.JavaStringHash(s)) }

// productHash3 is scala.util.hashing.MurmurHash3.productHash of a three-field case class (the
// synthetic hashCode of a case class in Scala 2.10 to 2.12), seed productSeed 0xcafebabe.
func productHash3(a, b, c uint32) uint32 { return productHash(a, b, c) }

// productHash is scala.util.hashing.MurmurHash3.productHash of a case class whose fields hash to
// fields (Scala 2.10 to 2.12: mix each field's ## into productSeed 0xcafebabe, then
// finalizeHash with the arity).
func productHash(fields ...uint32) uint32 {
	mix := func(h, k uint32) uint32 {
		k *= 0xcc9e2d51
		k = bits.RotateLeft32(k, 15)
		k *= 0x1b873593
		h ^= k
		h = bits.RotateLeft32(h, 13)
		return h*5 + 0xe6546b64
	}
	h := uint32(0xcafebabe)
	for _, f := range fields {
		h = mix(h, f)
	}
	h ^= uint32(len(fields))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// partitionsOnBrokerOrder212 is the iteration order of 2.1.1's ControllerContext.partitionsOnBroker
// for broker b (Scala 2.11/2.12): partitionReplicaAssignmentUnderlying, a mutable.HashMap of topic
// name to a mutable.HashMap of partition to replicas (each filled here in pid order), flatMapped:
// the topics in the outer map's order, each topic's partitions hosting b in the order of its inner
// map filtered (a new mutable.HashMap filled in the first one's order), collected into an
// immutable Set. Up to four partitions the Set keeps that order (Set1..Set4); from five it is a
// HashSet iterated by the improved TopicPartition.hashCode (31 * (31 + partition) +
// topic.hashCode) in 5-bit chunks, lowest first. Filtering and partitioning the Set keep its order.
func (k *Controller) partitionsOnBrokerOrder212(b int32) []int32 {
	ts := make([]int32, len(k.topics))
	for i := range ts {
		ts[i] = int32(i)
	}
	var on []int32
	for _, ti := range mutableHashTableOrder(ts, func(i int32) uint32 { return javaStringHash(k.topics[i].name) }) {
		t := k.topics[ti]
		parts := make([]int32, t.count)
		for i := range parts {
			parts[i] = int32(i)
		}
		var hosting []int32
		for _, p := range mutableHashMapOrder(parts) {
			if slices.Contains(k.zk.partitions[t.first+p].assignment, b) {
				hosting = append(hosting, p)
			}
		}
		for _, p := range mutableHashMapOrder(hosting) {
			on = append(on, t.first+p)
		}
	}
	if len(on) <= 4 {
		return on
	}
	hash := func(pid int32) uint32 { return improve(k.topicPartitionHash(pid)) }
	slices.SortStableFunc(on, func(x, y int32) int { return trieCompare(hash(x), hash(y)) })
	return on
}

// topicPartitionHash is org.apache.kafka.common.TopicPartition.hashCode of partition pid:
// 31 * (31 + partition) + topic.hashCode.
func (k *Controller) topicPartitionHash(pid int32) uint32 {
	t := k.topicOf(pid)
	return uint32(protocol.TP{Topic: t.name, Partition: pid - t.first}.HashCode())
}
