package engine

import "github.com/highwater-sim/highwater/engine/protocol"

// The wire: requests, responses and Kafka's error codes live in engine/protocol, a package that
// imports nothing of the nodes. The engine's API names them as before.

type (
	Message                    = protocol.Message
	TP                         = protocol.TP
	FetchRequest               = protocol.FetchRequest
	FetchPartition             = protocol.FetchPartition
	FetchResponse              = protocol.FetchResponse
	EpochEndOffset             = protocol.EpochEndOffset
	FetchPartitionData         = protocol.FetchPartitionData
	OffsetsForEpochRequest     = protocol.OffsetsForEpochRequest
	OffsetsForEpochPartition   = protocol.OffsetsForEpochPartition
	OffsetsForEpochResponse    = protocol.OffsetsForEpochResponse
	OffsetsForEpochResult      = protocol.OffsetsForEpochResult
	ListOffsetsRequest         = protocol.ListOffsetsRequest
	ListOffsetsResponse        = protocol.ListOffsetsResponse
	LeaderAndIsrRequest        = protocol.LeaderAndIsrRequest
	LeaderAndIsrState          = protocol.LeaderAndIsrState
	LeaderAndIsrResponse       = protocol.LeaderAndIsrResponse
	PartitionError             = protocol.PartitionError
	StopReplicaRequest         = protocol.StopReplicaRequest
	StopReplicaResponse        = protocol.StopReplicaResponse
	UpdateMetadataRequest      = protocol.UpdateMetadataRequest
	UpdateMetadataResponse     = protocol.UpdateMetadataResponse
	AlterPartitionRequest      = protocol.AlterPartitionRequest
	AlterPartitionResponse     = protocol.AlterPartitionResponse
	ControlledShutdownRequest  = protocol.ControlledShutdownRequest
	ControlledShutdownResponse = protocol.ControlledShutdownResponse
	ProduceRequest             = protocol.ProduceRequest
	ProduceResponse            = protocol.ProduceResponse
	KafkaError                 = protocol.KafkaError
	Acks                       = protocol.Acks
)

const (
	MsgFetch                        = protocol.MsgFetch
	MsgFetchResponse                = protocol.MsgFetchResponse
	MsgOffsetsForEpoch              = protocol.MsgOffsetsForEpoch
	MsgOffsetsForEpochResponse      = protocol.MsgOffsetsForEpochResponse
	MsgListOffsets                  = protocol.MsgListOffsets
	MsgListOffsetsResponse          = protocol.MsgListOffsetsResponse
	MsgLeaderAndIsr                 = protocol.MsgLeaderAndIsr
	MsgLeaderAndIsrResponse         = protocol.MsgLeaderAndIsrResponse
	MsgStopReplica                  = protocol.MsgStopReplica
	MsgStopReplicaResponse          = protocol.MsgStopReplicaResponse
	MsgUpdateMetadata               = protocol.MsgUpdateMetadata
	MsgUpdateMetadataResponse       = protocol.MsgUpdateMetadataResponse
	MsgAlterPartition               = protocol.MsgAlterPartition
	MsgAlterPartitionResponse       = protocol.MsgAlterPartitionResponse
	MsgControlledShutdown           = protocol.MsgControlledShutdown
	MsgControlledShutdownResp       = protocol.MsgControlledShutdownResp
	MsgProduce                      = protocol.MsgProduce
	MsgProduceResponse              = protocol.MsgProduceResponse
	ClientNode                      = protocol.ClientNode
	InvalidSessionID                = protocol.InvalidSessionID
	InitialEpoch                    = protocol.InitialEpoch
	FinalEpoch                      = protocol.FinalEpoch
	ErrNone                         = protocol.ErrNone
	ErrOffsetOutOfRange             = protocol.ErrOffsetOutOfRange
	ErrUnknownTopicOrPartition      = protocol.ErrUnknownTopicOrPartition
	ErrLeaderNotAvailable           = protocol.ErrLeaderNotAvailable
	ErrNotLeaderOrFollower          = protocol.ErrNotLeaderOrFollower
	ErrRequestTimedOut              = protocol.ErrRequestTimedOut
	ErrStaleControllerEpoch         = protocol.ErrStaleControllerEpoch
	ErrNetwork                      = protocol.ErrNetwork
	ErrNotEnoughReplicas            = protocol.ErrNotEnoughReplicas
	ErrNotEnoughReplicasAfterAppend = protocol.ErrNotEnoughReplicasAfterAppend
	ErrNotController                = protocol.ErrNotController
	ErrInvalidRequest               = protocol.ErrInvalidRequest
	ErrKafkaStorage                 = protocol.ErrKafkaStorage
	ErrFetchSessionIDNotFound       = protocol.ErrFetchSessionIDNotFound
	ErrInvalidFetchSessionEpoch     = protocol.ErrInvalidFetchSessionEpoch
	ErrFencedLeaderEpoch            = protocol.ErrFencedLeaderEpoch
	ErrUnknownLeaderEpoch           = protocol.ErrUnknownLeaderEpoch
	ErrStaleBrokerEpoch             = protocol.ErrStaleBrokerEpoch
	ErrBrokerNotAvailable           = protocol.ErrBrokerNotAvailable
	ErrUnknownServerError           = protocol.ErrUnknownServerError
	ErrInvalidUpdateVersion         = protocol.ErrInvalidUpdateVersion
	ErrIneligibleReplica            = protocol.ErrIneligibleReplica
	ErrInvalidReplicaAssignment     = protocol.ErrInvalidReplicaAssignment
	ErrPreferredLeaderNotAvailable  = protocol.ErrPreferredLeaderNotAvailable
	ErrEligibleLeadersNotAvailable  = protocol.ErrEligibleLeadersNotAvailable
	ErrElectionNotNeeded            = protocol.ErrElectionNotNeeded
	ErrDeliveryTimeout              = protocol.ErrDeliveryTimeout
	ErrNoController                 = protocol.ErrNoController
	ErrOutOfOrderSequenceNumber     = protocol.ErrOutOfOrderSequenceNumber
	ErrInvalidProducerEpoch         = protocol.ErrInvalidProducerEpoch
	ErrUnknownProducerID            = protocol.ErrUnknownProducerID
)
