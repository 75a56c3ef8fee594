package engine

import brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process

// The leader's side of Fetch (ReplicaManager.fetchMessages, the fetch sessions, DelayedFetch) and
// the answers to OffsetsForLeaderEpoch and ListOffsets are package broker's (leader_fetch.go,
// fetch_session.go, delayed_fetch.go, leader_answers.go), which brk.Broker.Handle hands their
// requests and its timers methods their timeouts (kafka_apis.go). The answers' storage is the
// engine's (fetch_messages.go, recycle.go); here, an answer's text.

// describeFetchPart is one partition of a Fetch answer's text.
func describeFetchPart(d FetchPartitionData) string { return brk.DescribeFetchPartition(d) }
