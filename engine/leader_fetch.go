package engine

import brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process

// The leader's side of Fetch (ReplicaManager.fetchMessages, the fetch sessions, DelayedFetch) is
// package broker's (leader_fetch.go, fetch_session.go, delayed_fetch.go); here: handing it its
// requests and timers. The answers' storage is the engine's (fetch_messages.go, recycle.go).

func (e *Engine) handleFetch(b *broker, m *Message) { b.rm.FetchMessages(b.Broker, m) }

func (e *Engine) delayedFetchExpired(b *broker, df *brk.DelayedFetch, seq uint64) {
	b.rm.DelayedFetchExpired(b.Broker, df, seq)
}

// The answers to OffsetsForLeaderEpoch and ListOffsets are package broker's (leader_answers.go).

func (e *Engine) handleOffsetsForEpoch(b *broker, m *Message) {
	b.rm.HandleOffsetsForEpoch(b.Broker, m)
}

func (e *Engine) handleListOffsets(b *broker, m *Message) { b.rm.HandleListOffsets(b.Broker, m) }

// describeFetchPart is one partition of a Fetch answer's text.
func describeFetchPart(d FetchPartitionData) string { return brk.DescribeFetchPartition(d) }
