package engine

// Kafka error names, as values in responses (never Go errors): kerr-style.
const (
	ErrNone                         = ""
	ErrNotLeaderOrFollower          = "NOT_LEADER_OR_FOLLOWER"
	ErrFencedLeaderEpoch            = "FENCED_LEADER_EPOCH"
	ErrUnknownLeaderEpoch           = "UNKNOWN_LEADER_EPOCH"
	ErrOffsetOutOfRange             = "OFFSET_OUT_OF_RANGE"
	ErrUnknownTopicOrPartition      = "UNKNOWN_TOPIC_OR_PARTITION"
	ErrStaleControllerEpoch         = "STALE_CONTROLLER_EPOCH"
	ErrStaleBrokerEpoch             = "STALE_BROKER_EPOCH"
	ErrKafkaStorage                 = "KAFKA_STORAGE_ERROR"
	ErrNotEnoughReplicas            = "NOT_ENOUGH_REPLICAS"
	ErrNotEnoughReplicasAfterAppend = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
	ErrRequestTimedOut              = "REQUEST_TIMED_OUT"
	ErrNotController                = "NOT_CONTROLLER"
	ErrInvalidUpdateVersion         = "INVALID_UPDATE_VERSION"
	ErrInvalidRequest               = "INVALID_REQUEST"
	ErrIneligibleReplica            = "INELIGIBLE_REPLICA"
	ErrLeaderNotAvailable           = "LEADER_NOT_AVAILABLE"
	ErrNetwork                      = "NETWORK_EXCEPTION"
	ErrDeliveryTimeout              = "DELIVERY_TIMEOUT"
)
