package view

import "github.com/highwater-sim/highwater/engine"

// The overview of a large cluster: what a page shows when it cannot draw every partition. Run-wide
// counters (ISR shrinks and expands, leader changes, kept by the engine's tallies), fetch traffic
// between brokers, and the high watermark lag summed over partitions.

// Traffic is the replica fetch traffic between brokers since time 0, in columns (it is sent often
// and the pairs rarely change): pair i is follower From[i] fetching from leader To[i], with
// Fetches[i] Fetch requests sent and Records[i] records returned.
type Traffic struct {
	From    []int32 `json:"from"`
	To      []int32 `json:"to"`
	Fetches []int64 `json:"fetches"`
	Records []int64 `json:"records"`
}

// traffic lays the engine's flows (in broker order) out in columns.
func traffic(flows []engine.Flow) Traffic {
	t := Traffic{From: []int32{}, To: []int32{}, Fetches: []int64{}, Records: []int64{}}
	for _, f := range flows {
		t.From, t.To = append(t.From, f.From), append(t.To, f.To)
		t.Fetches, t.Records = append(t.Fetches, f.Fetches), append(t.Records, f.Records)
	}
	return t
}

// putLeaderDigits writes a partition's leader as two base-36 digits into dst (View.Leaders), "--"
// for none.
func putLeaderDigits(dst []byte, leader int32) {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if leader < 0 || leader >= 36*36 {
		dst[0], dst[1] = '-', '-'
		return
	}
	dst[0], dst[1] = digits[leader/36], digits[leader%36]
}

// hwLag is how far a partition's leader HW trails its log end: records written but not yet
// committed. 0 when the partition has no live leader.
func hwLag(p engine.PartitionInfo) int64 {
	if p.Leader() < 0 {
		return 0
	}
	r, ok := p.ReplicaOn(p.Leader())
	if !ok || r.Down() || r.Offline() || !r.IsLeader() {
		return 0
	}
	return r.LogEndOffset() - r.HighWatermark()
}
