package broker

import "slices"

// leaderState is the part of a Partition only a leader fills: the leader's epoch start offset,
// the followers' state, the ISR state, the parked produces and full fetches, and the fetch
// sessions caching the replica. A follower holds none (Partition.lead nil), and then each part
// reads as a follower's: epoch start -1, no followers, an empty ISR with nothing in flight,
// nothing parked, no session. With 100,000 partitions two replicas of every three follow, and
// the 120 bytes were half of every Partition, first touched when the cluster is built.
//
// A replica gets one when it becomes leader (MakeLeader: at the cluster's start from the
// broker's StartArena) or when a fetch, a produce or a fetch session parks on it without one
// (a session keeps caching a replica that stopped leading), and gives it back where the whole
// of it is reset anyway (ResetMemory) or is found empty (releaseIdle: makeFollower, once the
// produces and fetches that were parked are answered, when the process stops and drops them,
// and when the fetch sessions are lost). One empty is read exactly as none: the two differ in
// memory only (TestEmptyLeaderStateReadsAsNone).
//
// The struct is 128 bytes, two cache lines (TestLeaderStateLayout), both read at a follower's
// fetch of the leader: line 0 the epoch start, the followers and the ISR (its HW and ISR
// checks); line 1 the purgatories and the sessions (what the fetch completes or marks).
type leaderState struct {
	epochStartOffset int64     // -1 when not leader
	remotes          []Replica // the followers' state, in assignment order without self
	// state is the committed ISR and the change in flight (KIP-497).
	state    PartitionState
	produces ProducePurgatory
	// watchers are the full fetches parked on this leader replica, nil before the first (an
	// incremental fetch waits through its session: fetchSessions); fetchSessions are the
	// broker's fetch sessions caching the partition, each with where the partition was last
	// found among its partitions. watchers is behind a pointer: with fetch sessions only a
	// follower's first Fetch is full, and a slice header would take the struct past 128 bytes.
	watchers      *watchList
	fetchSessions []sessionRef
}

// newLeaderState is an empty leader's state: what a replica without one reads.
func newLeaderState() *leaderState { return &leaderState{epochStartOffset: -1} }

// leadership is p's leader's state, made empty if it holds none (to write to).
func (p *Partition) leadership() *leaderState {
	if p.lead == nil {
		p.lead = newLeaderState()
	}
	return p.lead
}

// releaseIdle gives back p's leader's state if every part of it is empty: it would read the same
// as none (a follower's, whose parked requests were answered and whose sessions are gone).
func (p *Partition) releaseIdle() {
	l := p.lead
	if l == nil || l.epochStartOffset != -1 || len(l.remotes) != 0 || l.state.isr != nil || l.state.pending != nil ||
		l.produces.Len() != 0 || (l.watchers != nil && len(l.watchers.fetches) != 0) || len(l.fetchSessions) != 0 {
		return
	}
	p.lead = nil
}

// EpochStartOffset is the leader's epoch start offset (-1: not leader).
func (p *Partition) EpochStartOffset() int64 {
	if p.lead == nil {
		return -1
	}
	return p.lead.epochStartOffset
}

// SetEpochStartOffset sets the leader's epoch start offset (-1: not leader).
func (p *Partition) SetEpochStartOffset(o int64) {
	if p.lead != nil || o != -1 {
		p.leadership().epochStartOffset = o
	}
}

// Remotes are the followers' state (leader only), in assignment order without this broker.
func (p *Partition) Remotes() []Replica {
	if p.lead == nil {
		return nil
	}
	return p.lead.remotes
}

// Remote is follower b's state, nil if b is not a follower of this leader
// (getReplicaOrException).
func (p *Partition) Remote(b int32) *Replica {
	if p.lead == nil {
		return nil
	}
	rs := p.lead.remotes
	for i := range rs {
		if rs[i].broker == b {
			return &rs[i]
		}
	}
	return nil
}

// ClearRemotes forgets the followers' state (a follower keeps none).
func (p *Partition) ClearRemotes() {
	if p.lead != nil {
		p.lead.remotes = nil
	}
}

// ResetRemotes is makeLeader's reset of the followers' state on a new leader epoch: one Replica
// for each of hosts but this broker, in their order, kept from the previous epoch if this broker
// led it (wasLeader), reset at now with the epoch starting at start (ResetReplicaState; a
// follower in isr counts as caught up when this broker did not lead before).
func (p *Partition) ResetRemotes(now int64, hosts, isr []int32, wasLeader bool, start int64) {
	p.ResetRemotesIn(nil, now, hosts, isr, wasLeader, start)
}

// ResetRemotesIn is ResetRemotes building the followers' state in buf, an empty array with room
// for them that nothing else uses (a cluster's start cuts every leader's from one array); with
// buf nil it allocates one.
func (p *Partition) ResetRemotesIn(buf []Replica, now int64, hosts, isr []int32, wasLeader bool, start int64) {
	l := p.leadership()
	old := l.remotes
	l.remotes = l.remotes[:0:0]
	if n := len(hosts) - 1; n > 0 {
		if buf == nil {
			buf = make([]Replica, 0, n) // one allocation, not one per growth
		}
		l.remotes = buf
	}
	for _, h := range hosts {
		if h == p.broker {
			continue
		}
		inISR := slices.Contains(isr, h)
		rr := NewReplica(h)
		if wasLeader {
			for _, o := range old {
				if o.broker == h {
					rr = o
				}
			}
		}
		rr.ResetReplicaState(now, start, !wasLeader, inISR)
		l.remotes = append(l.remotes, rr)
	}
}

// fetchedAllAt sets every follower's last fetch time to now: a leader staying on at a new epoch
// before 3.3 (0.10.2.2 l.184-187, 2.1.1 l.402-405 Partition.makeLeader: resetLastCaughtUpTime(
// curLeaderLogEndOffset, curTimeMs, ...) for every assigned replica, ISR member or not).
func (l *leaderState) fetchedAllAt(now int64) {
	for i := range l.remotes {
		l.remotes[i].lastFetchTime = now
	}
}

// Produces is its purgatory of produces waiting for acks=all (leader only; nil, which reads as
// empty, on a replica holding no leader's state).
func (p *Partition) Produces() *ProducePurgatory {
	if p.lead == nil {
		return nil
	}
	return &p.lead.produces
}

// State is its PartitionState: the committed ISR (leader only) and the change in flight. It is
// nil on a replica holding no leader's state, and a nil PartitionState reads as a follower's (no
// ISR, nothing in flight); the changes are made through the leader's state (Partition.leadership).
func (p *Partition) State() *PartitionState {
	if p.lead == nil {
		return nil
	}
	return &p.lead.state
}
