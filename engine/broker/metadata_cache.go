package broker

// MetadataCache is the part of a broker's metadata cache (ZkMetadataCache, 3.7.0) a rule the
// engine models reads: the live brokers of the last UpdateMetadata the broker applied
// (ZkMetadataCache.updateMetadata replaces metadataSnapshot.aliveBrokers with the request's
// liveBrokers). 3.7's leader lets a follower into the ISR, and counts it for the HW, only while
// its cache has it alive (Partition.isReplicaIsrEligible → ZkMetadataCache.hasAliveBroker,
// KIP-841, 3.3): a restarted follower is eligible once the controller's onBrokerStartup
// UpdateMetadata reaches the leader, not when it registers in ZooKeeper. A new process starts
// with an empty cache; at the cluster's start, time 0, every broker's holds every broker, as the
// first controller's UpdateMetadata would (the start applies its requests at once).
//
// The leaders and ISRs the cache also holds are not modelled: brokers and clients read those from
// the controller at once (engine/shortcuts.go metadataAtOnce).
type MetadataCache struct {
	alive []uint64 // a bit per broker id
}

// SetAliveBrokers replaces the live brokers with ids (an UpdateMetadata's liveBrokers).
func (c *MetadataCache) SetAliveBrokers(ids []int32) {
	clear(c.alive)
	for _, id := range ids {
		w := int(id) / 64
		if w >= len(c.alive) {
			c.alive = append(c.alive, make([]uint64, w+1-len(c.alive))...)
		}
		c.alive[w] |= 1 << (uint(id) % 64)
	}
}

// HasAliveBroker is ZkMetadataCache.hasAliveBroker.
func (c *MetadataCache) HasAliveBroker(id int32) bool {
	w := int(id) / 64
	return id >= 0 && w < len(c.alive) && c.alive[w]&(1<<(uint(id)%64)) != 0
}

// Clear empties the cache (a process that just started).
func (c *MetadataCache) Clear() { clear(c.alive) }
