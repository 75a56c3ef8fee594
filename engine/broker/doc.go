// Package broker is to become a Kafka broker's replication code (issue 11, the last stage of
// "Packages by Kafka noun", docs/engine.md): its ReplicaManager and Partitions, its fetcher
// threads, its FetchSessionCache and its purgatory, reading only its own state, the message it
// handles and its config, with what it needs of the cluster through an interface the engine
// implements (as controller.Cluster).
//
// The move is in green steps, each leaving every trace hash unchanged. Moved so far: the pieces
// that read no other broker state, the fetcher-id hash (AbstractFetcherManager.getFetcherId), the
// follower's FetchSessionHandler (nextMetadata: the session id and epoch of the next Fetch, moved
// on by each answer or failure; the partitions' session entries; those that left the thread), Replica (Replica.scala: what a leader
// knows of one follower, updated by its fetches and reset on a new leader epoch),
// PartitionState (a leader's committed ISR and the change in flight, KIP-497), and the leader's
// FetchSessionCache (session ids, touch, which session a new one evicts) over the sessions'
// FetchSession metadata, the produce purgatory (DelayedProduce, ProducePurgatory), the log's side of truncation
// (LastOffsetForLeaderEpoch, TruncationOffset), and a fetcher thread's partition state
// (FetcherThread, PartitionFetchState: the fetch states, the change list, the counts, the
// request in flight and wake-up, what its requests carried, and Build, gathering a Fetch's
// partitions), the fetcher thread's loop and its answers' handling (DoWork, Handle*: they see
// the thread, the message and a Follower, the broker's side of them that the engine implements
// while the replica manager is its), and the part of a replica's Partition that reads only its own state (Partition:
// broker, leader, leader epoch, known, offline, HW confirmed, partition epoch, epoch start
// offset, HW checkpoint, unflushed count, the log, the followers' Replicas, the ISR's
// PartitionState, the produce purgatory), which the engine's replica embeds. The rest is still
// package engine's (broker.go, replica_manager.go, fetcher.go's manager, leader_fetch.go,
// fetch_session*.go, isr*.go, produce.go).
package broker
