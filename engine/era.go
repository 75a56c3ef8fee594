package engine

import (
	brk "github.com/highwater-sim/highwater/engine/broker"
	"github.com/highwater-sim/highwater/engine/controller"
)

// era is the protocol era chosen by inter.broker.protocol.version: the handful of rules in which
// Kafka's replication changed after real clusters lost or diverged data. Every difference between
// eras is a field here; nothing else in the engine asks which version is in force. The
// controller's rules (keepLastIsrMember, failoverOfflinesDeadReplicas, brokerEpochs) are handed
// to package controller as its controller.Era when the cluster is built (controller.go).
type era struct {
	version string
	// truncateOnFetch: fetches carry lastFetchedEpoch and the leader answers divergingEpoch
	// (KIP-595 mechanism, IBP 2.7+); no separate truncation round.
	truncateOnFetch bool
	// epochRequests: a follower asks OffsetsForLeaderEpoch before fetching (KIP-101, IBP 0.11+).
	// Without it, a follower truncates to its own high watermark (the pre-KIP-101 rule).
	epochRequests bool
	// epochAnswerNamesEpoch: the answer is (epoch, end offset) and may take several rounds
	// (KIP-279, IBP 2.0+); before, it is an offset only, found as the start of the first epoch
	// above the one asked for.
	epochAnswerNamesEpoch bool
	// fencing: requests carry currentLeaderEpoch and are fenced (KIP-320, IBP 2.1+).
	fencing bool
	// minIsrGatesHW: the HW does not advance while the ISR is below min.insync.replicas
	// (KAFKA-15583, 3.7).
	minIsrGatesHW bool
	// keepLastIsrMember: the controller never removes the last ISR member (doRemoveReplicasFromIsr
	// from 1.1, KAFKA-5642); before, it kept it only while unclean leader election was off
	// (KafkaController.removeReplicaFromIsr in 0.10.2 and 0.11.0), and the ISR could become empty.
	keepLastIsrMember bool
	// failoverOfflinesDeadReplicas: a new controller moves the replicas on dead brokers to
	// OfflineReplica before it elects (ReplicaStateMachine.startup from 2.3, KAFKA-3143).
	failoverOfflinesDeadReplicas bool
	// followerRestartsOnNewEpoch: a follower restarts its fetcher, and so truncates, on every new
	// leader epoch (Partition.makeFollower from 2.1, KAFKA-7395); before 2.0.1 only when the
	// leader changed (KAFKA-7164 changed it in 2.0.1).
	followerRestartsOnNewEpoch bool
	// assignEpochOnElection: a new leader writes (its epoch, its LEO) into its leader-epoch cache
	// when elected (Partition.makeLeader from 2.1, KAFKA-7415); before, the entry appears with the
	// leader's first append in that epoch.
	assignEpochOnElection bool
	// emptyCacheAsks: a follower whose epoch cache is empty still asks OffsetsForLeaderEpoch, with
	// epoch -1 (ReplicaFetcherThread.buildLeaderEpochRequest, 0.11); from 2.1 it truncates to its
	// HW without asking (AbstractFetcherThread.fetchTruncatingPartitions).
	emptyCacheAsks bool
	// expandNeedsEpochStart: a follower joins the ISR only once it has reached the leader's epoch
	// start offset (Partition.maybeExpandIsr from 2.1, KAFKA-7128); before, LEO ≥ HW is enough.
	expandNeedsEpochStart bool
	// alterPartition: the leader asks the controller to change the ISR (AlterIsr, KIP-497, IBP
	// 2.7) and counts the maximal ISR meanwhile; before, it writes the ISR to ZooKeeper itself,
	// conditional on its cached zkVersion (Partition.updateIsr), with no epoch bump.
	alterPartition bool
	// isrEligibility: only replicas on live, registered brokers join the ISR or hold back the HW
	// (Partition.isReplicaIsrEligible, 3.3+, and its use for the HW, KAFKA-15021, 3.6).
	isrEligibility bool
	// brokerEpochs: registrations carry a broker epoch (KIP-380, 2.2); a restart before the old
	// ZooKeeper session expired is a bounce the controller detects. Before, registration fails
	// with NodeExists while the old session lives and the broker exits
	// (KafkaServer.startup); the engine starts it again once that session has expired, as a
	// supervisor restarting it would.
	brokerEpochs bool
	// fetchSessions: a follower's fetches belong to an incremental fetch session (KIP-227, Fetch
	// v7, 1.1): after a full fetch that creates the session, a fetch lists only the partitions
	// whose fetch data changed, and the answer only those with news. Before, every Fetch lists
	// every ready partition and every answer carries them all (fetch_session.go,
	// package broker's fetch_session_handler.go).
	fetchSessions bool
	// sessionTouchedByFetch: every incremental fetch marks its session used now
	// (FetchSessionCache.touch, KAFKA-9137, 2.5). Before, only a change of the session's size
	// touched it, with its old last-used time: every session counts as stale
	// min.incremental.fetch.session.eviction.ms after its creation, and a new session evicts it
	// when the cache is full.
	sessionTouchedByFetch bool
	// outOfRangeNeverFatal: a follower whose leader's log ends below its own truncates to it
	// whatever the config (AbstractFetcherThread.fetchOffsetAndTruncate from 2.1, KAFKA-7414).
	// Before, with unclean.leader.election.enable off it refuses to truncate and the broker exits
	// (ReplicaFetcherThread.handleOffsetOutOfRange, KAFKA-1028).
	outOfRangeNeverFatal bool
	// logDirFailureHandling: a failed log directory takes its replicas offline and the broker
	// goes on (KIP-112, IBP 1.0). Before, the broker halts: ReplicaManager's LogDirFailureHandler
	// halts when inter.broker.protocol.version is below 1.0 (haltBrokerOnFailure), as 0.10.2's and
	// 0.11.0's ReplicaManager halts on the storage error of an append or HW checkpoint.
	logDirFailureHandling bool
	// minIsrCappedAtReplicas: min.insync.replicas counts at most the replication factor
	// (Partition.effectiveMinIsr, KAFKA-15583, 3.7); before, a larger value refuses every acks=all
	// produce.
	minIsrCappedAtReplicas bool
	// levelFollowerStaysInIsr: a follower at the leader's LEO never leaves the ISR (KAFKA-7152,
	// 2.1); before, one that stops fetching leaves after replica.lag.time.max.ms even when
	// nothing was produced.
	levelFollowerStaysInIsr bool
	// hwOnlyWhenFollowerMoved: a follower's fetch recomputes the leader's HW only when it moved the
	// follower's LEO (Partition.updateFollowerFetchState's prevFollowerEndOffset test, KAFKA-8841,
	// 2.4); before (0.10.2.2, 0.11.0.2, 2.1.1 Partition.maybeExpandIsr), every follower fetch
	// recomputes it at the fetch's time, so the HW rises once a caught-up replica outside the ISR
	// that held it is no longer caught up.
	hwOnlyWhenFollowerMoved bool
	// reelectionFetchTimeInSyncOnly: a leader staying on at a new leader epoch counts only its ISR
	// members as fetched now (Replica.resetReplicaState, 3.3); before (Replica
	// .resetLastCaughtUpTime in 0.10.2.2, 0.11.0.2, 2.1.1 Partition.makeLeader), every follower,
	// so a follower outside the ISR whose next Fetch reaches the leader's LEO at re-election counts
	// as caught up from the re-election on.
	reelectionFetchTimeInSyncOnly bool
	// failedReadKeepsFollower: a follower's read that failed (fenced, out of range) leaves the
	// leader's state of it alone (ReplicaManager.updateFollowerFetchState, KAFKA-8400, 2.4);
	// before, it is recorded as an unknown position (LEO -1) until the next good read.
	failedReadKeepsFollower bool
	// noBackoffAfterLastShutdownAttempt: a broker whose controlled-shutdown attempts all failed
	// stops at once after the last (KafkaServer.controlledShutdown from 3.1, #11246); before, it
	// sleeps controlled.shutdown.retry.backoff.ms once more.
	noBackoffAfterLastShutdownAttempt bool
	// controllerIdFromMetadataCache: a controlled-shutdown attempt takes the controller from the
	// metadata cache (KafkaServer.controlledShutdown from 3.0, KAFKA-9189); before, it reads
	// ZooKeeper, and a broker cut off from it waits there until the cut heals
	// (brk.ProcessRules.ControllerIdFromZooKeeper).
	controllerIdFromMetadataCache bool
	// notLeaderOrFollowerName: clients name error code 6 NOT_LEADER_OR_FOLLOWER (Errors.java from
	// 2.6); before, NOT_LEADER_FOR_PARTITION.
	notLeaderOrFollowerName bool
	// uncleanEnableElects: turning unclean.leader.election.enable on at runtime elects the
	// offline partitions at once (the controller's UncleanLeaderElectionEnable event, KAFKA-6835,
	// 2.1); before, they wait for the next election.
	uncleanEnableElects bool
	// notLeaderForUnknownLocal: a request for a partition the broker has no Partition object for
	// (before its first LeaderAndIsr since it started) is answered NOT_LEADER_FOR_PARTITION, which
	// sends clients back to their metadata (ReplicaManager.getPartitionAndLeaderReplicaIfLocal
	// from 2.0: `case None if metadataCache.contains(topicPartition)`); before,
	// UNKNOWN_TOPIC_OR_PARTITION (getLeaderReplicaIfLocal, 0.10.2 and 0.11.0).
	notLeaderForUnknownLocal bool
	// noAwaitAfterFailedFetch: a Fetch that fails (no answer: a reset or a timeout) only delays
	// the thread's partitions by replica.fetch.backoff.ms (AbstractFetcherThread
	// .processFetchRequest from 3.1, KAFKA-8529). Before, the thread also awaits the backoff in
	// the catch before it delays them, "effectively doubling the delay" (0.10.2.2, 0.11.0.2,
	// 2.1.1).
	noAwaitAfterFailedFetch bool
	// truncationClampsHW: a truncation below the HW lowers it to the new LEO (UnifiedLog
	// .truncateTo, Log.updateLogEndOffset from 2.4, commit 7a7d4cb5819). Before, the follower's
	// HW was Replica.highWatermark, which LogManager.truncateTo does not touch: it stays above
	// the LEO until the next fetch answer (0.10.2.2, 0.11.0.2, 2.1.1).
	truncationClampsHW bool
	// fetcherShutdownClosesClient: stopping a fetcher thread closes its network client first
	// (ReplicaFetcherThread.initiateShutdown → leaderEndpoint.initiateClose from 1.1, KAFKA-6051),
	// so a LeaderAndIsr that stops one returns at once. Before (0.10.2.2, 0.11.0.2) the shutdown
	// awaits the thread, blocked in its request until the answer or request.timeout.ms, inside
	// replicaStateChangeLock: the LeaderAndIsr's answer and the next LeaderAndIsr wait.
	fetcherShutdownClosesClient bool
	// preferredReelectsLeader: an operator's preferred election elects a preferred replica that
	// already leads again, at the next leader epoch (2.1.1 PartitionStateMachine
	// .leaderForPreferredReplica, no leader check); before, LeaderElectionNotNeededException; from
	// 2.2 (KAFKA-5692) ELECTION_NOT_NEEDED (controller.Era.PreferredReelectsLeader).
	preferredReelectsLeader bool
	// reorderCompletesAtOnce: an operator's chosen-leader election reorders the replicas through
	// a reassignment that completes at once (from 2.4, KIP-455); before, it waits until every
	// replica is in the ISR, bumping the leader epoch each time it runs and once more at its end
	// (onPartitionReassignment, 0.10.2.2 to 2.1.1; controller.Era.ReorderCompletesAtOnce).
	reorderCompletesAtOnce bool
	// groupByScala: the Scala version whose groupBy order the controller's ReplicaStateMachine
	// batches follow (controller.GroupByScala212 for 2.1.1's Scala 2.11/2.12 builds,
	// GroupByScala213 for 3.7.0's Scala 2.13; broker order before 2.1, whose order the engine does
	// not follow). It decides which member stays when a partition's whole ISR dies at once.
	groupByScala int
	// rebalanceBatchesPerBroker: the auto leader rebalance sends one LeaderAndIsr batch per
	// imbalanced broker (checkAndTriggerAutoLeaderRebalance, KAFKA-7299, 2.1.0); before (0.10.2.2,
	// 0.11.0.2), one per partition, each waiting for the answer to the one before
	// (controller.Era.RebalanceBatchesPerBroker).
	rebalanceBatchesPerBroker bool
	// controlledShutdownBatched: a controlled shutdown's elections go in one LeaderAndIsr batch,
	// the followed replicas' StopReplica and OfflineReplica in two more (doControlledShutdown from
	// 1.1, KAFKA-5642); before (0.10.2.2, 0.11.0.2), one partition at a time, a batch each
	// (controller.Era.ControlledShutdownBatched).
	controlledShutdownBatched bool
	// stopReplicaPerPartition: a controlled shutdown's StopReplica batches go one request per
	// partition, after an empty one (1.1 to 2.2: doControlledShutdown and ReplicaStateMachine's
	// OfflineReplica give each StopReplica a callback, and ControllerBrokerRequestBatch
	// .sendRequestsToBrokers groups only those without one; KAFKA-8294 in 2.3 batches them again)
	// (controller.Era.StopReplicaPerPartition).
	stopReplicaPerPartition bool
	// producerRetries: the era's client retries a failed batch, whatever the retriable error, until
	// delivery.timeout.ms (Sender.canRetry, retries Integer.MAX_VALUE from 2.1, KIP-91). Before,
	// retries is 0: every error is final, and a batch waiting for a leader expires after
	// request.timeout.ms (RecordBatch.maybeExpire). 0.11.0's idempotent producer retries too
	// (Engine.producerRetries).
	producerRetries bool
	// retryAtOnceOnNewLeader: a retried batch skips its backoff when the producer's metadata
	// names a newer leader epoch than the one it was last sent under (KIP-951, 3.7.0:
	// ProducerBatch.hasLeaderChangedForTheOngoingRetry, RecordAccumulator.shouldBackoff; the
	// NOT_LEADER_OR_FOLLOWER answer carries the new leader, Sender.completeBatch). Before, every
	// retry waits retry.backoff.ms.
	retryAtOnceOnNewLeader bool
	// unknownProducerError: a leader's answer to an idempotent batch with a sequence other than
	// 0 from a producer its log has no batch of (brk.ReplicaRules.UnknownProducerError):
	// OUT_OF_ORDER_SEQUENCE_NUMBER (0.11.0.2), UNKNOWN_PRODUCER_ID (2.1.1), none (3.7.0 accepts it).
	unknownProducerError KafkaError
	// sequenceRetries: the idempotent producer retries an OUT_OF_ORDER_SEQUENCE_NUMBER answer
	// to a batch that is not the next after the last acknowledged one, or whose sequence was reset
	// (TransactionManager.canRetry, 2.1.1 and 3.7.0), and an UNKNOWN_PRODUCER_ID when nothing was
	// acknowledged (2.1.1: lastAckedOffset < logStartOffset → startSequencesAtBeginning); other
	// sequence errors fail the batch and reset the producer id (Sender.failBatch →
	// resetProducerId). 0.11.0.2 retries none (OutOfOrderSequenceException is not retriable).
	sequenceRetries bool
	// producerTimeoutName: a producer's request that timed out on the client fails
	// REQUEST_TIMED_OUT (Sender.handleProduceResponse: response.wasTimedOut, 3.5 to 3.7.0);
	// before, NETWORK_EXCEPTION, as any disconnection (0.10.2.2, 0.11.0.2, 2.1.1).
	producerTimeoutName bool
	// idempotentOneInFlight: the idempotent producer has max.in.flight.requests.per.connection
	// 1 (0.11.0.2 KafkaProducer.configureInflightRequests; 5 allowed from 1.0, KAFKA-5494),
	// and the Sender mutes the partitions it drained (guaranteeMessageOrder): producer_conn.go.
	idempotentOneInFlight bool
	// idempotentEpochBump: the idempotent producer retries every OUT_OF_ORDER_SEQUENCE_NUMBER,
	// bumping its epoch and restarting the partition's sequences when the batch is the next after
	// the last acknowledged one (KIP-360, 2.5; 3.7.0 TransactionManager.canRetry →
	// requestEpochBumpForPartition, bumpIdempotentEpochAndResetIdIfNeeded), instead of failing it.
	idempotentEpochBump bool
	// exponentialRetryBackoff: a producer's backoff doubles with each failed attempt of a batch,
	// up to retry.backoff.max.ms (KIP-580, 3.7.0: RecordAccumulator's ExponentialBackoff,
	// backoff(attempts - 1)); its random ±20% is not modelled. Before, retry.backoff.ms each time.
	exponentialRetryBackoff bool
	// recordBatches: message format v2 (KIP-98, 0.11.0, the default log.message.format.version
	// from 0.11.0): a produce is one batch and a follower's fetch hands out whole batches, the
	// first even past replica.fetch.max.bytes (LogSegment.read). Before, with message format v1
	// uncompressed, every record is its own message.
	recordBatches bool
	// recovery: a log's recovery point after a start without the clean-shutdown marker (package
	// broker's recovery_point.go): the checkpoint's as it is (0.10.2.2, 0.11.0.2 Log.recoverLog),
	// the LEO (2.1.1 Log.recoverLog), or the checkpoint's capped at the LEO (3.7.0 LogLoader).
	recovery brk.RecoveryRule
	// checkpointOnlyWhenTruncated: LogManager.truncateTo writes the recovery-point checkpoint
	// only when a log was truncated (2.1.1, 3.7.0); before, after every call (0.10.2.2, 0.11.0.2).
	checkpointOnlyWhenTruncated bool
	// appendChecksFetchesFirst: a leader's append checks the fetch purgatory before its HW moves,
	// so a fetch it completes carries the old HW (Partition.appendRecordsToLeader in 0.10.2.2 and
	// 0.11.0.2; 2.1.1 checks after, tryCompleteDelayedRequests or tryCompleteDelayedFetch).
	appendChecksFetchesFirst bool
	// purgatoryAfterProduce: the purgatory checks an append sets off run after the produce is
	// parked, produces before fetches (ReplicaManager.addCompletePurgatoryAction on the action
	// queue, 3.7.0); before, appendRecordsToLeader runs them, fetches first, before the produce
	// parks.
	purgatoryAfterProduce bool
	// stopReplicaPartitionErrors: a StopReplica's answer names a replica on an offline log
	// directory KAFKA_STORAGE_ERROR, and leaves it alone (ReplicaManager.stopReplicas'
	// HostedPartition.Offline case, 2.6 with KIP-570's StopReplica v3, and 3.7.0). Before, a stop
	// that deletes nothing answers NONE for every partition (2.1.1 stopReplicas).
	stopReplicaPartitionErrors bool
	// consumerLeaderEpoch: a consumer's Fetch carries the leader epoch its metadata names for the
	// partition (KIP-320's client part, 2.3: Fetcher.prepareFetchRequests, 3.7.0
	// AbstractFetch.prepareFetchRequests: position.currentLeader.epoch), so a broker that has not
	// heard of that epoch answers UNKNOWN_LEADER_EPOCH and one past it FENCED_LEADER_EPOCH
	// (Partition.checkCurrentLeaderEpoch) before it looks at whether it leads. Before (0.10.2.2,
	// 0.11.0.2, 2.1.1: Optional.empty()), none: only leadership is checked.
	consumerLeaderEpoch bool
	// endTruncationTrimsEpochCache: a truncation at or past the log's end still removes the
	// leader-epoch cache's entries from the LEO on (Log.truncateTo from 2.7, KAFKA-10706). Before
	// (0.11.0.2, 2.1.1 Log.truncateTo: "has no effect"), it returns at once: the entry (epoch, LEO)
	// a leader wrote at its election (or re-election) without appending stays after it became a
	// follower, and a follower that then asks about it again gets the same answer for ever
	// (AbstractFetcherThread.getOffsetTruncationState's intermediate truncation).
	endTruncationTrimsEpochCache bool
	// epochCacheOnlyNewer: a follower's fetched batch enters its leader-epoch cache only with an
	// epoch above the latest, at or after its start (0.11.0.2 LeaderEpochFileCache.assign); from
	// 2.1 (KAFKA-7415, truncateAndAppend) an older epoch replaces the entries from its epoch or
	// start offset on. It matters after a divergence (KAFKA-6361): a follower that keeps records
	// of a later epoch and then appends the leader's older-epoch records.
	epochCacheOnlyNewer bool
	// sessionKeepsLeaderEpoch: a fetch session keeps the currentLeaderEpoch of its partitions, so
	// an incremental fetch is fenced (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) as a full one is
	// (KAFKA-9338, 2.5; 3.7.0 CachedPartition.leaderEpoch). Before (2.1.1 CachedPartition.reqData:
	// Optional.empty()), only the full fetch that created the session is checked: an incremental
	// fetch in an older epoch is read and answered as any other.
	sessionKeepsLeaderEpoch bool
	// registerBeforeController: a starting broker registers in ZooKeeper before its controller
	// runs for election (KafkaServer.startup from 1.1, KAFKA-6320: zkClient.registerBrokerInZk,
	// then kafkaController.startup()), so a broker that finds no controller takes over counting
	// itself alive. Before, 0.10.2.2's KafkaServer.startup calls kafkaController.startup() (whose
	// ZookeeperLeaderElector.startup elects and runs onControllerFailover in the call) before
	// kafkaHealthcheck.startup() registers it, and its SessionExpirationListener re-elects before
	// KafkaHealthcheck's re-registers after a session expiry (zkclient's listeners in subscription
	// order): the new controller counts itself dead, finds the partitions it led offline
	// (PartitionStateMachine.initializePartitionState), and elects them only at the broker change
	// its own registration sets off (onBrokerStartup): one leader-epoch bump more
	// (controller.Controller.ElectBeforeRegistration). 0.11.0.2 keeps that code order but runs
	// the election on the controller's event thread while startup goes on to register: a race
	// of some 13 ZooKeeper round trips on the main thread (ProducerIdManager's block, the
	// DynamicConfigManager's reads) against some 15 on the controller's before it reads
	// /brokers/ids (its listeners, the controller epoch), taken as won by the registration (the
	// engine registers first).
	registerBeforeController bool
	// leaderRecovery: an unclean election marks the partition RECOVERING until its leader's first
	// accepted AlterPartition (KIP-704, IBP 3.2: Election.leaderForOffline, KafkaController
	// .tryProcessAlterPartition; controller.Era.LeaderRecovery). Before 3.2 no partition state
	// carries it: the page shows no "recovering".
	leaderRecovery bool
	// partitionFailsAlone: an error while a follower processes a partition's fetched data (its
	// Log.append refusing a batch that starts below its log end, after a Fetch from inside a
	// batch; "Offset mismatch") marks only that partition failed (AbstractFetcherThread
	// .processFetchRequest's markPartitionFailed, 2.3, KIP-461, KAFKA-8346). Before, the catch
	// rethrows it as a KafkaException and the fetcher thread dies (brk.FetcherRules
	// .ErrorKillsThread).
	partitionFailsAlone bool
	// appendFromLogStart: a follower's empty log handed a batch that starts below its log start
	// and reaches it starts at the batch (Partition.appendRecordsToFollowerOrFutureReplica,
	// KAFKA-6975, 2.1.0).
	appendFromLogStart bool
	// updateMetadataNamesPartitions: an UpdateMetadata the controller sends outside a
	// LeaderAndIsr batch carries only the partitions it names, none for an empty set, and a
	// started broker's existing peers get one without partition states (KAFKA-7537, 2.2:
	// addUpdateMetadataRequestForBrokers, onBrokerStartup); before, an empty set meant every
	// partition (controller.Era.UpdateMetadataNamesPartitions).
	updateMetadataNamesPartitions bool
	// offlineUpdateMetadataOnlyWithoutChange: onReplicasBecomeOffline's own UpdateMetadata goes only
	// when no replica went offline and no election succeeded (KAFKA-13225, 3.1); before, whenever no
	// partition lost its leader (controller.Era.OfflineUpdateMetadataOnlyWithoutChange).
	offlineUpdateMetadataOnlyWithoutChange bool
	// failoverDeletesIsrChangeNotifications: a new controller deletes the ISR-change
	// notifications waiting in ZooKeeper without reading them (onControllerFailover's
	// deleteIsrChangeNotifications, 1.1, KAFKA-5642's rewrite; 2.1.1, 3.7.0); before (0.10.2.2,
	// 0.11.0.2) they wait for the next one (controller.Era.FailoverDeletesIsrChangeNotifications).
	failoverDeletesIsrChangeNotifications bool
}

func eraFor(version string) era {
	switch version {
	case "0.10.2":
		return era{version: version, appendChecksFetchesFirst: true}
	case "0.11.0":
		return era{version: version, registerBeforeController: true, epochRequests: true, emptyCacheAsks: true, recordBatches: true, appendChecksFetchesFirst: true,
			unknownProducerError: ErrOutOfOrderSequenceNumber, idempotentOneInFlight: true,
			epochCacheOnlyNewer: true}
	case "2.1":
		return era{version: version, registerBeforeController: true, epochRequests: true, epochAnswerNamesEpoch: true, fencing: true,
			keepLastIsrMember: true, followerRestartsOnNewEpoch: true, assignEpochOnElection: true,
			expandNeedsEpochStart: true, fetchSessions: true, outOfRangeNeverFatal: true, logDirFailureHandling: true,
			levelFollowerStaysInIsr: true, uncleanEnableElects: true, notLeaderForUnknownLocal: true,
			fetcherShutdownClosesClient: true, preferredReelectsLeader: true, groupByScala: controller.GroupByScala212,
			rebalanceBatchesPerBroker: true, controlledShutdownBatched: true, stopReplicaPerPartition: true,
			producerRetries: true, recordBatches: true, recovery: brk.RecoveryAtLogEnd, checkpointOnlyWhenTruncated: true,
			unknownProducerError: ErrUnknownProducerID, sequenceRetries: true, appendFromLogStart: true,
			failoverDeletesIsrChangeNotifications: true}
	default:
		return era{version: "3.7", registerBeforeController: true, truncateOnFetch: true, epochRequests: true, epochAnswerNamesEpoch: true,
			fencing: true, minIsrGatesHW: true, keepLastIsrMember: true, failoverOfflinesDeadReplicas: true,
			followerRestartsOnNewEpoch: true, assignEpochOnElection: true, expandNeedsEpochStart: true,
			alterPartition: true, isrEligibility: true, brokerEpochs: true, fetchSessions: true,
			sessionTouchedByFetch: true, outOfRangeNeverFatal: true, logDirFailureHandling: true,
			minIsrCappedAtReplicas: true, levelFollowerStaysInIsr: true, noBackoffAfterLastShutdownAttempt: true,
			notLeaderOrFollowerName: true, uncleanEnableElects: true, notLeaderForUnknownLocal: true,
			noAwaitAfterFailedFetch: true, truncationClampsHW: true, fetcherShutdownClosesClient: true,
			reorderCompletesAtOnce: true, groupByScala: controller.GroupByScala213, recordBatches: true,
			producerRetries: true, retryAtOnceOnNewLeader: true, exponentialRetryBackoff: true,
			sequenceRetries: true, idempotentEpochBump: true, producerTimeoutName: true,
			recovery: brk.RecoveryCheckpointCapped, checkpointOnlyWhenTruncated: true, purgatoryAfterProduce: true,
			stopReplicaPartitionErrors: true, consumerLeaderEpoch: true, hwOnlyWhenFollowerMoved: true,
			reelectionFetchTimeInSyncOnly: true, failedReadKeepsFollower: true, rebalanceBatchesPerBroker: true,
			controlledShutdownBatched: true, controllerIdFromMetadataCache: true,
			endTruncationTrimsEpochCache: true, sessionKeepsLeaderEpoch: true, leaderRecovery: true,
			partitionFailsAlone: true, appendFromLogStart: true,
			updateMetadataNamesPartitions: true, offlineUpdateMetadataOnlyWithoutChange: true,
			failoverDeletesIsrChangeNotifications: true}
	}
}
