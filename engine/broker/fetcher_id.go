package broker

// javaStringHash is Java's String.hashCode (UTF-16 code units, int32 overflow).
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// FetcherID is AbstractFetcherManager.getFetcherId: abs(31·hash(topic) + partition) mod n, where
// Kafka's Utils.abs maps Integer.MIN_VALUE to 0.
func FetcherID(topic string, partition int32, numFetchers int64) int32 {
	if numFetchers == 1 {
		return 0 // the default: no need to hash the topic's name
	}
	v := 31*javaStringHash(topic) + partition
	if v == -1<<31 {
		v = 0
	} else if v < 0 {
		v = -v
	}
	return int32(int64(v) % numFetchers)
}
