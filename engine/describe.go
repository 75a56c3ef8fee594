package engine

import (
	"fmt"
	"strconv"
	"strings"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/plural"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// DescribeMessage is the one stable text of a message, used by the trace, tests and narration
// (the text of its event).
func DescribeMessage(m *Message) string {
	head := NodeName(m.From) + " → " + NodeName(m.To) + ": "
	switch {
	case m.Fetch != nil:
		return head + describeFetch(m.Fetch)
	case m.FetchResponse != nil:
		return head + describeFetchResponse(m.FetchResponse)
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
			parts = append(parts, fmt.Sprintf("%s-%d leader %s epoch %d ISR %v", p.Topic, p.Partition, protocol.LeaderName(p.Leader), p.LeaderEpoch, p.ISR))
		}
		return head + fmt.Sprintf("LeaderAndIsr (controller epoch %d) ", l.ControllerEpoch) + strings.Join(parts, "; ")
	case m.LeaderAndIsrResponse != nil:
		r := m.LeaderAndIsrResponse
		if r.Error != ErrNone {
			return head + "LeaderAndIsr answer " + r.Error.String()
		}
		return head + "LeaderAndIsr answer"
	case m.StopReplica != nil:
		return head + "StopReplica " + plural.Of(len(m.StopReplica.Partitions), "partition")
	case m.StopReplicaResponse != nil:
		r := m.StopReplicaResponse
		if r.Error != ErrNone {
			return head + "StopReplica answer " + r.Error.String()
		}
		var failed []string
		for _, pe := range r.Partitions {
			if pe.Error != ErrNone {
				failed = append(failed, fmt.Sprintf("%s-%d %s", pe.Topic, pe.Partition, pe.Error))
			}
		}
		if len(failed) > 0 {
			return head + "StopReplica answer: " + strings.Join(failed, "; ")
		}
		return head + "StopReplica answer"
	case m.UpdateMetadata != nil:
		u := m.UpdateMetadata
		return head + fmt.Sprintf("UpdateMetadata (controller epoch %d): %s, live brokers %v", u.ControllerEpoch,
			plural.Of(u.Partitions, "partition state"), u.LiveBrokers)
	case m.UpdateMetadataResponse != nil:
		if e := m.UpdateMetadataResponse.Error; e != ErrNone {
			return head + "UpdateMetadata answer " + e.String()
		}
		return head + "UpdateMetadata answer"
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
		return head + "ControlledShutdown answer, " + plural.Of(len(m.ControlledShutdownResp.Remaining), "partition") + " still led"
	case m.Produce != nil:
		p := m.Produce
		return head + fmt.Sprintf("Produce %s to %s-%d (acks=%s)", plural.Of(len(p.RecordIDs), "record"), p.TP.Topic, p.TP.Partition, acksName(p.Acks))
	case m.ProduceResponse != nil:
		p := m.ProduceResponse
		if p.Error != ErrNone {
			return head + "Produce answer " + p.Error.String()
		}
		return head + fmt.Sprintf("Produce answer: base offset %d", p.BaseOffset)
	}
	return head + m.Type
}

// describeFetch names a Fetch's session and lists the partitions it carries: all of them in a full
// Fetch, the added and changed ones in an incremental one.
func describeFetch(f *FetchRequest) string {
	parts := make([]string, len(f.Partitions))
	for i, p := range f.Partitions {
		// strconv rather than fmt: a full Fetch of a large cluster lists thousands.
		s := p.Topic + "-" + strconv.Itoa(int(p.Partition)) + "@" + strconv.FormatInt(p.FetchOffset, 10)
		if p.LastFetchedEpoch >= 0 {
			s += " (last epoch " + strconv.Itoa(int(p.LastFetchedEpoch)) + ")"
		}
		parts[i] = s
	}
	list := strings.Join(parts, ", ")
	switch {
	case f.ReplicaID == ClientNode:
		return "consumer Fetch " + list
	case f.SessionEpoch == FinalEpoch && f.SessionID == InvalidSessionID:
		return "Fetch " + list // no session: before Kafka 1.1
	case f.SessionEpoch == FinalEpoch:
		return fmt.Sprintf("Fetch (full, closes session %d): %s", f.SessionID, list)
	case f.SessionEpoch == InitialEpoch && f.SessionID == InvalidSessionID:
		return "Fetch (full, new session): " + list
	case f.SessionEpoch == InitialEpoch:
		return fmt.Sprintf("Fetch (full, replaces session %d): %s", f.SessionID, list)
	}
	text := fmt.Sprintf("Fetch (session %d, epoch %d): ", f.SessionID, f.SessionEpoch)
	if len(parts) == 0 && len(f.ForgottenTopicsData) == 0 {
		return text + "nothing changed"
	}
	text += list
	if n := len(f.ForgottenTopicsData); n > 0 {
		gone := make([]string, n)
		for i, tp := range f.ForgottenTopicsData {
			gone[i] = fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
		}
		if list != "" {
			text += "; "
		}
		text += "forgets " + strings.Join(gone, ", ")
	}
	return text
}

// describeFetchResponse names an answer's session (if any) and its partitions.
func describeFetchResponse(r *FetchResponse) string {
	if r.Error != ErrNone {
		return fmt.Sprintf("Fetch response %s: the next Fetch is full", r.Error)
	}
	parts := make([]string, len(r.Partitions))
	for i, d := range r.Partitions {
		parts[i] = brk.DescribeFetchPartition(d)
	}
	list := strings.Join(parts, ", ")
	switch {
	case r.SessionID != InvalidSessionID && len(parts) == 0:
		return fmt.Sprintf("Fetch response (session %d): nothing new", r.SessionID)
	case r.SessionID != InvalidSessionID:
		return fmt.Sprintf("Fetch response (session %d): %s", r.SessionID, list)
	case len(parts) == 0:
		return "Fetch response (no session): no partitions" // the session's last partition left it
	}
	return "Fetch response " + list
}
