package broker

import (
	"reflect"
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// leaderReads is every read of a replica's leader's state.
func leaderReads(p *Partition) []any {
	s := p.State()
	return []any{p.EpochStartOffset(), p.Remotes(), p.Remote(0), p.Produces().Len(), s.ISR(), s.InISR(1), s.IsInflight(),
		s.Expanding(), s.Shrinking(), s.Changing(), s.PendingISR(), s.InMaximalISR(1), s.MaximalISR(), s.InFlight(),
		s.Stuck(), p.watching(), p.FetchSessionCount(), p.SessionSentHW(0, 0), p.heldByISR()}
}

// TestEmptyLeaderStateReadsAsNone: a replica holding an empty leader's state reads exactly as one
// holding none (a follower's: epoch start -1, no followers, no ISR, nothing in flight or parked,
// no session; nil where none has nil), and releaseIdle gives back an empty one and only an empty
// one.
func TestEmptyLeaderStateReadsAsNone(t *testing.T) {
	none, empty := NewPartition(1, 0), NewPartition(1, 0)
	empty.lead = newLeaderState()
	if a, b := leaderReads(&none), leaderReads(&empty); !reflect.DeepEqual(a, b) {
		t.Fatalf("no leader's state reads %#v, an empty one %#v", a, b)
	}
	empty.SessionsChanged() // no session to tell
	empty.releaseIdle()
	if empty.lead != nil {
		t.Fatal("an empty leader's state was kept")
	}
	for name, set := range map[string]func(l *leaderState){
		"an epoch start":     func(l *leaderState) { l.epochStartOffset = 0 },
		"a follower":         func(l *leaderState) { l.remotes = []Replica{NewReplica(0)} },
		"an empty ISR":       func(l *leaderState) { l.state.Commit([]int32{}) }, // reads [], not nil
		"a change in flight": func(l *leaderState) { l.state.Prepare(true, []int32{0}, []int32{0, 1}) },
		"a produce":          func(l *leaderState) { l.produces.Add(&DelayedProduce{}) },
		"a fetch":            func(l *leaderState) { l.watchers = &watchList{fetches: []*DelayedFetch{{}}} },
		"a session":          func(l *leaderState) { l.fetchSessions = []sessionRef{{s: &FetchSession{}}} },
	} {
		p := NewPartition(1, 0)
		set(p.leadership())
		if p.releaseIdle(); p.lead == nil {
			t.Errorf("a leader's state holding %s was given back", name)
		}
	}
	none.SetEpochStartOffset(-1)
	none.ClearRemotes()
	if none.lead != nil {
		t.Error("a follower's reset of its epoch start or followers made it a leader's state")
	}
}

// TestLeaderStateFollowsLeadership: through LeaderAndIsr, a replica gets a leader's state when it
// becomes leader and gives it back when it becomes follower; one still cached by a fetch session
// keeps it until the sessions are lost, and a restart forgets it.
func TestLeaderStateFollowsLeadership(t *testing.T) {
	h := &fakeHost{fakeFollower: newFakeFollower(0, 1), book: Rules{Replica: ReplicaRules{BrokerEpochs: true,
		AssignEpochOnElection: true, FollowerRestartsOnNewEpoch: true, TruncateOnFetch: true, NumReplicaFetchers: 1,
		CheckpointIntervalMs: 5000}}}
	var fetchers FetcherManager
	rm := NewReplicaManager(1, &fetchers)
	become := func(leader0, epoch int32) {
		state := func(pid, leader int32) protocol.LeaderAndIsrState {
			return protocol.LeaderAndIsrState{TP: h.TP(pid), Leader: leader, LeaderEpoch: epoch, ISR: []int32{0, 1, 2}, Replicas: []int32{0, 1, 2}}
		}
		rm.BecomeLeaderOrFollower(h, &protocol.LeaderAndIsrRequest{ControllerEpoch: 3, BrokerEpoch: 42,
			Partitions: []protocol.LeaderAndIsrState{state(0, leader0), state(1, 0)}, LiveLeaders: []int32{0, 1}})
	}
	become(1, 1)
	t0, t1 := h.replicas[0], h.replicas[1]
	if t0.lead == nil || t1.lead != nil {
		t.Fatalf("after leading t-0 and following t-1: t-0 holds a leader's state %v, t-1 %v", t0.lead != nil, t1.lead != nil)
	}
	become(0, 2)
	if t0.lead != nil {
		t.Fatal("t-0 kept its leader's state as a follower")
	}
	become(1, 3)
	t0.lead.fetchSessions = append(t0.lead.fetchSessions, sessionRef{s: &FetchSession{}})
	become(0, 4)
	if t0.lead == nil || t0.FetchSessionCount() != 1 || t0.EpochStartOffset() != -1 || len(t0.Remotes()) != 0 || t0.State().ISR() != nil {
		t.Fatalf("t-0 as a follower cached by a session: holds a leader's state %v, %d sessions, epoch start %d, %d followers, ISR %v",
			t0.lead != nil, t0.FetchSessionCount(), t0.EpochStartOffset(), len(t0.Remotes()), t0.State().ISR())
	}
	rm.LoseFetchSessions(h)
	if t0.lead != nil {
		t.Fatal("t-0 kept its leader's state once its sessions were lost")
	}
	become(1, 5)
	t0.ResetMemory()
	if t0.lead != nil {
		t.Fatal("a restart kept t-0's leader's state")
	}
}

// TestLeaderSessionListSized: a leader's list of the sessions caching it is made with room for a
// session per follower (one allocation for both of RF 3's), a follower's for one.
func TestLeaderSessionListSized(t *testing.T) {
	p := NewPartition(1, 0)
	p.ResetRemotes(0, []int32{0, 1, 2}, nil, false, 0)
	s1, s2 := &FetchSession{}, &FetchSession{}
	if n := testing.AllocsPerRun(100, func() { p.lead.fetchSessions = nil; p.cachedBy(s1, 0); p.cachedBy(s2, 1) }); n != 1 {
		t.Errorf("two sessions caching a leader of two followers took %v allocations, want 1", n)
	}
	if p.FetchSessionCount() != 2 || p.lead.fetchSessions[1] != (sessionRef{s2, 1}) {
		t.Errorf("sessions %v, want s1 then s2", p.lead.fetchSessions)
	}
	f := NewPartition(1, 0)
	f.cachedBy(s1, 0)
	if c := cap(f.lead.fetchSessions); c != 1 {
		t.Errorf("a follower's list was made with room for %d, want 1", c)
	}
}
