package view

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/plural"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Detail is what a page looks at closely in an overview: brokers and partitions it drills into.
// Everything about them is sent in full; the rest is counted. Build it with NewDetail.
type Detail struct {
	e       *engine.Engine
	brokers []int32
	// pids are the focused partitions, sorted (a view walks partitions in id order).
	pids []int32
	// hosts are the brokers the focused partitions are assigned to, sorted.
	hosts []int32
}

// NewDetail returns the detail a page asks for: focused brokers and partitions (ones the cluster
// does not have are left out; Check names them).
func NewDetail(e *engine.Engine, brokers []int32, focus []TP) *Detail {
	d := &Detail{e: e, brokers: brokers}
	for _, tp := range focus {
		if pid, ok := e.PartitionID(tp); ok {
			d.pids = append(d.pids, pid)
		}
	}
	slices.Sort(d.pids)
	d.pids = slices.Compact(d.pids)
	for _, pid := range d.pids {
		d.hosts = append(d.hosts, e.Partition(pid).Assignment()...)
	}
	slices.Sort(d.hosts)
	d.hosts = slices.Compact(d.hosts)
	return d
}

// Partition reports whether a partition the engine named (in a message) is focused.
func (d *Detail) Partition(tp TP) bool {
	pid, ok := d.e.PartitionID(tp)
	if !ok {
		pid = -1
	}
	_, ok = slices.BinarySearch(d.pids, pid)
	return ok
}

// Broker reports whether a broker is focused.
func (d *Detail) Broker(b int32) bool { return slices.Contains(d.brokers, b) }

// Message reports whether a message is shown: it goes to or from a focused broker or carries a
// focused partition.
func (d *Detail) Message(m *protocol.Message) bool {
	switch {
	case d.Broker(m.From) || d.Broker(m.To):
		return true
	case len(d.pids) == 0:
		return false
	case betweenHosts(m.Type) && !d.host(m.From) && !d.host(m.To):
		// Not reading its partition list: at a million partitions there are a million Fetches
		// parked, and reading them all cost 80 ms a view.
		return false
	}
	return carries(m, d.Partition)
}

// betweenHosts reports whether a message of this type is sent to or by a host of every partition
// it carries: a replica's or a consumer's Fetch goes to the leader, OffsetsForLeaderEpoch too,
// and the answers come back from it (assignments do not change). Other messages are read in full:
// they are few.
func betweenHosts(typ string) bool {
	switch typ {
	case engine.MsgFetch, engine.MsgFetchResponse, engine.MsgOffsetsForEpoch, engine.MsgOffsetsForEpochResponse:
		return true
	}
	return false
}

func (d *Detail) host(b int32) bool {
	_, ok := slices.BinarySearch(d.hosts, b)
	return ok
}

// clusterEvents are shown in an overview whatever it focuses on: they concern the whole cluster
// or are rare and grave (violations).
var clusterEvents = []string{engine.EvViolation, engine.EvBrokerDown, engine.EvBrokerUp, engine.EvController,
	engine.EvIsolate, engine.EvHeal, engine.EvLink, engine.EvConfig, engine.EvZKSession, engine.EvLogDirFailure,
	engine.EvShutdown, engine.EvZKRegister, engine.EvElectFailed, engine.EvCaption}

// Event reports whether an overview shows an event in full: a cluster-wide one, a message shown
// by Message, or one that happened to a focused partition or (with no partition) on a focused
// broker. Event returns the event to show, its message cut to the focused partitions.
func (d *Detail) Event(ev engine.Event) (engine.Event, bool) {
	if !d.Shows(&ev) {
		return ev, false
	}
	if ev.Message != nil && !slices.Contains(clusterEvents, ev.Type) {
		cut := focused(ev.Message, d.Partition, trimPartitions)
		if cut != ev.Message && ev.Type == cut.Type {
			// The narration names what the page is shown, not the thousand partitions it is not.
			ev.Text = fmt.Sprintf("%s (and %d more %s)", engine.DescribeMessage(cut), cut.Omitted, plural.Pick(cut.Omitted, "partition", "partitions"))
		}
		ev.Message = cut
	}
	return ev, true
}

// Shows reports whether an overview shows an event in full (Event without the cut).
func (d *Detail) Shows(ev *engine.Event) bool {
	switch {
	case slices.Contains(clusterEvents, ev.Type):
		return true
	case ev.Message != nil:
		return d.Message(ev.Message)
	case ev.Topic != "":
		pid, ok := d.e.PartitionID(TP{Topic: ev.Topic, Partition: ev.Partition.V})
		_, focused := slices.BinarySearch(d.pids, pid)
		return ok && focused
	case ev.Broker.Set:
		return d.Broker(ev.Broker.V)
	}
	return true
}
