package protocol

// Java's hash codes, where Kafka's iteration orders and fetcher ids depend on them.

// JavaStringHash is java.lang.String.hashCode: over UTF-16 code units, with int32 overflow.
func JavaStringHash(s string) int32 {
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

// HashCode is org.apache.kafka.common.TopicPartition.hashCode, the same in every era:
// 31 * (31 * 1 + partition) + topic.hashCode().
func (tp TP) HashCode() int32 { return 31*(31+tp.Partition) + JavaStringHash(tp.Topic) }
