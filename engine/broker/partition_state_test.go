package broker

import (
	"slices"
	"testing"
)

// TestPartitionStateInFlight: an expansion in flight puts the joining replica in the maximal ISR
// (the HW waits on it) but not the committed one; the controller's answer commits the new ISR and
// ends the change; INELIGIBLE_REPLICA reverts to the last committed state; a shrink in flight
// leaves the maximal ISR as committed.
func TestPartitionStateInFlight(t *testing.T) {
	var s PartitionState
	s.Commit([]int32{0, 2})
	s.Prepare(true, []int32{1}, []int32{0, 1, 2})
	s.Sent(42)
	if !s.IsInflight() || !s.Expanding() || s.InISR(1) || !s.InMaximalISR(1) || s.InFlight() != 42 {
		t.Fatalf("expansion in flight: %+v", s)
	}
	if got := s.MaximalISR(); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Errorf("maximal ISR %v, want [0 1 2]", got)
	}
	s.WaitForMetadata()
	if !s.Stuck() {
		t.Error("a change told to wait for metadata is not stuck")
	}
	s.Commit(s.PendingISR())
	if s.IsInflight() || s.Stuck() || !slices.Equal(s.ISR(), []int32{0, 1, 2}) {
		t.Fatalf("after the commit: %+v", s)
	}
	s.Prepare(false, []int32{2}, []int32{0, 1})
	if !s.Shrinking() || !slices.Equal(s.MaximalISR(), []int32{0, 1, 2}) {
		t.Fatalf("shrink in flight: %+v", s)
	}
	s.Revert()
	if s.IsInflight() || !slices.Equal(s.ISR(), []int32{0, 1, 2}) {
		t.Errorf("after INELIGIBLE_REPLICA: %+v", s)
	}
}
