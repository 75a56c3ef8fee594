package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The broker's entry points: every message the network delivers to it and every timer of its
// own goes in through one of these, so that a handler is found here, by its message or task,
// and a new request type is one case here and its handling in this package.

// Handle is KafkaApis.handle: the broker's one entry for a message delivered to it, switched on
// its type to the replica manager (the requests a broker answers: Fetch, OffsetsForLeaderEpoch,
// ListOffsets, LeaderAndIsr, StopReplica, UpdateMetadata, Produce) or to the broker's own requester (the answers
// to its fetcher threads' requests, to its AlterPartition and to its controlled shutdown's
// request). In Kafka an answer goes to the NetworkClient callback of the thread that sent the
// request, not through KafkaApis; here the network hands both to the broker, which finds that
// thread (its fetchers by request id), partition (the AlterPartition in flight) or its process
// (kafka_server.go).
//
// It reports whether m was the broker's: the controller's requests (AlterPartition, controlled
// shutdown) and the answers to them (LeaderAndIsr's) are the controller's, which the cluster
// routes there (in Kafka, KafkaApis hands them to the KafkaController of the broker that is
// controller).
func (b *Broker) Handle(m *protocol.Message) bool {
	switch m.Type {
	case protocol.MsgFetch:
		b.rm.FetchMessages(b, m)
	case protocol.MsgFetchResponse:
		if f := b.fetchers.OfRequest(m.ReplyTo); f != nil {
			f.HandleFetchResponse(b, m)
		} else {
			b.stoppedThreadSettled(m.ReplyTo)
		}
	case protocol.MsgProduce:
		b.rm.HandleProduce(b, m)
	case protocol.MsgOffsetsForEpoch:
		b.rm.HandleOffsetsForEpoch(b, m)
	case protocol.MsgOffsetsForEpochResponse:
		if f := b.fetchers.OfRequest(m.ReplyTo); f != nil {
			f.HandleOffsetsForEpochResponse(b, m)
		} else {
			b.stoppedThreadSettled(m.ReplyTo)
		}
	case protocol.MsgListOffsets:
		b.rm.HandleListOffsets(b, m)
	case protocol.MsgListOffsetsResponse:
		if f := b.fetchers.OfRequest(m.ReplyTo); f != nil {
			f.HandleListOffsetsResponse(b, m)
		} else {
			b.stoppedThreadSettled(m.ReplyTo)
		}
	case protocol.MsgLeaderAndIsr:
		b.handleLeaderAndIsr(m)
	case protocol.MsgStopReplica:
		b.handleStopReplica(m)
	case protocol.MsgUpdateMetadata:
		b.handleUpdateMetadata(m)
	case protocol.MsgAlterPartitionResponse:
		b.rm.HandleAlterPartitionResponse(b, m)
	case protocol.MsgControlledShutdownResp:
		b.controlledShutdownAnswered(m.ControlledShutdownResp.Error, m.ControlledShutdownResp.Remaining)
	default:
		return false
	}
	return true
}

// handleLeaderAndIsr is KafkaApis.handleLeaderAndIsrRequest: the replica manager applies it and
// the broker answers the controller that sent it.
func (b *Broker) handleLeaderAndIsr(m *protocol.Message) {
	if b.waitsBehindHeldLeaderAndIsr(m) { // replicaStateChangeLock is held
		return
	}
	resp := b.rm.BecomeLeaderOrFollower(b, m.LeaderAndIsr)
	answer := &protocol.Message{Type: protocol.MsgLeaderAndIsrResponse, From: b.id, To: m.From, ReplyTo: m.ID,
		LeaderAndIsrResponse: resp}
	if waits := b.rm.shutdownWaits; len(waits) > 0 {
		b.rm.shutdownWaits = nil
		b.lisr = &heldLeaderAndIsr{answer: answer, waits: waits}
		return
	}
	b.Send(answer)
}

// handleStopReplica is KafkaApis.handleStopReplicaRequest: the replica manager applies it and the
// broker answers the controller that sent it. ReplicaManager.stopReplicas takes
// replicaStateChangeLock, so behind a held LeaderAndIsr it waits too (in order).
func (b *Broker) handleStopReplica(m *protocol.Message) {
	if b.waitsBehindHeldLeaderAndIsr(m) {
		return
	}
	resp := b.rm.HandleStopReplica(b, m.StopReplica)
	b.Send(&protocol.Message{Type: protocol.MsgStopReplicaResponse, From: b.id, To: m.From, ReplyTo: m.ID,
		StopReplicaResponse: resp})
}

// handleUpdateMetadata is KafkaApis.handleUpdateMetadataRequest: the replica manager checks it
// (ReplicaManager.maybeUpdateMetadataCache) and the broker answers the controller that sent it.
// maybeUpdateMetadataCache takes replicaStateChangeLock, so behind a held LeaderAndIsr it waits
// too (in order).
func (b *Broker) handleUpdateMetadata(m *protocol.Message) {
	if b.waitsBehindHeldLeaderAndIsr(m) {
		return
	}
	resp := b.rm.HandleUpdateMetadata(b, m.UpdateMetadata)
	b.Send(&protocol.Message{Type: protocol.MsgUpdateMetadataResponse, From: b.id, To: m.From, ReplyTo: m.ID,
		UpdateMetadataResponse: resp})
}

// waitsBehindHeldLeaderAndIsr queues controller request m behind a held LeaderAndIsr, if there
// is one (replicaStateChangeLock), and reports whether it did.
func (b *Broker) waitsBehindHeldLeaderAndIsr(m *protocol.Message) bool {
	if b.lisr == nil {
		return false
	}
	b.lisr.queued = append(b.lisr.queued, m)
	return true
}

// heldLeaderAndIsr is a LeaderAndIsr whose handling waits for the fetcher threads it stopped,
// before 1.1: ReplicaManager.becomeLeaderOrFollower calls shutdownIdleFetcherThreads inside
// replicaStateChangeLock (0.10.2.2 l.652, l.710), and AbstractFetcherThread.shutdown's
// awaitShutdown waits for a thread blocked in its request (not interruptible, its client not
// closed: ReplicaFetcherThread.initiateShutdown closes it from 1.1, KAFKA-6051) until the answer
// comes or the request times out. The partitions already changed role; the answer to the
// controller waits (waits: the requests still in flight), and so does every LeaderAndIsr after
// it (queued), with any StopReplica or UpdateMetadata (the same lock).
type heldLeaderAndIsr struct {
	answer *protocol.Message
	waits  []uint64
	queued []*protocol.Message
}

// stoppedThreadSettled: a stopped fetcher thread's request id got its answer or failed. When
// none is left in flight, the held LeaderAndIsr is answered and the queued ones run.
func (b *Broker) stoppedThreadSettled(id uint64) {
	l := b.lisr
	if l == nil {
		return
	}
	i := slices.Index(l.waits, id)
	if i < 0 {
		return
	}
	l.waits = slices.Delete(l.waits, i, i+1)
	if len(l.waits) > 0 {
		return
	}
	b.lisr = nil
	b.Send(l.answer)
	for k, m := range l.queued {
		switch m.Type {
		case protocol.MsgStopReplica:
			b.handleStopReplica(m) // never held itself
			continue
		case protocol.MsgUpdateMetadata:
			b.handleUpdateMetadata(m) // nor is this
			continue
		}
		b.handleLeaderAndIsr(m)
		if b.lisr != nil { // held again: the rest wait behind it
			b.lisr.queued = append(b.lisr.queued, l.queued[k+1:]...)
			return
		}
	}
}

// RequestFailed is a request the broker sent that got no answer (the connection was refused or
// reset, or the request timed out): NetworkClient's disconnect or timeout, handed to the thread
// that sent it (a fetcher thread's Fetch, OffsetsForLeaderEpoch or ListOffsets), to the
// partition whose AlterPartition it was, or to the controlled shutdown that asked. It reports
// whether req was the broker's (false: the controller's LeaderAndIsr).
func (b *Broker) RequestFailed(req *protocol.Message) bool {
	switch req.Type {
	case protocol.MsgFetch, protocol.MsgOffsetsForEpoch, protocol.MsgListOffsets:
		if f := b.fetchers.OfRequest(req.ID); f != nil {
			f.RequestFailed(b, req)
		} else {
			b.stoppedThreadSettled(req.ID)
		}
	case protocol.MsgAlterPartition:
		b.rm.AlterPartitionFailed(b, req)
	case protocol.MsgControlledShutdown:
		b.controlledShutdownAnswered(protocol.ErrRequestTimedOut, nil)
	default:
		return false
	}
	return true
}

// The broker's timers, each set through its Cluster and fired by the cluster's agenda while the
// broker's incarnation that set it lives (a timer set before a crash does not fire after the
// restart: the cluster drops it).

// FetcherWake is the wake-up of fetcher thread (leader, id), set by its backoff or by its partitions'
// changes (FetcherThread.WakeUp): the thread does a turn of its loop (AbstractFetcherThread
// .doWork) if it still exists and this is its latest wake-up.
func (b *Broker) FetcherWake(leader, id int32) {
	f := b.fetchers.For(leader, id)
	if f == nil || !f.Woken(b.Now()) {
		return
	}
	f.DoWork(b)
}

// DelayedFetchExpired is a parked fetch's max wait (the fetch purgatory's expiration reaper,
// DelayedFetch.onExpiration), seq the park's number when its timer was set.
func (b *Broker) DelayedFetchExpired(df *DelayedFetch, seq uint64) {
	b.rm.DelayedFetchExpired(b, df, seq)
}

// DelayedProduceExpired is a parked produce's request timeout (DelayedProduce.onExpiration).
func (b *Broker) DelayedProduceExpired(dp *DelayedProduce) { b.rm.DelayedProduceExpired(b, dp) }

// ZooKeeperReconnected is the broker's ZooKeeper client connected again (a heal, on its session
// or a new one): what waited for it goes on (ReplicaManager.ZooKeeperReconnected).
func (b *Broker) ZooKeeperReconnected() {
	b.rm.ZooKeeperReconnected(b)
	if b.shutdownAwaitsZk {
		// The controlled-shutdown attempt's read of the controller answers (before 3.0).
		b.shutdownAwaitsZk = false
		if b.state == ShuttingDown {
			b.sendControlledShutdown()
		}
	}
}

// IsrExpiration is the replica manager's "isr-expiration" task (maybeShrinkIsr), every half
// replica.lag.time.max.ms from the broker's start.
func (b *Broker) IsrExpiration() { b.rm.IsrShrinkTask(b) }

// IsrChangePropagation is the replica manager's "isr-change-propagation" task
// (maybePropagateIsrChanges), every 2500 ms from the broker's start, before IBP 2.7.
func (b *Broker) IsrChangePropagation() { b.rm.IsrChangePropagationTask(b) }

// HighWatermarkCheckpoint is the replica manager's "highwatermark-checkpoint" task, every
// replica.high.watermark.checkpoint.interval.ms from its first LeaderAndIsr.
func (b *Broker) HighWatermarkCheckpoint() { b.rm.CheckpointTask(b) }

// AlterPartitionResend is the retry of pid's AlterPartition after retry.backoff.ms (the
// AlterPartitionManager's resend of an unanswered or retriable change).
func (b *Broker) AlterPartitionResend(pid int32) { b.rm.ResendAlterPartition(b, pid) }
