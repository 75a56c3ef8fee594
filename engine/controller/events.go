package controller

import "github.com/highwater-sim/highwater/engine/protocol"

// Event is a trace event the controller or ZooKeeper states (Kafka's state-change and controller
// log lines); the engine records it as one of its events, with the same fields. Its text is made
// here, where the state it describes is.
type Event struct {
	Type      string
	Broker    protocol.Opt[int32]
	Topic     string
	Partition protocol.Opt[int32]
	// From and To are a leader change's old and new leader.
	From, To protocol.Opt[int64]
	// Epoch is a leader, controller or broker epoch.
	Epoch       protocol.Opt[int64]
	OldISR, ISR []int32
	Reason      string
	// Name is an error's name.
	Name string
	Text string
}

// The event types the controller and ZooKeeper emit (the engine's table, EventTypes, lists them
// with the rest).
const (
	EvISRChange    = "isr-change"
	EvLeaderChange = "leader-change"
	EvController   = "controller-change"
	EvZKSession    = "zk-session-expired"
	EvZKRegister   = "zk-register"
	EvElectFailed  = "election-failed"
	// EvAlterPartitionRejected is the controller's refusal of a leader's AlterPartition.
	EvAlterPartitionRejected = "alter-partition-rejected"
	// EvISRNotification is the controller's handling of the brokers' ISR-change notifications
	// (before IBP 2.7).
	EvISRNotification = "isr-change-notification"
)
