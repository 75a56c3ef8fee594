package engine

// The broker's replica manager: its LeaderAndIsr handling (ReplicaManager.becomeLeaderOrFollower,
// Partition.makeLeader and makeFollower), StopReplica and HW checkpoints are package broker's
// (brk.ReplicaManager, over its brk.Broker as Host), which brk.Broker.Handle hands its requests
// and brk.Broker.HighWatermarkCheckpoint its task (kafka_apis.go). Here: the cluster's start's
// LeaderAndIsr (start.go); the events are the broker's (brk.Event), what a crash forgets is
// brk.Partition.ResetMemory.

// becomeLeaderOrFollower applies a LeaderAndIsr to b (brk.ReplicaManager; tests call it).
func (e *Engine) becomeLeaderOrFollower(b *broker, req *LeaderAndIsrRequest) *LeaderAndIsrResponse {
	return b.rm.BecomeLeaderOrFollower(b.Broker, req)
}
