package broker

import "slices"

// StartArena holds the arrays a broker's leaders keep from its first LeaderAndIsr at the
// cluster's start: their ISRs and their followers' state, cut in turn (capped windows: an append
// copies), two allocations where each leader made two. Its nil value allocates each array on its
// own (MakeLeader).
type StartArena struct {
	ids  []int32
	reps []Replica
}

// NewStartArena is an arena for leaders holding ids ISR members and reps followers in all. (A
// leader's epoch cache needs no room of its own: it keeps its one entry in itself.)
func NewStartArena(ids, reps int) *StartArena {
	return &StartArena{ids: make([]int32, 0, ids), reps: make([]Replica, 0, reps)}
}

// clone is a copy of isr (slices.Clone: nil stays nil).
func (a *StartArena) clone(isr []int32) []int32 {
	if a == nil || isr == nil {
		return slices.Clone(isr)
	}
	at := len(a.ids)
	a.ids = append(a.ids, isr...)
	return a.ids[at:len(a.ids):len(a.ids)]
}

// remotes is an empty array with room for n followers' state (nil: ResetRemotesIn allocates).
func (a *StartArena) remotes(n int) []Replica {
	if a == nil || n <= 0 || len(a.reps)+n > cap(a.reps) {
		return nil
	}
	at := len(a.reps)
	a.reps = a.reps[:at+n]
	return a.reps[at : at : at+n]
}
