package broker

import (
	"slices"
	"strings"
	"testing"
)

// TestIsrChangePropagationInterval: ReplicaManager.maybePropagateIsrChanges (0.10.2.2, 0.11.0.2,
// 2.1.1) with an ISR change recorded every 2000 ms from 1000 on: the black-out (no change for
// more than 5000 ms) never passes, so the set goes out only once the last write is more than
// IsrChangePropagationInterval (60000 ms) ago, counted from the replica manager's start (0):
// at the run at 62500, then at 125000 (62500 + 60000 == 122500 is not `<`), each naming the
// partitions recorded since, in the order first recorded.
func TestIsrChangePropagationInterval(t *testing.T) {
	h := &fakeHost{fakeFollower: newFakeFollower(0)}
	var fetchers FetcherManager
	rm := NewReplicaManager(1, &fetchers)
	rm.IsrChangesStarted(h)
	next := int64(1000)
	for tick := int64(IsrChangePropagationPeriodMs); tick <= 130000; tick += IsrChangePropagationPeriodMs {
		for ; next <= tick; next += 2000 {
			h.now = next
			rm.recordIsrChange(h, int32(next/2000%3))
		}
		h.now = tick
		rm.IsrChangePropagationTask(h)
	}
	var got []string
	for _, c := range h.calls {
		if strings.HasPrefix(c, "isr change notification") {
			got = append(got, c)
		}
	}
	if want := []string{"isr change notification [0 1 2] at 62500", "isr change notification [1 2 0] at 125000"}; !slices.Equal(got, want) {
		t.Errorf("notifications: %q, want %q", got, want)
	}
	if got := rm.PendingIsrChanges(); len(got) == 0 {
		t.Errorf("nothing recorded after 125000, want the changes since")
	}
}
