package engine

import (
	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/controller"
)

// Event is one entry of the trace. Every event has a time, a type and one stable human-readable
// Text (the narration, and what tests compare); the other fields depend on the type. Message
// events (the send of a request or response) carry the Message itself, which says who sent it to
// whom and when it arrives.
type Event struct {
	T    int64  `json:"t"`
	Type string `json:"type"`
	// Broker is where a local event happened.
	Broker    Opt[int32] `json:"broker,omitzero"`
	Topic     string     `json:"topic,omitempty"`
	Partition Opt[int32] `json:"partition,omitzero"`
	Message   *Message   `json:"message,omitempty"`
	// From and To are a change's old and new values: offsets for truncate and high-watermark,
	// leaders for leader-change.
	From Opt[int64] `json:"from,omitzero"`
	To   Opt[int64] `json:"to,omitzero"`
	// Epoch is a leader epoch (leader-change) or broker epoch (broker-up).
	Epoch   Opt[int64]         `json:"epoch,omitzero"`
	OldISR  []int32            `json:"oldIsr,omitzero"`
	ISR     []int32            `json:"isr,omitzero"`
	Records []commitlog.Record `json:"records,omitzero"`
	Reason  string             `json:"reason,omitempty"`
	// Name is an invariant name (violation) or an error name.
	Name     string  `json:"name,omitempty"`
	Replicas []int32 `json:"replicas,omitzero"`
	// Cause is a violation's cause (package check).
	Cause *Cause `json:"cause,omitempty"`
	Text  string `json:"text"`
	// render makes Text from the event's fields when someone reads it (Narrate), for the events
	// a run emits by the thousand; arg holds what the text names beyond the fields.
	render func(*Event) string
	arg    [2]int64
}

// Event types beyond the message types (messages.go); the controller's are package
// controller's, the broker's package broker's (brk.Kind.Type).
const (
	EvTruncate      = brk.EvTruncate
	EvHighWatermark = brk.EvHighWatermark
	EvISRChange     = controller.EvISRChange
	EvLeaderChange  = controller.EvLeaderChange
	EvBrokerDown    = brk.EvBrokerDown
	EvBrokerUp      = brk.EvBrokerUp
	EvViolation     = "violation"
	EvDropped       = "message-dropped"
	EvHeld          = "message-held"
	EvReleased      = "message-released"
	EvAppend        = brk.EvAppend
	EvRole          = brk.EvRole
	EvFetcher       = brk.EvFetcher
	EvController    = controller.EvController
	EvCheckpoint    = "hw-checkpoint"
	EvProduceResult = "produce-result"
	EvConsumeResult = "consume-result"
	EvLogDirFailure = brk.EvLogDirFailure
	EvIsolate       = "isolate"
	EvHeal          = "heal"
	EvLink          = "link"
	EvConfig        = "config"
	EvISRPending    = brk.EvISRPending
	EvFailed        = brk.EvFailed
	EvZKSession     = controller.EvZKSession
	EvZKRegister    = controller.EvZKRegister
	EvShutdown      = brk.EvShutdown
	EvElectFailed   = controller.EvElectFailed
	// EvAlterPartitionRejected is the controller's refusal of a leader's AlterPartition.
	EvAlterPartitionRejected = controller.EvAlterPartitionRejected
	// EvISRNotification is the controller's handling of the brokers' ISR-change notifications
	// (before IBP 2.7).
	EvISRNotification = controller.EvISRNotification
	// EvCaption is a `caption` step: a line of the guided tour, in the trace with its text.
	EvCaption = "caption"
)

// EventTypes is the table of every event type: the message types and the types above.
var EventTypes = []string{
	MsgFetch, MsgFetchResponse, MsgOffsetsForEpoch, MsgOffsetsForEpochResponse, MsgListOffsets,
	MsgListOffsetsResponse, MsgLeaderAndIsr, MsgLeaderAndIsrResponse, MsgStopReplica,
	MsgStopReplicaResponse, MsgUpdateMetadata, MsgUpdateMetadataResponse, MsgAlterPartition, MsgAlterPartitionResponse, MsgControlledShutdown,
	MsgControlledShutdownResp, MsgProduce, MsgProduceResponse,
	EvTruncate, EvHighWatermark, EvISRChange, EvLeaderChange, EvBrokerDown, EvBrokerUp,
	EvViolation, EvDropped, EvHeld, EvReleased, EvAppend, EvRole, EvFetcher, EvController,
	EvCheckpoint, EvProduceResult, EvConsumeResult, EvLogDirFailure, EvIsolate, EvHeal, EvLink,
	EvConfig, EvISRPending, EvFailed, EvZKSession, EvZKRegister, EvShutdown, EvElectFailed,
	EvAlterPartitionRejected, EvCaption, EvISRNotification,
}
