package broker

import (
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestPoolOrder: ReplicaManager.allPartitions' iteration order (a ConcurrentHashMap keyed by
// TopicPartition, 16 bins doubled at three quarters full): for topic "t" (String.hashCode 116)
// TopicPartition.hashCode is 1077 + 31 * partition, so with 16 bins partition p sits in bin
// (5 - p) mod 16, and with 32 (12 to 23 partitions) in (21 - p) mod 32. Partitions of two topics
// sharing a bin keep pid order.
func TestPoolOrder(t *testing.T) {
	if h := (protocol.TP{Topic: "t", Partition: 0}).HashCode(); h != 1077 {
		t.Fatalf("TopicPartition(t, 0).hashCode = %d, want 1077", h)
	}
	for _, c := range []struct {
		n    int32
		want []int32
	}{
		{1, []int32{0}},
		{2, []int32{1, 0}},
		{8, []int32{5, 4, 3, 2, 1, 0, 7, 6}},
		{11, []int32{5, 4, 3, 2, 1, 0, 10, 9, 8, 7, 6}},
		{12, []int32{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
	} {
		pids := make([]int32, c.n)
		for i := range pids {
			pids[i] = int32(i)
		}
		got := poolOrder(pids, func(pid int32) protocol.TP { return protocol.TP{Topic: "t", Partition: pid} })
		if !slices.Equal(got, c.want) {
			t.Errorf("%d partitions of t: %v, want %v", c.n, got, c.want)
		}
	}
	if n := chmTableSize(11); n != 16 {
		t.Errorf("table for 11 keys: %d, want 16", n)
	}
	if n := chmTableSize(12); n != 32 {
		t.Errorf("table for 12 keys: %d, want 32", n)
	}
}
