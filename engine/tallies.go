package engine

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/netsim"
)

// Run-wide tallies, for a reader's overview of a large cluster (Engine.Tallies): ISR shrinks and
// expands, leader changes, and fetch traffic between brokers. An observer of the protocol's facts
// (observe.go): plain counting, no effect on the simulation.

// tallies are run-wide counters kept as the run goes (they survive nothing: a seek rebuilds them).
type tallies struct {
	ignores
	isrShrinks    int64
	isrExpands    int64
	leaderChanges int64
	// flows counts replication traffic per (follower, leader) pair, at follower*width+leader:
	// every Fetch and its answer count, and a map hashed twice per round trip (issue 12).
	flows []flow
	width int
}

// flow is the replica fetch traffic from one follower broker to one leader broker since time 0:
// Fetch requests sent and records the responses returned; seen once the pair has any.
type flow struct {
	fetches, records int64
	seen             bool
}

// flow is the pair key's counters, the table widened to take it.
func (t *tallies) flow(key netsim.Link) *flow {
	from, to := int(key.From), int(key.To)
	if from >= t.width || to >= t.width {
		w := max(from, to, t.width) + 1
		flows := make([]flow, w*w)
		for f := range t.width {
			copy(flows[f*w:f*w+t.width], t.flows[f*t.width:(f+1)*t.width])
		}
		t.flows, t.width = flows, w
	}
	f := &t.flows[from*t.width+to]
	f.seen = true
	return f
}

// eachFlow calls fn on every pair with traffic, in (follower, leader) order.
func (t *tallies) eachFlow(fn func(key netsim.Link, f *flow)) {
	for i := range t.flows {
		if f := &t.flows[i]; f.seen {
			fn(netsim.Link{From: int32(i / t.width), To: int32(i % t.width)}, f)
		}
	}
}

// countISRChange tallies a committed ISR change as a shrink, an expand, or both (a replica out
// and another in, as a controller write after a restart can do).
func (t *tallies) isrChanged(_ *partition, old, isr []int32) {
	for _, b := range old {
		if !slices.Contains(isr, b) {
			t.isrShrinks++
			break
		}
	}
	for _, b := range isr {
		if !slices.Contains(old, b) {
			t.isrExpands++
			break
		}
	}
}

func (t *tallies) elected(*partition) { t.leaderChanges++ }

// sent tallies a follower's Fetch and the leader's answer to it.
func (t *tallies) sent(m *Message) {
	var key netsim.Link
	switch {
	case m.Fetch != nil && m.Fetch.ReplicaID >= 0:
		key = netsim.Link{From: m.From, To: m.To}
	case m.FetchResponse != nil && m.To != ClientNode: // the answer to a follower
		key = netsim.Link{From: m.To, To: m.From}
	default:
		return
	}
	f := t.flow(key)
	if m.Fetch != nil {
		f.fetches++
		return
	}
	for i := range m.FetchResponse.Partitions {
		f.records += int64(len(m.FetchResponse.Partitions[i].Records))
	}
}
