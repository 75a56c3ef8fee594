package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/highwater-sim/highwater/engine"
)

// Durability verdicts: for each record a producer was told is written (acks=1 or all), whether it
// is safe now. The page labels records m<ID> and marks each with its verdict, so a viewer can
// follow one record through a failure and see the moment it becomes at risk, or is lost.
//
//   - committed: the live leader (per the controller) holds it below its high watermark;
//   - at-risk: acknowledged but not yet safe: above the leader's high watermark (an acks=1
//     record only the leader holds), or the leader holding it is down, or the partition has no
//     leader while a replica still holds it;
//   - lost: the leader's log no longer has it at its offset, or no replica holds it at all.
//
// This is what Kafka promises producers, seen from outside: a committed record can still be lost
// by the rules of an old protocol era or an unclean election, and the verdict then turns to lost.

// Verdict is one acknowledged record's verdict.
type Verdict struct {
	ID      int64  `json:"id"`
	Offset  int64  `json:"offset"`
	Acks    string `json:"acks"` // "all" or "1"
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// Verdict values.
const (
	VerdictCommitted = "committed"
	VerdictAtRisk    = "at-risk"
	VerdictLost      = "lost"
)

// maxVerdicts bounds the records a partition's view judges: the latest acknowledged ones.
const maxVerdicts = 200

// maxVerdictPartitions bounds the partitions a view judges: a view listing more (a page drawing
// every partition of a large cluster) leaves verdicts out, since 200 verdicts per partition would
// multiply its size. The default detail limit, so a page gets them in detail and when it focuses.
const maxVerdictPartitions = defaultDetailLimit

// verdicts judges p's latest acknowledged records, in offset order.
func verdicts(p engine.PartitionInfo) []Verdict {
	type acked struct {
		engine.AckedRecord
		acks string
	}
	var recs []acked
	for _, r := range p.AckedAll(maxVerdicts) {
		recs = append(recs, acked{r, "all"})
	}
	for _, r := range p.AckedOne(maxVerdicts) {
		recs = append(recs, acked{r, "1"})
	}
	slices.SortFunc(recs, func(a, b acked) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.ID, b.ID))
	})
	recs = recs[max(0, len(recs)-maxVerdicts):]
	out := make([]Verdict, 0, len(recs))
	for _, r := range recs {
		verdict, why := judge(p, r.AckedRecord, r.acks)
		out = append(out, Verdict{ID: r.ID, Offset: r.Offset, Acks: r.acks, Verdict: verdict, Why: why})
	}
	return out
}

// judge gives one acknowledged record's verdict and a short reason.
func judge(p engine.PartitionInfo, rec engine.AckedRecord, acks string) (string, string) {
	var live, down []int32 // brokers whose replica holds the record at its offset
	for _, r := range p.Replicas() {
		if got, ok := r.RecordAt(rec.Offset); ok && got.ID == rec.ID {
			if r.Down() || r.Offline() {
				down = append(down, r.Broker())
			} else {
				live = append(live, r.Broker())
			}
		}
	}
	slices.Sort(live)
	slices.Sort(down)
	leader := p.Leader()
	if leader < 0 {
		if len(live)+len(down) == 0 {
			return VerdictLost, "no replica holds it"
		}
		held := append(slices.Clone(live), down...)
		slices.Sort(held)
		return VerdictAtRisk, "no leader; held by " + brokerList(slices.Compact(held))
	}
	lr, _ := p.ReplicaOn(leader)
	if got, ok := lr.RecordAt(rec.Offset); !ok || got.ID != rec.ID {
		switch {
		case ok:
			return VerdictLost, fmt.Sprintf("not in leader %d's log: offset %d holds m%d", leader, rec.Offset, got.ID)
		case rec.Offset >= lr.LogEndOffset():
			return VerdictLost, fmt.Sprintf("not in leader %d's log, which ends at offset %d", leader, lr.LogEndOffset())
		}
		return VerdictLost, fmt.Sprintf("not in leader %d's log, which starts at offset %d", leader, lr.LogStartOffset())
	}
	if lr.Down() || lr.Offline() {
		if len(live) == 0 {
			return VerdictAtRisk, "held only by replicas that are down: " + brokerList(down)
		}
		return VerdictAtRisk, fmt.Sprintf("leader %d is down; live copies on %s", leader, brokerList(live))
	}
	hw := lr.HighWatermark()
	if rec.Offset >= hw {
		if len(live) == 1 {
			return VerdictAtRisk, fmt.Sprintf("acks=%s: only leader %d has it (above its high watermark %d)", acks, leader, hw)
		}
		return VerdictAtRisk, fmt.Sprintf("above leader %d's high watermark %d; on %s", leader, hw, brokerList(live))
	}
	return VerdictCommitted, fmt.Sprintf("below leader %d's high watermark %d; on %s", leader, hw, brokerList(live))
}

// brokerList names brokers for a reason: "broker 1", "brokers 0, 2".
func brokerList(ids []int32) string {
	if len(ids) == 1 {
		return fmt.Sprintf("broker %d", ids[0])
	}
	s := make([]string, len(ids))
	for i, b := range ids {
		s[i] = fmt.Sprint(b)
	}
	return "brokers " + strings.Join(s, ", ")
}
