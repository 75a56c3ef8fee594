package engine

import "fmt"

// Broker processes and their ZooKeeper sessions. Fault model:
//   - kill: the process dies; memory is gone, the log stays on disk (page cache included) unless
//     loseUnflushed, a power loss, drops every record past the last flush. Kafka tolerates both
//     on at most min.insync.replicas-1 replicas;
//   - the ZooKeeper session of a dead or isolated broker expires after zookeeper.session.timeout.ms;
//     only then does the controller act. A restart before that is a bounce (new broker epoch);
//   - shutdown: controlled shutdown, leadership moves first, logs are flushed;
//   - failDisk: the log directory fails; its replicas go Offline until the broker restarts (the
//     restart brings the disk back with its data).

// startBroker starts (or restarts) a broker process from its disk state.
func (e *Engine) startBroker(b *broker, restart bool) {
	b.incarnation++
	b.state = brokerRunning
	b.diskFailed = false
	// At the cluster's start there is nothing to forget or recover: the replicas are as
	// buildTopics made them, with empty logs (start.go's bulk path skips this walk).
	b.Started(restart || e.generalStart)
	e.schedule(isrShrinkTask{e.timer(b)}.due(e.now + max(1, e.cfg.ReplicaLagTimeMaxMs/2)))
	if restart {
		e.emit(Event{Type: EvBrokerUp, Broker: Some(b.id),
			Text: fmt.Sprintf("broker %d started from its disk state", b.id)})
	}
	if !b.isolated {
		e.register(b)
	}
}

// sessionExpire is broker b's session expiry timer (generation gen). A broker restarted before
// broker epochs waits for its old session's expiry to start (restart).
func (e *Engine) sessionExpire(b int32, gen uint64) {
	if !e.expireSession(b, gen) {
		return
	}
	if br := e.brokers[b]; br.startsOnExpiry {
		br.startsOnExpiry = false
		e.startBroker(br, true)
	}
}

// kill crashes a broker; with loseUnflushed its machine loses power too.
func (e *Engine) kill(b *broker, loseUnflushed bool) {
	b.state = brokerDead
	b.Stopped()
	cause := "process killed"
	if loseUnflushed {
		cause = "power loss: unflushed records dropped"
	}
	e.emit(Event{Type: EvBrokerDown, Broker: Some(b.id), Reason: cause,
		Text: fmt.Sprintf("broker %d is down (%s)", b.id, cause)})
	if loseUnflushed {
		b.LosePageCache()
	}
	e.forgetRequestsOf(b.id)
	e.resetRequestsTo(b.id)
	e.disconnect(b.id)
}

// restart starts a dead broker again. Before broker epochs (KIP-380, 2.2) a broker restarted while
// its old ZooKeeper session lives fails to register (NodeExists: "you have shutdown this broker and
// restarted it faster than the zookeeper timeout") and exits; the engine starts it when that
// session expires, as a supervisor restarting it would, so the controller sees a death and then a
// new broker, never a bounce.
func (e *Engine) restart(b *broker) {
	if !e.era.brokerEpochs && e.zk.registered(b.id) {
		if !b.startsOnExpiry {
			b.startsOnExpiry = true
			e.emit(Event{Type: EvBrokerUp, Broker: Some(b.id), Reason: "NodeExists",
				Text: fmt.Sprintf("broker %d cannot register: its old ZooKeeper session is still alive (NodeExists); before broker epochs (KIP-380, Kafka 2.2) it exits, and starts again once that session expires", b.id)})
		}
		return
	}
	e.startBroker(b, true)
}

// beginShutdown is a controlled shutdown: ask the controller to move leadership, then stop.
func (e *Engine) beginShutdown(b *broker) {
	b.state = brokerShuttingDown
	b.shutdownAttempts = 0
	e.emit(Event{Type: EvShutdown, Broker: Some(b.id),
		Text: fmt.Sprintf("broker %d begins a controlled shutdown", b.id)})
	e.askControlledShutdown(b)
}

// askControlledShutdown is one attempt of KafkaServer.controlledShutdown. The controller's own
// broker asks itself (over loopback in Kafka; at once here).
func (e *Engine) askControlledShutdown(b *broker) {
	b.shutdownAttempts++
	if remaining, ok := e.shutdownInProcess(b.id); ok {
		e.controlledShutdownAnswered(b, ErrNone, remaining)
		return
	}
	c := e.metadata.activeController()
	if c < 0 {
		e.finishShutdown(b)
		return
	}
	e.send(&Message{Type: MsgControlledShutdown, From: b.id, To: c,
		ControlledShutdown: &ControlledShutdownRequest{BrokerID: b.id, BrokerEpoch: b.brokerEpoch}})
}

func (e *Engine) handleControlledShutdownResponse(b *broker, m *Message) {
	resp := m.ControlledShutdownResp
	e.controlledShutdownAnswered(b, resp.Error, resp.Remaining)
}

// controlledShutdownAnswered stops the broker once the controller moved every leadership, or after
// controlled.shutdown.max.retries attempts with controlled.shutdown.retry.backoff.ms between them
// (KafkaServer.controlledShutdown): a partition without another ISR member stays led by it until
// then, and the broker stops anyway.
func (e *Engine) controlledShutdownAnswered(b *broker, err KafkaError, remaining []TP) {
	if b.state != brokerShuttingDown {
		return
	}
	if err == ErrNone && len(remaining) == 0 {
		e.finishShutdown(b)
		return
	}
	if b.shutdownAttempts >= int(e.cfg.ControlledShutdownMaxRetries) {
		if e.sleepsAfterLastShutdownAttempt() {
			// The backoff after the last failed attempt too; shutdownRetry then stops the broker.
			e.emit(Event{Type: EvShutdown, Broker: Some(b.id), Reason: "retry",
				Text: fmt.Sprintf("broker %d's controlled shutdown attempt %d (the last): %d partitions still led; it stops after %d ms", b.id, b.shutdownAttempts, len(remaining), e.cfg.ControlledShutdownRetryBackoffMs)})
			e.schedule(shutdownRetry{e.timer(b)}.due(e.now + max(1, e.cfg.ControlledShutdownRetryBackoffMs)))
			return
		}
		e.stopAfterAttempts(b, len(remaining))
		return
	}
	why := fmt.Sprintf("%d partitions still led (no other ISR member to take them)", len(remaining))
	if err != ErrNone {
		why = err.String()
	}
	e.emit(Event{Type: EvShutdown, Broker: Some(b.id), Reason: "retry",
		Text: fmt.Sprintf("broker %d's controlled shutdown attempt %d: %s; retrying in %d ms", b.id, b.shutdownAttempts, why, e.cfg.ControlledShutdownRetryBackoffMs)})
	e.schedule(shutdownRetry{e.timer(b)}.due(e.now + max(1, e.cfg.ControlledShutdownRetryBackoffMs)))
}

func (e *Engine) shutdownRetry(b *broker) {
	if b.state != brokerShuttingDown {
		return
	}
	if b.shutdownAttempts >= int(e.cfg.ControlledShutdownMaxRetries) {
		e.stopAfterAttempts(b, -1) // the backoff after the last attempt is over (before 3.1)
		return
	}
	e.askControlledShutdown(b)
}

// stopAfterAttempts stops a broker whose controlled-shutdown attempts all failed, leaving
// partitions (led, or -1: not known here) behind.
func (e *Engine) stopAfterAttempts(b *broker, led int) {
	text := fmt.Sprintf("broker %d stops anyway after %d controlled-shutdown attempts (%d partitions still led)", b.id, b.shutdownAttempts, led)
	if led < 0 {
		text = fmt.Sprintf("broker %d stops anyway after %d controlled-shutdown attempts and the backoff after the last", b.id, b.shutdownAttempts)
	}
	e.emit(Event{Type: EvShutdown, Broker: Some(b.id), Reason: "retries exhausted", Text: text})
	e.finishShutdown(b)
}

// sleepsAfterLastShutdownAttempt: KafkaServer.controlledShutdown sleeps
// controlled.shutdown.retry.backoff.ms after every failed attempt, the last one included
// (`if (!shutdownSucceeded) { Thread.sleep(config.controlledShutdownRetryBackoffMs) ... }` in
// 0.10.2.2, 0.11.0.2 and 2.1.1), so a broker whose attempts all fail stops one backoff after its
// last attempt. From 3.1.0 (#11246) it sleeps only while retries remain (`if (!shutdownSucceeded &&
// remainingRetries > 0)`, 3.7.0).
func (e *Engine) sleepsAfterLastShutdownAttempt() bool {
	return !e.era.noBackoffAfterLastShutdownAttempt
}

// finishShutdown stops the broker cleanly: fetchers stop, logs are flushed, HWs checkpointed,
// and the ZooKeeper session is closed.
func (e *Engine) finishShutdown(b *broker) {
	if b.state != brokerShuttingDown {
		return
	}
	b.ShutDown() // logs flushed, HWs checkpointed, fetchers and sessions gone
	b.state = brokerDead
	e.emit(Event{Type: EvBrokerDown, Broker: Some(b.id), Reason: "controlled shutdown",
		Text: fmt.Sprintf("broker %d stopped (controlled shutdown; logs flushed)", b.id)})
	e.forgetRequestsOf(b.id)
	e.resetRequestsTo(b.id)
	e.deregister(b.id)
}

// isolate cuts every link of a broker, ZooKeeper's included.
func (e *Engine) isolate(b *broker) {
	b.isolated = true
	e.emit(Event{Type: EvIsolate, Broker: Some(b.id),
		Text: fmt.Sprintf("broker %d isolated: its links and its ZooKeeper connection are cut", b.id)})
	e.disconnect(b.id)
}

// heal restores a broker's links (or every link) to the default: up, default latency. A broker whose session expired meanwhile
// registers again with a new broker epoch.
func (e *Engine) heal(id *int32) {
	var ids []int32
	for i := range e.brokers {
		if id == nil || *id == int32(i) {
			ids = append(ids, int32(i))
		}
	}
	e.net.Heal(id) // back to the default latency, up; new connections, so a new FIFO order
	for _, i := range ids {
		b := e.brokers[i]
		was := b.isolated
		b.isolated = false
		if was {
			e.emit(Event{Type: EvHeal, Broker: Some(i), Text: fmt.Sprintf("broker %d healed: its links are back", i)})
		}
		if b.state == brokerDead || !was {
			continue
		}
		if e.reconnect(i) { // its session lives: connected again
			continue
		}
		e.register(b)
	}
	if id == nil {
		e.emit(Event{Type: EvHeal, Text: "every link healed"})
	}
	e.releaseHeld()
}

// failDisk takes a broker's log directory offline.
func (e *Engine) failDisk(b *broker) {
	b.diskFailed = true
	if !e.era.logDirFailureHandling {
		// Before KIP-112 the broker halts (Exit.halt: no controlled shutdown, its ZooKeeper
		// session lives until it expires). Simplification: 0.10.2 and 0.11.0 halt at the first
		// write that fails (an append, the HW checkpoint within
		// replica.high.watermark.checkpoint.interval.ms); the engine halts at once.
		e.emit(Event{Type: EvLogDirFailure, Broker: Some(b.id), Reason: "halt",
			Text: fmt.Sprintf("broker %d's log directory failed: before KIP-112 (inter.broker.protocol.version 1.0) the broker halts", b.id)})
		e.kill(b, false)
		return
	}
	n := b.FailLogDir()
	e.emit(Event{Type: EvLogDirFailure, Broker: Some(b.id),
		Text: fmt.Sprintf("broker %d's log directory failed: its %d replicas are Offline", b.id, n)})
	e.handleLogDirFailure(b.id)
}
