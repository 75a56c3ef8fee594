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
	// Omitted counts partitions left out of a copy cut for a page (engine/view); 0 on the wire.
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
	StopReplicaResponse    *StopReplicaResponse        `json:"stopReplicaResponse,omitempty"`
	UpdateMetadata         *UpdateMetadataRequest      `json:"updateMetadata,omitempty"`
	UpdateMetadataResponse *UpdateMetadataResponse     `json:"updateMetadataResponse,omitempty"`
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
	MsgStopReplicaResponse     = "stop-replica-response"
	MsgUpdateMetadata          = "update-metadata"
	MsgUpdateMetadataResponse  = "update-metadata-response"
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
	ReplicaID   int32 `json:"replicaId"`
	BrokerEpoch int64 `json:"brokerEpoch"`
	MaxWaitMs   int64 `json:"maxWaitMs"`
	MinBytes    int64 `json:"minBytes"`
	FetcherID   int32 `json:"fetcherId"`
	// SessionID and SessionEpoch are the fetch session metadata (KIP-227, Fetch v7, Kafka 1.1;
	// FetchMetadata): epoch 0 (InitialEpoch) is a full fetch that asks for a new session and
	// closes session SessionID if it is not 0; an epoch above 0 is session SessionID's next
	// incremental fetch; epoch -1 (FinalEpoch) is a full fetch without a session: a consumer's, and
	// every follower's before 1.1 (Kafka reads a Fetch older than v7 so).
	SessionID    int32            `json:"sessionId"`
	SessionEpoch int32            `json:"sessionEpoch"`
	Partitions   []FetchPartition `json:"partitions"`
	// ForgottenTopicsData lists the partitions leaving an incremental session (Kafka groups them
	// by topic; here a flat list, as Partitions is).
	ForgottenTopicsData []TP `json:"forgottenTopicsData,omitempty"`
}

// Fetch session metadata values (FetchMetadata.java).
const (
	// InvalidSessionID is "no session": in a request, none to continue; in a response, none
	// created or kept.
	InvalidSessionID int32 = 0
	// InitialEpoch is a full fetch that creates a session.
	InitialEpoch int32 = 0
	// FinalEpoch is a full fetch that creates none.
	FinalEpoch int32 = -1
)

// NextSessionEpoch is FetchMetadata.nextEpoch: FinalEpoch stays FinalEpoch, and after the
// largest int32 comes 1.
func NextSessionEpoch(prev int32) int32 {
	switch {
	case prev < 0:
		return FinalEpoch
	case prev == 1<<31-1:
		return 1
	}
	return prev + 1
}

// FetchPartition is one partition of a Fetch. -1 epochs mean "not sent" (older eras).
type FetchPartition struct {
	TP
	FetchOffset        int64 `json:"fetchOffset"`
	LogStartOffset     int64 `json:"logStartOffset"`
	CurrentLeaderEpoch int32 `json:"currentLeaderEpoch"`
	LastFetchedEpoch   int32 `json:"lastFetchedEpoch"`
	// MaxRecords bounds a consumer's read (the `count` of a consume step); 0 = no bound.
	MaxRecords int64 `json:"maxRecords,omitempty"`
}

// FetchResponse answers a Fetch. Error is a session error (FETCH_SESSION_ID_NOT_FOUND,
// INVALID_FETCH_SESSION_EPOCH), with no partitions. SessionID is the session the answer belongs
// to, InvalidSessionID for none. An answer to an incremental fetch carries only the partitions
// with news (records, an error, a divergence, a new HW or log start); a full answer carries every
// partition asked for.
type FetchResponse struct {
	Error      KafkaError           `json:"error,omitempty"`
	SessionID  int32                `json:"sessionId"`
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
	Error          KafkaError      `json:"error,omitempty"`
	HighWatermark  int64           `json:"highWatermark"`
	LogStartOffset int64           `json:"logStartOffset"`
	LogEndOffset   int64           `json:"logEndOffset"`
	DivergingEpoch *EpochEndOffset `json:"divergingEpoch,omitempty"`
	// RecordsBefore is how many of Records come before the fetch offset: a follower's Fetch from
	// inside one of the leader's batches gets that whole batch from its first record
	// (LogSegment.read: translateOffset finds the batch holding the offset, and the read starts
	// at its position), so Records begin RecordsBefore offsets below the offset asked for.
	// Negative: they begin that far past it (the fetch offset was in a Gap of the leader's log,
	// commitlog.Record.Gap, and the read starts at the batch after it). 0 otherwise, and always
	// for a consumer's read (the engine hands a consumer records, Gaps included, from its offset).
	RecordsBefore int64              `json:"recordsBefore,omitempty"`
	Records       []commitlog.Record `json:"records,omitempty"`
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

// StopReplicaResponse is a broker's answer to a StopReplica (StopReplicaResponse): a top-level
// error (STALE_CONTROLLER_EPOCH, from 2.2 STALE_BROKER_EPOCH) with no partitions, or NONE with an
// error per partition.
type StopReplicaResponse struct {
	Error      KafkaError       `json:"error,omitempty"`
	Partitions []PartitionError `json:"partitions,omitempty"`
}

// UpdateMetadataRequest is the controller's UpdateMetadata (ZooKeeper mode): the partition states
// and live brokers for a broker's metadata cache. The engine's brokers and clients learn leaders
// and live brokers at once (engine/shortcuts.go metadataAtOnce), so the request carries only what
// the narration and the page show: how many partition states Kafka's request holds, and the live
// or shutting-down brokers it lists (ControllerBrokerRequestBatch's liveOrShuttingDownBrokers).
// It travels through the controller's per-broker queue like LeaderAndIsr and StopReplica, which is
// what the engine models it for: its round trip holds the requests queued behind it.
type UpdateMetadataRequest struct {
	ControllerID    int32   `json:"controllerId"`
	ControllerEpoch int32   `json:"controllerEpoch"`
	BrokerEpoch     int64   `json:"brokerEpoch"`
	Partitions      int     `json:"partitions"`
	LiveBrokers     []int32 `json:"liveBrokers"`
}

// UpdateMetadataResponse is a broker's answer: NONE, STALE_CONTROLLER_EPOCH (an older
// controller's request: ReplicaManager.maybeUpdateMetadataCache's ControllerMovedException) or,
// from 2.2, STALE_BROKER_EPOCH (KafkaApis.handleUpdateMetadataRequest's isBrokerEpochStale).
type UpdateMetadataResponse struct {
	Error KafkaError `json:"error,omitempty"`
}

// AlterPartitionRequest is a leader's ISR change proposal (one partition per request here; a
// broker sends those submitted while one was in flight together: broker/isr_change.go).
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
	// Idempotent: the producer has enable.idempotence on (the batch carries a producer id and
	// sequence numbers, message format v2). Retried: such a batch sent again, which the leader
	// checks for a duplicate; Kafka's broker tells a retry by its sequence numbers, the engine
	// by the producer's word, so a first attempt is never searched for.
	Idempotent bool `json:"idempotent,omitempty"`
	Retried    bool `json:"retried,omitempty"`
}

// ProduceResponse answers a produce with acks 1 or all.
type ProduceResponse struct {
	Op         int64      `json:"op"`
	TP         TP         `json:"tp"`
	Error      KafkaError `json:"error,omitempty"`
	BaseOffset int64      `json:"baseOffset"`
}
