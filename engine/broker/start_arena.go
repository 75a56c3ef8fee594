package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// StartArena holds the arrays a broker's leaders keep from its first LeaderAndIsr at the
// cluster's start: their ISRs, their followers' state and their epoch caches' first entries, cut
// in turn (capped windows: an append copies), three allocations where each leader made three. Its
// nil value allocates each array on its own (MakeLeader).
type StartArena struct {
	ids    []int32
	reps   []Replica
	epochs []commitlog.EpochEntry
}

// NewStartArena is an arena for leaders holding ids ISR members and reps followers in all.
func NewStartArena(ids, reps, leaders int) *StartArena {
	return &StartArena{ids: make([]int32, 0, ids), reps: make([]Replica, 0, reps),
		epochs: make([]commitlog.EpochEntry, 0, leaders)}
}

// entry is an empty array with room for one epoch cache entry (nil: AssignIn allocates).
func (a *StartArena) entry() []commitlog.EpochEntry {
	if a == nil || len(a.epochs) == cap(a.epochs) {
		return nil
	}
	at := len(a.epochs)
	a.epochs = a.epochs[:at+1]
	return a.epochs[at : at : at+1]
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
