// Package broker is a Kafka broker's replication code (issue 11, the last stage of "Packages by
// Kafka noun", docs/engine.md): its ReplicaManager and Partitions, its fetcher threads, its
// FetchSessionCache and its purgatory, reading only its own state, the message it handles and
// its config, with what it needs of the cluster through an interface the engine implements (as
// controller.Cluster is for the controller).
//
// The move is in green steps, each leaving every trace hash unchanged. Here so far:
//   - the follower's side: a fetcher thread (FetcherThread: its PartitionFetchStates, change list
//     and counts, its FetchSessionHandler, the request in flight and its wake-up, what its
//     requests carried, Build gathering a Fetch's partitions), its loop (DoWork: maybeTruncate,
//     maybeFetch) and its answers' handling with every error path (Handle*, RequestFailed), and
//     the broker's FetcherManager (AbstractFetcherManager, with getFetcherId's hash). They see
//     the thread, the message and a Follower: what they ask of the rest of the broker (the
//     Broker answers) and of the cluster (which it asks of its Cluster).
//   - the ReplicaManager's handling of the controller's requests: LeaderAndIsr
//     (BecomeLeaderOrFollower, makeLeaders, makeFollowers, MakeLeader, MakeFollower: Partition's
//     makeLeader and makeFollower), StopReplica, the HW checkpoint task, and the controller epoch
//     seen, the leader's HW (high_watermark.go: maybeIncrementLeaderHW, effectiveMinIsr), the
//     produce path (produce.go: appendRecords with acks and min.insync.replicas, the leader
//     check every leader-bound request passes, the purgatory's completions and timeouts), the
//     answers to a follower's OffsetsForLeaderEpoch and ListOffsets (leader_answers.go), and
//     the ISR's changes (isr_change.go: maybeExpandIsr, the shrink task with
//     getOutOfSyncReplicas' rule by era, the AlterPartition round trip; before 2.7 the leader's
//     own ZooKeeper write, which Host.UpdateIsr answers, and isr_change_notification.go: its
//     ISR-change notification, Host.PropagateIsrChanges), and the leader's side of Fetch
//     (leader_fetch.go: FetchManager.newContext and ReplicaManager.fetchMessages, Partition
//     .fetchRecords, updateFollowerFetchState; fetch_session.go: the FetchSessions of the
//     FetchSessionCache and their CachedPartitions, read only where dirty; delayed_fetch.go:
//     DelayedFetch, the fetch purgatory's checks, completions and expiry). It reaches the rest
//     of the broker and the cluster through Host, a Follower with more.
//   - a replica's truncations and a follower's HW (truncation.go: Log.truncateTo,
//     truncateFullyAndStartAt, the HW a fetch answer carries), telling the rest of the broker
//     through Host.
//   - the leader's pieces that read only their own state: Replica (what a leader knows of one
//     follower), PartitionState (the committed ISR and the change in flight, KIP-497), the
//     FetchSessionCache over the sessions' FetchSession metadata, the produce purgatory
//     (DelayedProduce, ProducePurgatory), and the log's side of truncation
//     (LastOffsetForLeaderEpoch, TruncationOffset).
//   - a replica's Partition (broker, leader, leader epoch, known, offline, HW confirmed,
//     partition epoch, its pid, epoch start offset, HW checkpoint, the log (with its recovery
//     point and durable end), the
//     followers' Replicas, the ISR's PartitionState, the parked produces and full fetches, the
//     fetch sessions caching it), which the engine's replica is (an alias).
//   - the Broker (broker.go): its replicas by pid (HostIndex, the static assignment), its
//     ReplicaManager and FetcherManager, the Host it hands them, over a Cluster (host.go): what
//     it asks of the cluster, which the engine implements per broker (broker_cluster.go).
//   - its process (kafka_server.go, KafkaServer): its state (running, shutting down, dead), its
//     start with the logs' recovery and the ZooKeeper registration (Startup), a crash with or
//     without a power loss (Crash), the controlled shutdown with its attempts, backoffs and
//     stop (Shutdown, ControlledShutdownRetry), a failed log directory (LogDirFailure), and an
//     exit on a thread's fatal error (Exit).
//   - its log directory's LogManager files (recovery_point.go): the recovery-point checkpoint
//     and its task, the clean-shutdown marker, each log's recovery point after a start by the
//     era's rule, the logs' flush and close at shutdown, and a start refused by NodeExists.
//   - its entry points (kafka_apis.go): Handle, Kafka's KafkaApis.handle, switching a delivered
//     message to its handler (a request to the replica manager, an answer to the fetcher thread
//     or partition that asked); RequestFailed, a request of its own unanswered; and its timers
//     (FetcherWake, DelayedFetchExpired, DelayedProduceExpired, IsrExpiration, IsrChangePropagation,
//     HighWatermarkCheckpoint, AlterPartitionResend). The engine's network and agenda call only
//     these (TestBrokerHandlesItsMessages); the controller's messages stay the controller's.
//   - its events, as data (events.go, event_text.go): an Event of a Kind from one table, built
//     where the broker states it and handed to Cluster.Emit, the one event method (the facts
//     that go with some are their own calls); every kind's text is made here from the event
//     alone, the engine passing the partition's name in, so a new event touches this package
//     only. Where a large run emits a kind by the thousand its text is made when read (Kind
//     .Lazy: from the fields the trace keeps), and an event is passed by value, not to cost an
//     allocation.
//
// The rest is still package engine's: broker.go (what of the process is the world's: its
// incarnation, its isolation, a restart's wait for its old ZooKeeper session before broker
// epochs), broker_cluster.go (the registration, the network's part of a gone process, the
// conversion of the events to the engine's), and fetch_messages.go (the Fetch answers' storage,
// which the engine reuses).
package broker
