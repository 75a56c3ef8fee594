package engine

import "strconv"

// The leader's side of Produce (ReplicaManager.appendRecords, Partition.appendRecordsToLeader) and
// the produce purgatory's completions are package broker's (produce.go), which brk.Broker.Handle
// hands its requests and brk.Broker.DelayedProduceExpired its timeouts (kafka_apis.go); what an
// append tells the rest of the broker is brk.Broker.Appended's. Here: its event's text.

// describeAppend is an append event's text (made when read: Narrate).
// It appends with strconv rather than fmt: a large traced run narrates hundreds of thousands.
func describeAppend(ev *Event) string {
	b := make([]byte, 0, 96)
	b = append(b, "leader "...)
	b = strconv.AppendInt(b, int64(ev.Broker.V), 10)
	b = append(b, " appended "...)
	b = strconv.AppendInt(b, ev.To.V-ev.From.V, 10)
	b = append(b, " records to "...)
	b = append(b, ev.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(ev.Partition.V), 10)
	b = append(b, " at offsets "...)
	b = strconv.AppendInt(b, ev.From.V, 10)
	b = append(b, ".."...)
	b = strconv.AppendInt(b, ev.To.V-1, 10)
	b = append(b, " in epoch "...)
	b = strconv.AppendInt(b, ev.Epoch.V, 10)
	return string(b)
}
