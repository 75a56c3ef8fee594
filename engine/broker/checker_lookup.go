package broker

// The invariant checker reads every replica of a partition at each of its HW moves (some 40,000
// a simulated second at 100,000 partitions): the hosts come from the index's one line, not from
// a lookup per host (Broker.Replica scans the same window for each), so a partition's replicas
// cost one read of the index and one of each replica.

// HostSlot is a host of a partition as the index has it: its broker, and its replica's slot
// among that broker's replicas (Broker.ReplicaAt).
type HostSlot = hostSlot

func (h hostSlot) Broker() int32 { return h.broker }
func (h hostSlot) Slot() int     { return int(h.slot) }

// HostsOf are partition pid's hosts, in assignment order (shared: do not change).
func (x *HostIndex) HostsOf(pid int32) []HostSlot {
	if rf := int(x.rf); rf > 0 {
		lo := int(pid) * rf
		return x.at[lo : lo+rf : lo+rf]
	}
	lo, hi := x.start[pid], x.start[pid+1]
	return x.at[lo:hi:hi]
}
