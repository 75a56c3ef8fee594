package hugepages

import (
	"testing"

	"github.com/highwater-sim/highwater/engine"
)

func TestEstimate(t *testing.T) {
	sc := &engine.Scenario{Topics: []engine.Topic{
		{Name: "load", Partitions: 100_000, ReplicationFactor: 3},
		{Name: "placed", Assignment: [][]int32{{0, 1}, {1, 2, 0}}},
	}}
	want := int64(300_005)*bytesPerReplica + 6_000_000*bytesPerFileByte
	if got := Estimate(sc, 6_000_000); got != want {
		t.Fatalf("Estimate = %d, want %d (300,005 replicas and a 6 MB file)", got, want)
	}
}

func TestAdviseOnlyWhenAsked(t *testing.T) {
	for _, v := range []string{"", "off", "1", "ON"} {
		t.Setenv("HIGHWATER_HUGEPAGES", v)
		if got := Advise(1 << 30); got != 0 {
			t.Errorf("HIGHWATER_HUGEPAGES=%q: Advise marked %d bytes, want none (only \"on\" opts in)", v, got)
		}
	}
	t.Setenv("HIGHWATER_HUGEPAGES", "on")
	if got := Advise(MinBytes - 1); got != 0 {
		t.Errorf("Advise(MinBytes-1) marked %d bytes, want none", got)
	}
}
