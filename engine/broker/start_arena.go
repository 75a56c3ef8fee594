package broker

import "slices"

// StartArena holds the arrays a broker's leaders keep from its first LeaderAndIsr at the
// cluster's start: their leader's states, ISRs, followers' state and lists of the fetch sessions
// caching them (one per follower, whose first Fetch makes it), cut in turn (capped windows: an
// append copies), four allocations where each leader made four. Its nil value allocates each on
// its own (MakeLeader).
type StartArena struct {
	leads []leaderState
	ids   []int32
	reps  []Replica
	refs  []sessionRef
}

// NewStartArena is an arena for as many leaders as leaders, holding ids ISR members and reps
// followers in all. (A leader's epoch cache needs no room of its own: it keeps its one entry in
// itself.)
func NewStartArena(leaders, ids, reps int) *StartArena {
	return &StartArena{leads: make([]leaderState, 0, leaders), ids: make([]int32, 0, ids), reps: make([]Replica, 0, reps),
		refs: make([]sessionRef, 0, reps)}
}

// leaderState is an empty leader's state (newLeaderState).
func (a *StartArena) leaderState() *leaderState {
	if a == nil || len(a.leads) == cap(a.leads) {
		return newLeaderState()
	}
	a.leads = a.leads[:len(a.leads)+1] // zeroed by make
	l := &a.leads[len(a.leads)-1]
	l.epochStartOffset = -1
	return l
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

// sessionRefs is an empty list with room for n fetch sessions (nil if n is 0).
func (a *StartArena) sessionRefs(n int) []sessionRef {
	if n <= 0 {
		return nil
	}
	if a == nil || len(a.refs)+n > cap(a.refs) {
		return make([]sessionRef, 0, n)
	}
	at := len(a.refs)
	a.refs = a.refs[:at+n]
	return a.refs[at : at : at+n]
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
