package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// FetcherID is AbstractFetcherManager.getFetcherId: abs(31·hash(topic) + partition) mod n, where
// Kafka's Utils.abs maps Integer.MIN_VALUE to 0.
func FetcherID(topic string, partition int32, numFetchers int64) int32 {
	if numFetchers == 1 {
		return 0 // the default: no need to hash the topic's name
	}
	v := 31*protocol.JavaStringHash(topic) + partition
	if v == -1<<31 {
		v = 0
	} else if v < 0 {
		v = -v
	}
	return int32(int64(v) % numFetchers)
}
