// Package protocol holds the requests and responses of the engine's Kafka as plain data, with
// Kafka's error codes. It imports nothing of the nodes, so a message cannot point into a node's
// state: what a broker knows of another, it learns from a message.
package protocol

import "github.com/highwater-sim/highwater/engine/commitlog"

// Message is one request or response on the simulated network. Messages are immutable once sent:
// events and the view share them.
//
// Node ids: brokers are 0..n-1; ClientNode stands for the producers and consumers, which sit
// outside the brokers' network (isolating a broker does not cut its clients).
type Message struct {
	ID      uint64 `json:"id"`
	Type    string `json:"type"`
	From    int32  `json:"from"`
	To      int32  `json:"to"`
	Sent    int64  `json:"sent"`
	Deliver int64  `json:"deliver"`
	// ReplyTo is the id of the request a response answers (Kafka's correlation id): the
	// requester finds its request among those it has in flight.
	ReplyTo uint64 `json:"replyTo,omitempty"`
	// Omitted counts partitions left out of a cut copy (see Focused); 0 on the wire.
	Omitted int `json:"omitted,omitempty"`

	Fetch                  *FetchRequest               `json:"fetch,omitempty"`
	FetchResponse          *FetchResponse              `json:"fetchResponse,omitempty"`
	OffsetsForEpoch        *OffsetsForEpochRequest     `json:"offsetsForLeaderEpoch,omitempty"`
	OffsetsForEpochResp    *OffsetsForEpochResponse    `json:"offsetsForLeaderEpochResponse,omitempty"`
	ListOffsets            *ListOffsetsRequest         `json:"listOffsets,omitempty"`
	ListOffsetsResponse    *ListOffsetsResponse        `json:"listOffsetsResponse,omitempty"`
	LeaderAndIsr           *LeaderAndIsrRequest        `json:"leaderAndIsr,omitempty"`
	LeaderAndIsrResponse   *LeaderAndIsrResponse       `json:"leaderAndIsrResponse,omitempty"`
	StopReplica            *StopReplicaRequest         `json:"stopReplica,omitempty"`
	AlterPartition         *AlterPartitionRequest      `json:"alterPartition,omitempty"`
	AlterPartitionResponse *AlterPartitionResponse     `json:"alterPartitionResponse,omitempty"`
	ControlledShutdown     *ControlledShutdownRequest  `json:"controlledShutdown,omitempty"`
	ControlledShutdownResp *ControlledShutdownResponse `json:"controlledShutdownResponse,omitempty"`
	Produce                *ProduceRequest             `json:"produce,omitempty"`
	ProduceResponse        *ProduceResponse            `json:"produceResponse,omitempty"`
}

// ClientNode is the node id of producers and consumers.
const ClientNode int32 = -1

// Message types; each is also the trace event type of its send.
const (
	MsgFetch                   = "fetch"
	MsgFetchResponse           = "fetch-response"
	MsgOffsetsForEpoch         = "offsets-for-leader-epoch"
	MsgOffsetsForEpochResponse = "offsets-for-leader-epoch-response"
	MsgListOffsets             = "list-offsets"
	MsgListOffsetsResponse     = "list-offsets-response"
	MsgLeaderAndIsr            = "leader-and-isr"
	MsgLeaderAndIsrResponse    = "leader-and-isr-response"
	MsgStopReplica             = "stop-replica"
	MsgAlterPartition          = "alter-partition"
	MsgAlterPartitionResponse  = "alter-partition-response"
	MsgControlledShutdown      = "controlled-shutdown"
	MsgControlledShutdownResp  = "controlled-shutdown-response"
	MsgProduce                 = "produce"
	MsgProduceResponse         = "produce-response"
)

// TP names a partition in messages. A receiver finds its own state for it by name.
type TP struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// FetchRequest is Kafka's Fetch from a follower (ReplicaID ≥ 0) or a consumer (ReplicaID -1).
type FetchRequest struct {
	ReplicaID   int32            `json:"replicaId"`
	BrokerEpoch int64            `json:"brokerEpoch"`
	MaxWaitMs   int64            `json:"maxWaitMs"`
	MinBytes    int64            `json:"minBytes"`
	FetcherID   int32            `json:"fetcherId"`
	Partitions  []FetchPartition `json:"partitions"`
}

// FetchPartition is one partition of a Fetch. -1 epochs mean "not sent" (older eras).
type FetchPartition struct {
	TP
	FetchOffset        int64 `json:"fetchOffset"`
	LogStartOffset     int64 `json:"logStartOffset"`
	CurrentLeaderEpoch int32 `json:"currentLeaderEpoch"`
	LastFetchedEpoch   int32 `json:"lastFetchedEpoch"`
	// SessionFull asks for this partition's answer even if nothing changed: the first fetch of
	// the partition in a fetch session, or the first after a failed fetch.
	SessionFull bool `json:"sessionFull,omitempty"`
	// SessionHighWatermark is the follower's HW when it sent this. Kafka's leader remembers in
	// its FetchSession what it last told each partition; here the follower's fetch says what it
	// knows, and the leader leaves the partition out of its answer when nothing differs (see
	// "Fetch sessions" in docs/engine.md). Unused in a consumer's fetch.
	SessionHighWatermark int64 `json:"sessionHighWatermark"`
	// MaxRecords bounds a consumer's read (the `count` of a consume step); 0 = no bound.
	MaxRecords int64 `json:"maxRecords,omitempty"`
}

// FetchResponse answers a Fetch.
type FetchResponse struct {
	Error      KafkaError           `json:"error,omitempty"`
	Partitions []FetchPartitionData `json:"partitions"`
}

// EpochEndOffset is an (epoch, end offset) pair: an OffsetsForLeaderEpoch answer or a divergingEpoch.
type EpochEndOffset struct {
	Epoch     int32 `json:"epoch"`
	EndOffset int64 `json:"endOffset"`
}

// FetchPartitionData is one partition of a Fetch response. HighWatermark is the leader's HW as it
// was before this fetch counted (so a follower learns of a commit one round late).
type FetchPartitionData struct {
	TP
	Error          KafkaError         `json:"error,omitempty"`
	HighWatermark  int64              `json:"highWatermark"`
	LogStartOffset int64              `json:"logStartOffset"`
	LogEndOffset   int64              `json:"logEndOffset"`
	DivergingEpoch *EpochEndOffset    `json:"divergingEpoch,omitempty"`
	Records        []commitlog.Record `json:"records,omitempty"`
}

// OffsetsForEpochRequest is OffsetsForLeaderEpoch from a follower in the truncation phase.
type OffsetsForEpochRequest struct {
	ReplicaID  int32                      `json:"replicaId"`
	Partitions []OffsetsForEpochPartition `json:"partitions"`
}

// OffsetsForEpochPartition asks for the end offset of LeaderEpoch.
type OffsetsForEpochPartition struct {
	TP
	CurrentLeaderEpoch int32 `json:"currentLeaderEpoch"`
	LeaderEpoch        int32 `json:"leaderEpoch"`
}

// OffsetsForEpochResponse answers with (epoch, end offset) per partition; before KIP-279 the
// epoch is -1 (offset only).
type OffsetsForEpochResponse struct {
	Partitions []OffsetsForEpochResult `json:"partitions"`
}

// OffsetsForEpochResult is one partition's answer.
type OffsetsForEpochResult struct {
	TP
	Error       KafkaError `json:"error,omitempty"`
	LeaderEpoch int32      `json:"leaderEpoch"`
	EndOffset   int64      `json:"endOffset"`
}

// ListOffsetsRequest asks a leader for its latest and earliest offsets (a follower handling
// OFFSET_OUT_OF_RANGE). Simplification: Kafka sends two requests (latest, then earliest); one
// answer carries both.
type ListOffsetsRequest struct {
	ReplicaID          int32 `json:"replicaId"`
	TP                 TP    `json:"tp"`
	CurrentLeaderEpoch int32 `json:"currentLeaderEpoch"`
}

// ListOffsetsResponse is the answer.
type ListOffsetsResponse struct {
	TP             TP         `json:"tp"`
	Error          KafkaError `json:"error,omitempty"`
	LogEndOffset   int64      `json:"logEndOffset"`
	LogStartOffset int64      `json:"logStartOffset"`
}

// LeaderAndIsrRequest is the controller's instruction to a broker (ZooKeeper mode).
type LeaderAndIsrRequest struct {
	ControllerID    int32               `json:"controllerId"`
	ControllerEpoch int32               `json:"controllerEpoch"`
	BrokerEpoch     int64               `json:"brokerEpoch"`
	Partitions      []LeaderAndIsrState `json:"partitions"`
	LiveLeaders     []int32             `json:"liveLeaders"`
}

// LeaderAndIsrState is one partition's state in a LeaderAndIsr request.
type LeaderAndIsrState struct {
	TP
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	ISR            []int32 `json:"isr"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	Replicas       []int32 `json:"replicas"`
}

// LeaderAndIsrResponse carries an error per partition.
type LeaderAndIsrResponse struct {
	Error      KafkaError       `json:"error,omitempty"`
	Partitions []PartitionError `json:"partitions,omitempty"`
}

// PartitionError is a per-partition result.
type PartitionError struct {
	TP
	Error KafkaError `json:"error,omitempty"`
}

// StopReplicaRequest tells a broker to stop fetching partitions (controlled shutdown).
type StopReplicaRequest struct {
	ControllerID    int32 `json:"controllerId"`
	ControllerEpoch int32 `json:"controllerEpoch"`
	BrokerEpoch     int64 `json:"brokerEpoch"`
	Partitions      []TP  `json:"partitions"`
}

// AlterPartitionRequest is a leader's ISR change proposal (one partition per request here).
type AlterPartitionRequest struct {
	BrokerID       int32   `json:"brokerId"`
	BrokerEpoch    int64   `json:"brokerEpoch"`
	TP             TP      `json:"tp"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	NewISR         []int32 `json:"newIsr"`
}

// AlterPartitionResponse is the controller's answer: the committed state, or an error.
type AlterPartitionResponse struct {
	TP             TP         `json:"tp"`
	Error          KafkaError `json:"error,omitempty"`
	Leader         int32      `json:"leader"`
	LeaderEpoch    int32      `json:"leaderEpoch"`
	ISR            []int32    `json:"isr"`
	PartitionEpoch int32      `json:"partitionEpoch"`
}

// ControlledShutdownRequest asks the controller to move leadership away first.
type ControlledShutdownRequest struct {
	BrokerID    int32 `json:"brokerId"`
	BrokerEpoch int64 `json:"brokerEpoch"`
}

// ControlledShutdownResponse lists the partitions the broker still leads.
type ControlledShutdownResponse struct {
	Error     KafkaError `json:"error,omitempty"`
	Remaining []TP       `json:"remaining"`
}

// ProduceRequest is one producer batch.
type ProduceRequest struct {
	Op        int64   `json:"op"`
	TP        TP      `json:"tp"`
	Acks      Acks    `json:"acks"`
	RecordIDs []int64 `json:"recordIds"`
	TimeoutMs int64   `json:"timeoutMs"`
}

// ProduceResponse answers a produce with acks 1 or all.
type ProduceResponse struct {
	Op         int64      `json:"op"`
	TP         TP         `json:"tp"`
	Error      KafkaError `json:"error,omitempty"`
	BaseOffset int64      `json:"baseOffset"`
}

// Focused returns the message itself when it has nothing to leave out, else a copy cut for a page
// looking at some partitions, so one Fetch does not carry a thousand partitions to the page: when
// keep accepts any partition the message carries, the copy keeps those (up to max) and drops the
// others; otherwise (or with keep nil) it keeps the first max. Omitted counts what was left out.
func (m *Message) Focused(keep func(TP) bool, max int) *Message {
	if keep != nil && !m.Carries(keep) {
		keep = nil
	}
	c := *m
	l := m.partitionList(&c)
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

// Carries reports whether the message carries a partition keep accepts.
func (m *Message) Carries(keep func(TP) bool) bool {
	l := m.partitionList(nil)
	return l != nil && l.carries(keep)
}

// partitionList is the partitions a message carries, whatever its type. With c (a shallow copy of
// m) the struct holding the list is copied into c, so cutting the list leaves m as it was; with
// nil the list is m's own, to read.
func (m *Message) partitionList(c *Message) partitionList {
	switch {
	case m.Fetch != nil:
		return listOf(m.Fetch, c, func(b *FetchRequest) { c.Fetch = b },
			func(x *FetchRequest) *[]FetchPartition { return &x.Partitions })
	case m.FetchResponse != nil:
		return listOf(m.FetchResponse, c, func(b *FetchResponse) { c.FetchResponse = b },
			func(x *FetchResponse) *[]FetchPartitionData { return &x.Partitions })
	case m.OffsetsForEpoch != nil:
		return listOf(m.OffsetsForEpoch, c, func(b *OffsetsForEpochRequest) { c.OffsetsForEpoch = b },
			func(x *OffsetsForEpochRequest) *[]OffsetsForEpochPartition { return &x.Partitions })
	case m.OffsetsForEpochResp != nil:
		return listOf(m.OffsetsForEpochResp, c, func(b *OffsetsForEpochResponse) { c.OffsetsForEpochResp = b },
			func(x *OffsetsForEpochResponse) *[]OffsetsForEpochResult { return &x.Partitions })
	case m.LeaderAndIsr != nil:
		return listOf(m.LeaderAndIsr, c, func(b *LeaderAndIsrRequest) { c.LeaderAndIsr = b },
			func(x *LeaderAndIsrRequest) *[]LeaderAndIsrState { return &x.Partitions })
	case m.LeaderAndIsrResponse != nil:
		return listOf(m.LeaderAndIsrResponse, c, func(b *LeaderAndIsrResponse) { c.LeaderAndIsrResponse = b },
			func(x *LeaderAndIsrResponse) *[]PartitionError { return &x.Partitions })
	case m.StopReplica != nil:
		return listOf(m.StopReplica, c, func(b *StopReplicaRequest) { c.StopReplica = b },
			func(x *StopReplicaRequest) *[]TP { return &x.Partitions })
	case m.ControlledShutdownResp != nil:
		return listOf(m.ControlledShutdownResp, c, func(b *ControlledShutdownResponse) { c.ControlledShutdownResp = b },
			func(x *ControlledShutdownResponse) *[]TP { return &x.Remaining })
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

type partitionList interface {
	carries(keep func(TP) bool) bool
	// cut keeps the entries keep accepts (all, without keep), at most max; it returns how many
	// there were and how many it kept.
	cut(keep func(TP) bool, max int) (n, kept int)
}

// listOf is the list get finds in body, m's; with c it is the list of a copy of body, which put
// stores in c.
func listOf[B any, T tpOf](body *B, c *Message, put func(*B), get func(*B) *[]T) partitionList {
	if c != nil {
		cp := *body
		put(&cp)
		body = &cp
	}
	return entries[T]{get(body)}
}

// entries is a list of partition entries of one type.
type entries[T tpOf] struct{ s *[]T }

func (l entries[T]) carries(keep func(TP) bool) bool {
	for _, x := range *l.s {
		if keep(x.tp()) {
			return true
		}
	}
	return false
}

func (l entries[T]) cut(keep func(TP) bool, max int) (n, kept int) {
	n, kept, *l.s = cut(*l.s, keep, max)
	return n, kept
}

// oneTP is a message about one partition: nothing to cut.
type oneTP TP

func (t oneTP) carries(keep func(TP) bool) bool    { return keep(TP(t)) }
func (oneTP) cut(func(TP) bool, int) (n, kept int) { return 1, 1 }

// tpOf is a partition entry of a message: each embeds TP (or is one).
type tpOf interface{ tp() TP }

func (t TP) tp() TP { return t }

// cut returns the length of s, how many entries it keeps, and s cut to the entries keep accepts
// (all, without keep) and then to at most max. It copies only when it drops entries in between.
func cut[T tpOf](s []T, keep func(TP) bool, max int) (n, kept int, out []T) {
	if keep == nil {
		if len(s) <= max {
			return len(s), len(s), s
		}
		return len(s), max, s[:max:max]
	}
	for _, x := range s {
		if len(out) < max && keep(x.tp()) {
			out = append(out, x)
		}
	}
	return len(s), len(out), out
}
