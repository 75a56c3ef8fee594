package view

import "github.com/highwater-sim/highwater/engine/protocol"

// Cutting a message down for a page: one Fetch of a large cluster carries a thousand partitions,
// and a page looking at a few of them is sent those few.

// focused returns the message itself when it has nothing to leave out, else a copy cut for a page
// looking at some partitions: when keep accepts any partition the message carries, the copy keeps
// those (up to max) and drops the others; otherwise (or with keep nil) it keeps the first max.
// Omitted counts what was left out. The message itself is never changed.
func focused(m *protocol.Message, keep func(protocol.TP) bool, max int) *protocol.Message {
	if keep != nil && !carries(m, keep) {
		keep = nil
	}
	c := *m
	l := partitionList(m, &c)
	if l == nil {
		return m
	}
	n, kept := l.cut(keep, max)
	if n == kept {
		return m
	}
	c.Omitted = n - kept
	return &c
}

// carries reports whether the message carries a partition keep accepts.
func carries(m *protocol.Message, keep func(protocol.TP) bool) bool {
	l := partitionList(m, nil)
	return l != nil && l.carries(keep)
}

// TP names a partition: topic and index.
type TP = protocol.TP

// The message bodies with partition lists, and their entries.
type (
	fetchReq  = protocol.FetchRequest
	fetchResp = protocol.FetchResponse
	ofeReq    = protocol.OffsetsForEpochRequest
	ofeResp   = protocol.OffsetsForEpochResponse
	laiReq    = protocol.LeaderAndIsrRequest
	laiResp   = protocol.LeaderAndIsrResponse
	stopReq   = protocol.StopReplicaRequest
	csdResp   = protocol.ControlledShutdownResponse
	fetchPart = protocol.FetchPartition
	fetchData = protocol.FetchPartitionData
	ofePart   = protocol.OffsetsForEpochPartition
	ofeResult = protocol.OffsetsForEpochResult
	laiState  = protocol.LeaderAndIsrState
	partError = protocol.PartitionError
	plainTP   = protocol.TP
	// listReader reads and cuts the partitions of one message.
	listReader interface {
		carries(keep func(TP) bool) bool
		// cut keeps the entries keep accepts (all, without keep), at most max; it returns how
		// many there were and how many it kept.
		cut(keep func(TP) bool, max int) (n, kept int)
	}
)

// partitionList is the partitions a message carries, whatever its type. With c (a shallow copy of
// m) the struct holding the list is copied into c, so cutting the list leaves m as it was; with
// nil the list is m's own, to read.
func partitionList(m *protocol.Message, c *protocol.Message) listReader {
	switch {
	case m.Fetch != nil:
		return listOf(m.Fetch, c, func(b *fetchReq) { c.Fetch = b },
			func(x *fetchReq) *[]fetchPart { return &x.Partitions }, func(x fetchPart) TP { return x.TP })
	case m.FetchResponse != nil:
		return listOf(m.FetchResponse, c, func(b *fetchResp) { c.FetchResponse = b },
			func(x *fetchResp) *[]fetchData { return &x.Partitions }, func(x fetchData) TP { return x.TP })
	case m.OffsetsForEpoch != nil:
		return listOf(m.OffsetsForEpoch, c, func(b *ofeReq) { c.OffsetsForEpoch = b },
			func(x *ofeReq) *[]ofePart { return &x.Partitions }, func(x ofePart) TP { return x.TP })
	case m.OffsetsForEpochResp != nil:
		return listOf(m.OffsetsForEpochResp, c, func(b *ofeResp) { c.OffsetsForEpochResp = b },
			func(x *ofeResp) *[]ofeResult { return &x.Partitions }, func(x ofeResult) TP { return x.TP })
	case m.LeaderAndIsr != nil:
		return listOf(m.LeaderAndIsr, c, func(b *laiReq) { c.LeaderAndIsr = b },
			func(x *laiReq) *[]laiState { return &x.Partitions }, func(x laiState) TP { return x.TP })
	case m.LeaderAndIsrResponse != nil:
		return listOf(m.LeaderAndIsrResponse, c, func(b *laiResp) { c.LeaderAndIsrResponse = b },
			func(x *laiResp) *[]partError { return &x.Partitions }, func(x partError) TP { return x.TP })
	case m.StopReplica != nil:
		return listOf(m.StopReplica, c, func(b *stopReq) { c.StopReplica = b },
			func(x *stopReq) *[]plainTP { return &x.Partitions }, func(x plainTP) TP { return x })
	case m.ControlledShutdownResp != nil:
		return listOf(m.ControlledShutdownResp, c, func(b *csdResp) { c.ControlledShutdownResp = b },
			func(x *csdResp) *[]plainTP { return &x.Remaining }, func(x plainTP) TP { return x })
	case m.ListOffsets != nil:
		return oneTP(m.ListOffsets.TP)
	case m.ListOffsetsResponse != nil:
		return oneTP(m.ListOffsetsResponse.TP)
	case m.AlterPartition != nil:
		return oneTP(m.AlterPartition.TP)
	case m.AlterPartitionResponse != nil:
		return oneTP(m.AlterPartitionResponse.TP)
	case m.Produce != nil:
		return oneTP(m.Produce.TP)
	case m.ProduceResponse != nil:
		return oneTP(m.ProduceResponse.TP)
	}
	return nil
}

// listOf is the list get finds in body, m's; with c it is the list of a copy of body, which put
// stores in c. tp names an entry's partition.
func listOf[B, T any](body *B, c *protocol.Message, put func(*B), get func(*B) *[]T, tp func(T) TP) listReader {
	if c != nil {
		cp := *body
		put(&cp)
		body = &cp
	}
	return entries[T]{get(body), tp}
}

// entries is a list of partition entries of one type.
type entries[T any] struct {
	s  *[]T
	tp func(T) TP
}

func (l entries[T]) carries(keep func(TP) bool) bool {
	for _, x := range *l.s {
		if keep(l.tp(x)) {
			return true
		}
	}
	return false
}

// cut sets the list to the entries keep accepts (all, without keep) and then to at most max. It
// copies only when it drops entries in between.
func (l entries[T]) cut(keep func(TP) bool, max int) (n, kept int) {
	s := *l.s
	if keep == nil {
		if len(s) <= max {
			return len(s), len(s)
		}
		*l.s = s[:max:max]
		return len(s), max
	}
	var out []T
	for _, x := range s {
		if len(out) < max && keep(l.tp(x)) {
			out = append(out, x)
		}
	}
	*l.s = out
	return len(s), len(out)
}

// oneTP is a message about one partition: nothing to cut.
type oneTP TP

func (t oneTP) carries(keep func(TP) bool) bool    { return keep(TP(t)) }
func (oneTP) cut(func(TP) bool, int) (n, kept int) { return 1, 1 }
