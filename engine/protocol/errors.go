package protocol

import "fmt"

// KafkaError is a Kafka error code, as a value in responses (never a Go error), with Kafka's
// numbers (org.apache.kafka.common.protocol.Errors) and names. It encodes as its name; ErrNone is
// the zero value and encodes as nothing (the `error` fields are omitempty).
type KafkaError int16

// Kafka's error codes the engine uses. ErrDeliveryTimeout is the producer's own verdict (its
// delivery.timeout.ms ran out) and ErrNoController an operator's election with no controller
// to run it (no longer raised: such an election waits for a controller, controller/deferred.go);
// neither is on the wire, so they have codes outside Kafka's range.
const (
	ErrUnknownServerError           KafkaError = -1
	ErrNone                         KafkaError = 0
	ErrOffsetOutOfRange             KafkaError = 1
	ErrUnknownTopicOrPartition      KafkaError = 3
	ErrLeaderNotAvailable           KafkaError = 5
	ErrNotLeaderOrFollower          KafkaError = 6
	ErrRequestTimedOut              KafkaError = 7
	ErrBrokerNotAvailable           KafkaError = 8
	ErrStaleControllerEpoch         KafkaError = 11
	ErrNetwork                      KafkaError = 13
	ErrNotEnoughReplicas            KafkaError = 19
	ErrNotEnoughReplicasAfterAppend KafkaError = 20
	ErrNotController                KafkaError = 41
	ErrOutOfOrderSequenceNumber     KafkaError = 45
	ErrInvalidProducerEpoch         KafkaError = 47
	ErrUnknownProducerID            KafkaError = 59
	ErrInvalidRequest               KafkaError = 42
	ErrKafkaStorage                 KafkaError = 56
	ErrFetchSessionIDNotFound       KafkaError = 70
	ErrInvalidFetchSessionEpoch     KafkaError = 71
	ErrFencedLeaderEpoch            KafkaError = 74
	ErrUnknownLeaderEpoch           KafkaError = 75
	ErrStaleBrokerEpoch             KafkaError = 77
	ErrInvalidUpdateVersion         KafkaError = 95
	ErrIneligibleReplica            KafkaError = 107
	ErrInvalidReplicaAssignment     KafkaError = 39
	ErrReassignmentInProgress       KafkaError = 60
	ErrPreferredLeaderNotAvailable  KafkaError = 80
	ErrEligibleLeadersNotAvailable  KafkaError = 83
	ErrElectionNotNeeded            KafkaError = 84
	ErrDeliveryTimeout              KafkaError = -1000
	ErrNoController                 KafkaError = -1001
)

// kafkaErrorNames is the one table of error names.
var kafkaErrorNames = map[KafkaError]string{
	ErrUnknownServerError:           "UNKNOWN_SERVER_ERROR",
	ErrNone:                         "",
	ErrOffsetOutOfRange:             "OFFSET_OUT_OF_RANGE",
	ErrUnknownTopicOrPartition:      "UNKNOWN_TOPIC_OR_PARTITION",
	ErrLeaderNotAvailable:           "LEADER_NOT_AVAILABLE",
	ErrNotLeaderOrFollower:          "NOT_LEADER_OR_FOLLOWER",
	ErrRequestTimedOut:              "REQUEST_TIMED_OUT",
	ErrBrokerNotAvailable:           "BROKER_NOT_AVAILABLE",
	ErrStaleControllerEpoch:         "STALE_CONTROLLER_EPOCH",
	ErrNetwork:                      "NETWORK_EXCEPTION",
	ErrNotEnoughReplicas:            "NOT_ENOUGH_REPLICAS",
	ErrNotEnoughReplicasAfterAppend: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	ErrNotController:                "NOT_CONTROLLER",
	ErrOutOfOrderSequenceNumber:     "OUT_OF_ORDER_SEQUENCE_NUMBER",
	ErrInvalidProducerEpoch:         "INVALID_PRODUCER_EPOCH",
	ErrUnknownProducerID:            "UNKNOWN_PRODUCER_ID",
	ErrInvalidRequest:               "INVALID_REQUEST",
	ErrKafkaStorage:                 "KAFKA_STORAGE_ERROR",
	ErrFetchSessionIDNotFound:       "FETCH_SESSION_ID_NOT_FOUND",
	ErrInvalidFetchSessionEpoch:     "INVALID_FETCH_SESSION_EPOCH",
	ErrFencedLeaderEpoch:            "FENCED_LEADER_EPOCH",
	ErrUnknownLeaderEpoch:           "UNKNOWN_LEADER_EPOCH",
	ErrStaleBrokerEpoch:             "STALE_BROKER_EPOCH",
	ErrInvalidUpdateVersion:         "INVALID_UPDATE_VERSION",
	ErrIneligibleReplica:            "INELIGIBLE_REPLICA",
	ErrInvalidReplicaAssignment:     "INVALID_REPLICA_ASSIGNMENT",
	ErrReassignmentInProgress:       "REASSIGNMENT_IN_PROGRESS",
	ErrPreferredLeaderNotAvailable:  "PREFERRED_LEADER_NOT_AVAILABLE",
	ErrEligibleLeadersNotAvailable:  "ELIGIBLE_LEADERS_NOT_AVAILABLE",
	ErrElectionNotNeeded:            "ELECTION_NOT_NEEDED",
	ErrDeliveryTimeout:              "DELIVERY_TIMEOUT",
	ErrNoController:                 "NO_CONTROLLER",
}

// kafkaErrorsByName is the table read backwards, for decoding.
var kafkaErrorsByName = func() map[string]KafkaError {
	m := make(map[string]KafkaError, len(kafkaErrorNames))
	for k, v := range kafkaErrorNames {
		m[v] = k
	}
	return m
}()

// String is Kafka's name of the error ("" for ErrNone).
func (e KafkaError) String() string {
	if s, ok := kafkaErrorNames[e]; ok {
		return s
	}
	return fmt.Sprintf("KafkaError(%d)", int16(e))
}

// Name is Kafka's name of the error and whether the code has one (MarshalText refuses a code
// without a name).
func (e KafkaError) Name() (string, bool) {
	s, ok := kafkaErrorNames[e]
	return s, ok
}

// MarshalText encodes the error as its name.
func (e KafkaError) MarshalText() ([]byte, error) {
	s, ok := kafkaErrorNames[e]
	if !ok {
		return nil, fmt.Errorf("unknown Kafka error code %d", int16(e))
	}
	return []byte(s), nil
}

// UnmarshalText decodes an error name.
func (e *KafkaError) UnmarshalText(b []byte) error {
	k, ok := kafkaErrorsByName[string(b)]
	if !ok {
		return fmt.Errorf("unknown Kafka error %q", b)
	}
	*e = k
	return nil
}
