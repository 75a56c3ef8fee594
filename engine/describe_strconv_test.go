package engine

import (
	"fmt"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
	"github.com/highwater-sim/highwater/engine/plural"
)

// TestDescribeStrconvIsFmt: the narration written with strconv (the broker's role changes, high
// watermarks and appends, made from the recorded event: brokerText; NodeName, describeFetch's and describeFetchPart's
// partitions) reads as the fmt formats it replaced, on edge values as well as the presets'
// (TestTraceHashes covers those).
func TestDescribeStrconvIsFmt(t *testing.T) {
	nums := []int64{0, 1, -1, 42, 1<<31 - 1, -1 << 31}
	for _, n := range nums {
		m := int32(n)
		for _, isr := range [][]int32{nil, {}, {m}, {0, m, 2}} {
			ev := Event{Broker: Some(m), Topic: "t<é>", Partition: Some(m), Epoch: Some(n), ISR: isr,
				From: Some(n), To: Some(n + 5), Reason: "leader", arg: [2]int64{n, -n}}
			check := func(got, want string) {
				t.Helper()
				if got != want {
					t.Errorf("got  %q\nwant %q", got, want)
				}
			}
			check(brokerText(brk.BecameLeader, &ev), fmt.Sprintf("broker %d became leader of %s-%d in leader epoch %d (epoch start offset %d, ISR %v)",
				ev.Broker.V, ev.Topic, ev.Partition.V, ev.Epoch.V, ev.arg[0], ev.ISR))
			ev.Reason = "follower"
			check(brokerText(brk.BecameFollower, &ev), fmt.Sprintf("broker %d became follower of %s-%d under leader %d in leader epoch %d",
				ev.Broker.V, ev.Topic, ev.Partition.V, ev.arg[0], ev.arg[1]))
			check(brokerText(brk.LeaderAppend, &ev), fmt.Sprintf("leader %d appended %d records to %s-%d at offsets %d..%d in epoch %d",
				ev.Broker.V, ev.To.V-ev.From.V, ev.Topic, ev.Partition.V, ev.From.V, ev.To.V-1, ev.Epoch.V))
			one := ev
			one.To = Some(n + 1)
			check(brokerText(brk.LeaderAppend, &one), fmt.Sprintf("leader %d appended 1 record to %s-%d at offset %d in epoch %d",
				ev.Broker.V, ev.Topic, ev.Partition.V, ev.From.V, ev.Epoch.V))
			ev.Replicas = isr
			want := fmt.Sprintf("%s-%d on broker %d (%s): high watermark %d → %d", ev.Topic, ev.Partition.V, ev.Broker.V, ev.Reason, ev.From.V, ev.To.V)
			if len(ev.Replicas) == 1 {
				want += fmt.Sprintf(" after follower %d's fetch at offset %d", ev.Replicas[0], ev.arg[0])
			}
			check(brokerText(brk.HighWatermarkMoved, &ev), want)
			if m != ClientNode {
				check(NodeName(m), fmt.Sprintf("broker %d", m))
			}
			tp := TP{Topic: "t", Partition: m}
			check(brk.DescribeFetchPartition(FetchPartitionData{TP: tp, HighWatermark: n, Records: make([]commitlogRecord, len(isr))}),
				fmt.Sprintf("%s-%d %s, HW %d", tp.Topic, tp.Partition, plural.Of(len(isr), "record"), n))
			check(describeFetch(&FetchRequest{ReplicaID: ClientNode, Partitions: []FetchPartition{{TP: tp, FetchOffset: n, LastFetchedEpoch: m}}}),
				"consumer Fetch "+fmt.Sprintf("%s-%d@%d", tp.Topic, tp.Partition, n)+map[bool]string{true: fmt.Sprintf(" (last epoch %d)", m)}[m >= 0])
		}
	}
}
