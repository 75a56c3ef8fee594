package controller

import (
	"fmt"
	"slices"
	"testing"
)

// TestScalaOrders pins groupByOrder and setOrder to what Scala 2.11.12 (Kafka 0.11.0.2's and
// 2.1.1's default build) printed: `ks.map(k => (k, "x")).groupBy(_._1).keys` for the broker ids,
// and a Set of case class PartitionAndReplica(topic, partition, replica) built by adding the
// replicas in order. The Scala 2.13 (3.7.0) orders are from the CHAMP layout, not a Scala run.
func TestScalaOrders(t *testing.T) {
	for _, tc := range []struct {
		ids, want212, want213 []int32
	}{
		{[]int32{0, 1}, []int32{1, 0}, []int32{0, 1}},
		{[]int32{1, 2}, []int32{2, 1}, []int32{1, 2}},
		{[]int32{1, 3}, []int32{1, 3}, []int32{1, 3}},
		{[]int32{0, 1, 2, 3}, []int32{2, 1, 3, 0}, []int32{0, 1, 2, 3}},
		{[]int32{0, 1, 2, 3, 4}, []int32{0, 1, 2, 3, 4}, []int32{0, 1, 2, 3, 4}},
		{[]int32{1, 5}, []int32{5, 1}, []int32{5, 1}},
		{[]int32{3, 19}, []int32{19, 3}, nil},
		{[]int32{0, 16, 32}, []int32{32, 16, 0}, nil},
		{[]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []int32{0, 5, 1, 6, 9, 2, 7, 3, 8, 4}, []int32{0, 5, 1, 6, 9, 2, 7, 3, 8, 4}},
	} {
		if got := groupByOrder(tc.ids, GroupByScala212); !slices.Equal(got, tc.want212) {
			t.Errorf("Scala 2.12 groupBy of %v: %v, want %v", tc.ids, got, tc.want212)
		}
		if got := groupByOrder(tc.ids, GroupByScala213); tc.want213 != nil && !slices.Equal(got, tc.want213) {
			t.Errorf("Scala 2.13 groupBy of %v: %v, want %v", tc.ids, got, tc.want213)
		}
	}
	if got := int32(productHash3(javaStringHash("t"), 0, 1)); got != -525177460 {
		t.Errorf("PartitionAndReplica(t,0,1).hashCode: %d, want -525177460", got)
	}
	var pairs []replicaPair
	for _, b := range []int32{1, 2} {
		for p := range int32(3) {
			pairs = append(pairs, replicaPair{p, b})
		}
	}
	got := fmt.Sprint(setOrder(pairs, func(pid int32) (string, int32) { return "t", pid }))
	if want := "[{2 2} {0 1} {1 2} {0 2} {1 1} {2 1}]"; got != want {
		t.Errorf("Set of PartitionAndReplica: %s, want %s", got, want)
	}
}
