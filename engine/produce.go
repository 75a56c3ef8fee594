package engine

// The leader's side of Produce (ReplicaManager.appendRecords, Partition.appendRecordsToLeader) and
// the produce purgatory's completions are package broker's (produce.go), which brk.Broker.Handle
// hands its requests and brk.Broker.DelayedProduceExpired its timeouts (kafka_apis.go); what an
// append tells the rest of the broker is brk.Broker.Appended's, and its event (brk.LeaderAppend,
// with its text) the broker's too.
