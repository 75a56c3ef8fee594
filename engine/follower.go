package engine

import (
	"fmt"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// follower is broker b's brk.Follower: what its fetcher threads ask of the rest of the broker
// (its replicas and the replica manager's changes to them, with their events) and of the cluster
// (time, the era's rules, the network, timers). Each broker has one, made with it, so a thread's
// turn allocates none.
type follower struct {
	e *Engine
	b *broker
}

func (h *follower) Now() int64         { return h.e.now }
func (h *follower) Dead() bool         { return h.b.state == brokerDead }
func (h *follower) BrokerID() int32    { return h.b.id }
func (h *follower) BrokerEpoch() int64 { return h.b.brokerEpoch }
func (h *follower) PidOf(tp TP) int32  { return h.e.pidOf(tp) }
func (h *follower) TP(pid int32) TP    { return h.e.partitions[pid].tp() }
func (h *follower) Send(m *Message)    { h.e.send(m) }

func (h *follower) Replica(pid int32) *brk.Partition { return &h.b.replicaOf(pid).Partition }

// Rules reads the era and the config at each turn: a config action can change the settings.
func (h *follower) Rules() brk.FetcherRules {
	e := h.e
	return brk.FetcherRules{EpochRequests: e.era.epochRequests, EmptyCacheAsks: e.era.emptyCacheAsks,
		Fencing: e.era.fencing, TruncateOnFetch: e.era.truncateOnFetch, Sessions: e.era.fetchSessions,
		BackoffMs: max(1, e.cfg.ReplicaFetchBackoffMs), MaxWaitMs: e.cfg.ReplicaFetchWaitMaxMs,
		MinBytes: e.cfg.ReplicaFetchMinBytes, OutOfRangeFatal: !e.era.outOfRangeNeverFatal,
		UncleanElection: e.cfg.UncleanLeaderElectionEnable, WalkAll: e.followerWalkAll, Check: e.followerCheck}
}

func (h *follower) ScheduleWake(t *brk.FetcherThread, at int64) {
	h.e.schedule(fetcherWake{h.e.timer(h.b), fetcherKey(t.Leader(), t.ID())}.due(at))
}

func (h *follower) Truncate(pid int32, offset int64, why string) {
	h.e.truncate(h.b.replicaOf(pid), offset, why)
}

// TruncateFullyAndStartAt empties the log and starts it at offset (UnifiedLog
// .truncateFullyAndStartAt, which moves the high watermark to the new start).
func (h *follower) TruncateFullyAndStartAt(pid int32, offset int64, why string) {
	e, r := h.e, h.b.replicaOf(pid)
	dropped := r.Log().Records()
	oldLEO, oldHW := r.Log().LogEndOffset(), r.Log().HighWatermark()
	r.Log().TruncateFullyAndStartAt(offset)
	e.sessionsChanged(r)
	e.logStartMoved(r)
	e.emitTruncate(r, oldLEO, dropped, why)
	if hw := r.Log().HighWatermark(); hw != oldHW {
		e.hwChanged(r, oldHW, "follower")
	}
}

func (h *follower) Appended(pid int32, n int) { h.e.afterAppend(h.b.replicaOf(pid), n) }

// LogStartMoved tells the leader's sessions caching the partition (a Fetch answer carries the
// log start) and the broker's threads fetching it (a Fetch carries it too).
func (h *follower) LogStartMoved(pid int32) {
	r := h.b.replicaOf(pid)
	h.e.sessionsChanged(r)
	h.e.logStartMoved(r)
}

func (h *follower) SetHighWatermark(pid int32, hw int64) {
	h.e.setFollowerHW(h.b.replicaOf(pid), hw)
}

func (h *follower) Failed(pid int32, why string) {
	p := h.e.partitions[pid]
	h.e.emit(Event{Type: EvFailed, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: why,
		Text: fmt.Sprintf("broker %d stopped fetching %s: %s", h.b.id, p.name(), why)})
}

func (h *follower) FetcherStarted(id, leader int32) {
	h.e.emit(Event{Type: EvFetcher, Broker: Some(h.b.id), Reason: "started",
		Text: fmt.Sprintf("broker %d started fetcher %d for leader broker %d", h.b.id, id, leader)})
}

func (h *follower) FetcherStopped(id, leader int32) {
	h.e.emit(Event{Type: EvFetcher, Broker: Some(h.b.id), Reason: "stopped",
		Text: fmt.Sprintf("broker %d stopped idle fetcher %d for leader broker %d", h.b.id, id, leader)})
}

// Exit is the broker process exiting on a thread's fatal error. Kafka's exit runs the shutdown
// hook, KafkaServer.shutdown, whose first step is the controlled shutdown; the engine's
// beginShutdown is that, then the stop. Simplification: in 0.10.2 the exit is System.exit called
// from the fetcher thread, which the hook's fetcher shutdown then waits for, so the broker could
// hang after its controlled shutdown with its ZooKeeper session alive (KAFKA-4039, fixed in 0.11
// by FatalExitError); the engine stops it as 0.11 does.
func (h *follower) Exit(pid int32, why string) {
	p := h.e.partitions[pid]
	h.e.emit(Event{Type: EvFailed, Broker: Some(h.b.id), Topic: p.topic, Partition: Some(p.index), Reason: "fatal",
		Text: fmt.Sprintf("broker %d exits: %s: %s", h.b.id, p.name(), why)})
	if h.b.state == brokerRunning {
		h.e.beginShutdown(h.b)
	}
}
