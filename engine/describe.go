package engine

import (
	"fmt"
	"strings"
)

// DescribeMessage is the one stable text of a message, used by the trace, tests and narration
// (the text of its event).
func DescribeMessage(m *Message) string {
	head := fmt.Sprintf("%s → %s: ", NodeName(m.From), NodeName(m.To))
	switch {
	case m.Fetch != nil:
		f := m.Fetch
		parts := make([]string, len(f.Partitions))
		for i, p := range f.Partitions {
			parts[i] = fmt.Sprintf("%s-%d@%d", p.Topic, p.Partition, p.FetchOffset)
			if p.LastFetchedEpoch >= 0 {
				parts[i] += fmt.Sprintf(" (last epoch %d)", p.LastFetchedEpoch)
			}
		}
		who := "Fetch"
		if f.ReplicaID == ClientNode {
			who = "consumer Fetch"
		}
		return head + who + " " + strings.Join(parts, ", ")
	case m.FetchResponse != nil:
		parts := make([]string, len(m.FetchResponse.Partitions))
		for i, d := range m.FetchResponse.Partitions {
			parts[i] = describeFetchPart(d)
		}
		return head + "Fetch response " + strings.Join(parts, ", ")
	case m.OffsetsForEpoch != nil:
		parts := make([]string, len(m.OffsetsForEpoch.Partitions))
		for i, p := range m.OffsetsForEpoch.Partitions {
			parts[i] = fmt.Sprintf("%s-%d epoch %d", p.Topic, p.Partition, p.LeaderEpoch)
		}
		return head + "OffsetsForLeaderEpoch " + strings.Join(parts, ", ")
	case m.OffsetsForEpochResp != nil:
		parts := make([]string, len(m.OffsetsForEpochResp.Partitions))
		for i, p := range m.OffsetsForEpochResp.Partitions {
			if p.Error != ErrNone {
				parts[i] = fmt.Sprintf("%s-%d %s", p.Topic, p.Partition, p.Error)
			} else {
				parts[i] = fmt.Sprintf("%s-%d (epoch %d, end offset %d)", p.Topic, p.Partition, p.LeaderEpoch, p.EndOffset)
			}
		}
		return head + "OffsetsForLeaderEpoch answer " + strings.Join(parts, ", ")
	case m.ListOffsets != nil:
		return head + fmt.Sprintf("ListOffsets %s-%d", m.ListOffsets.TP.Topic, m.ListOffsets.TP.Partition)
	case m.ListOffsetsResponse != nil:
		r := m.ListOffsetsResponse
		if r.Error != ErrNone {
			return head + "ListOffsets answer " + r.Error.String()
		}
		return head + fmt.Sprintf("ListOffsets answer: log %d..%d", r.LogStartOffset, r.LogEndOffset)
	case m.LeaderAndIsr != nil:
		l := m.LeaderAndIsr
		parts := make([]string, 0, min(len(l.Partitions), 4))
		for i, p := range l.Partitions {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(l.Partitions)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s-%d leader %s epoch %d ISR %v", p.Topic, p.Partition, leaderName(p.Leader), p.LeaderEpoch, p.ISR))
		}
		return head + fmt.Sprintf("LeaderAndIsr (controller epoch %d) ", l.ControllerEpoch) + strings.Join(parts, "; ")
	case m.LeaderAndIsrResponse != nil:
		r := m.LeaderAndIsrResponse
		if r.Error != ErrNone {
			return head + "LeaderAndIsr answer " + r.Error.String()
		}
		return head + "LeaderAndIsr answer"
	case m.StopReplica != nil:
		return head + fmt.Sprintf("StopReplica %d partitions", len(m.StopReplica.Partitions))
	case m.AlterPartition != nil:
		a := m.AlterPartition
		return head + fmt.Sprintf("AlterPartition %s-%d ISR %v (leader epoch %d, partition epoch %d)", a.TP.Topic, a.TP.Partition, a.NewISR, a.LeaderEpoch, a.PartitionEpoch)
	case m.AlterPartitionResponse != nil:
		a := m.AlterPartitionResponse
		if a.Error != ErrNone {
			return head + "AlterPartition answer " + a.Error.String()
		}
		return head + fmt.Sprintf("AlterPartition answer: ISR %v, partition epoch %d", a.ISR, a.PartitionEpoch)
	case m.ControlledShutdown != nil:
		return head + "ControlledShutdown"
	case m.ControlledShutdownResp != nil:
		return head + fmt.Sprintf("ControlledShutdown answer, %d partitions still led", len(m.ControlledShutdownResp.Remaining))
	case m.Produce != nil:
		p := m.Produce
		return head + fmt.Sprintf("Produce %d records to %s-%d (acks=%s)", len(p.RecordIDs), p.TP.Topic, p.TP.Partition, acksName(p.Acks))
	case m.ProduceResponse != nil:
		p := m.ProduceResponse
		if p.Error != ErrNone {
			return head + "Produce answer " + p.Error.String()
		}
		return head + fmt.Sprintf("Produce answer: base offset %d", p.BaseOffset)
	}
	return head + m.Type
}
