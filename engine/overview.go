package engine

import (
	"fmt"
	"slices"
)

// The overview of a large cluster: what a page shows when it cannot draw every partition. Run-wide
// counters (ISR shrinks and expands, leader changes), fetch traffic between brokers, and the high
// watermark lag summed over partitions. All of it is plain tallying: no effect on the simulation.

// tallies are run-wide counters kept as the run goes (they survive nothing: a seek rebuilds them).
type tallies struct {
	ignores
	isrShrinks    int64
	isrExpands    int64
	leaderChanges int64
	// flows counts replication traffic per (follower, leader) pair.
	flows map[linkKey]*flow
}

// flow is the replica fetch traffic from one follower broker to one leader broker since time 0:
// Fetch requests sent and records the responses returned.
type flow struct {
	fetches, records int64
}

// Traffic is the replica fetch traffic between brokers since time 0, in columns (it is sent often
// and the pairs rarely change): pair i is follower From[i] fetching from leader To[i], with
// Fetches[i] Fetch requests sent and Records[i] records returned.
type Traffic struct {
	From    []int32 `json:"from"`
	To      []int32 `json:"to"`
	Fetches []int64 `json:"fetches"`
	Records []int64 `json:"records"`
}

// countISRChange tallies a committed ISR change as a shrink, an expand, or both (a replica out
// and another in, as a controller write after a restart can do).
func (t *tallies) isrChanged(p *partition, old []int32) {
	for _, b := range old {
		if !slices.Contains(p.isr, b) {
			t.isrShrinks++
			break
		}
	}
	for _, b := range p.isr {
		if !slices.Contains(old, b) {
			t.isrExpands++
			break
		}
	}
}

func (t *tallies) elected(*partition) { t.leaderChanges++ }

// sent tallies a follower's Fetch and the leader's answer to it.
func (t *tallies) sent(m *Message) {
	var key linkKey
	switch {
	case m.Fetch != nil && m.Fetch.ReplicaID >= 0:
		key = linkKey{m.From, m.To}
	case m.FetchResponse != nil && m.To != ClientNode: // the answer to a follower
		key = linkKey{m.To, m.From}
	default:
		return
	}
	if t.flows == nil {
		t.flows = map[linkKey]*flow{}
	}
	f := t.flows[key]
	if f == nil {
		f = &flow{}
		t.flows[key] = f
	}
	if m.Fetch != nil {
		f.fetches++
		return
	}
	for i := range m.FetchResponse.Partitions {
		f.records += int64(len(m.FetchResponse.Partitions[i].Records))
	}
}

// Traffic returns the replica fetch traffic per (follower, leader) pair, in broker order.
func (e *Engine) Traffic() Traffic {
	t := Traffic{From: []int32{}, To: []int32{}, Fetches: []int64{}, Records: []int64{}}
	for _, k := range sortedLinkKeys(e.tally.flows) {
		f := e.tally.flows[k]
		t.From, t.To = append(t.From, k.from), append(t.To, k.to)
		t.Fetches, t.Records = append(t.Fetches, f.fetches), append(t.Records, f.records)
	}
	return t
}

// leaderDigits encodes each partition's leader as two base-36 digits, "--" for none.
func (e *Engine) leaderDigits() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	out := make([]byte, 0, 2*len(e.partitions))
	for _, p := range e.partitions {
		if p.leader < 0 || p.leader >= 36*36 {
			out = append(out, '-', '-')
			continue
		}
		out = append(out, digits[p.leader/36], digits[p.leader%36])
	}
	return string(out)
}

// hwLag is how far a partition's leader HW trails its log end: records written but not yet
// committed. 0 when the partition has no live leader.
func (e *Engine) hwLag(p *partition) int64 {
	if p.leader < 0 || e.brokers[p.leader].state == brokerDead {
		return 0
	}
	r := p.replicaOn(p.leader)
	if r == nil || r.offline || !r.isLeader() {
		return 0
	}
	return r.log.LogEndOffset() - r.log.HighWatermark()
}

// Detail is what a page looks at closely in an overview: brokers and partitions it drills into.
// Everything about them is sent in full; the rest is counted. Build it with Engine.Detail.
type Detail struct {
	e       *Engine
	brokers []int32
	// pids are the focused partitions, sorted (a view walks partitions in pid order).
	pids []int32
}

// Detail returns the detail a page asks for: focused brokers and partitions (ones the cluster
// does not have are left out; CheckViewOptions names them).
func (e *Engine) Detail(brokers []int32, focus []TP) *Detail {
	d := &Detail{e: e, brokers: brokers}
	for _, tp := range focus {
		if p := e.partitionOf(tp.Topic, tp.Partition); p != nil {
			d.pids = append(d.pids, p.pid)
		}
	}
	slices.Sort(d.pids)
	d.pids = slices.Compact(d.pids)
	return d
}

// Partition reports whether a partition the engine named (in a message) is focused.
func (d *Detail) Partition(tp TP) bool {
	_, ok := slices.BinarySearch(d.pids, d.e.pidOf(tp))
	return ok
}

// Broker reports whether a broker is focused.
func (d *Detail) Broker(b int32) bool { return slices.Contains(d.brokers, b) }

// Message reports whether a message is shown: it goes to or from a focused broker or carries a
// focused partition.
func (d *Detail) Message(m *Message) bool {
	return d.Broker(m.From) || d.Broker(m.To) || (len(d.pids) > 0 && m.Carries(d.Partition))
}

// clusterEvents are shown in an overview whatever it focuses on: they concern the whole cluster
// or are rare and grave (violations).
var clusterEvents = []string{EvViolation, EvBrokerDown, EvBrokerUp, EvController, EvIsolate, EvHeal,
	EvLink, EvConfig, EvZKSession, EvLogDirFailure, EvShutdown, EvZKRegister, EvElectFailed, EvCaption}

// Event reports whether an overview shows an event in full: a cluster-wide one, a message shown
// by Message, or one that happened to a focused partition or (with no partition) on a focused
// broker. Event returns the event to show, its message cut to the focused partitions.
func (d *Detail) Event(ev Event) (Event, bool) {
	switch {
	case slices.Contains(clusterEvents, ev.Type):
		return ev, true
	case ev.Message != nil:
		if !d.Message(ev.Message) {
			return ev, false
		}
		cut := ev.Message.Focused(d.Partition, trimPartitions)
		if cut != ev.Message && ev.Type == cut.Type {
			// The narration names what the page is shown, not the thousand partitions it is not.
			ev.Text = fmt.Sprintf("%s (and %d more partitions)", describeMessage(cut), cut.Omitted)
		}
		ev.Message = cut
		return ev, true
	case ev.Topic != "":
		p := d.e.partitionOf(ev.Topic, ev.Partition.V)
		return ev, p != nil && d.Partition(p.tp())
	case ev.Broker.Set:
		return ev, d.Broker(ev.Broker.V)
	}
	return ev, true
}
