package engine

import (
	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// Replica fetcher threads (AbstractFetcherManager, AbstractFetcherThread, ReplicaFetcherThread).
// A broker runs one fetcher per (source broker, fetcherId); fetcherId hashes the partition as
// Kafka does, so partitions spread over num.replica.fetchers threads per leader. A thread's loop
// and its answers' handling are package broker's (brk.FetcherThread.DoWork and its Handle*
// methods), asking what they need of the broker and the cluster through the broker's
// brk.Broker (a brk.Follower, over the engine's cluster: broker_cluster.go); so is its fetcher
// manager (brk.FetcherManager: adding, removing and stopping threads), and so are their
// wake-ups and answers (brk.Broker.FetcherWake, Handle, RequestFailed: kafka_apis.go). What a
// turn costs follows what changed, not the thread's size (fetcher_changes.go).

// fetchState is a follower's per-partition fetch state (broker.PartitionFetchState).
type fetchState = brk.PartitionFetchState

// fetcher is a fetcher thread (brk.FetcherThread: its partitions' fetch states, session handler,
// change list, request in flight and wake-up, its loop and its answers' handling).
type fetcher = brk.FetcherThread

func fetcherKey(leader, id int32) int64 { return int64(leader)<<32 | int64(uint32(id)) }

// removeFetcherForPartitions takes partitions off every fetcher of b.
func (e *Engine) removeFetcherForPartitions(b *broker, pids []int32) {
	b.fetchers.RemoveFetcherForPartitions(pids)
}

// shutdownIdleFetchers stops b's fetchers left without partitions.
func (e *Engine) shutdownIdleFetchers(b *broker) { b.fetchers.ShutdownIdleFetchers(b.Broker) }
