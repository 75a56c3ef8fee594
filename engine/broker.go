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

// The process's own part (start, crash, controlled shutdown, a failed log directory, an exit on
// a fatal error) is its brk.Broker's (KafkaServer: package broker's kafka_server.go), over its
// cluster (broker_cluster.go: the ZooKeeper registration, the network's part of a gone process,
// the events). Here is the world's part: the incarnation a start begins (whose timers and
// connections are whose), a restart's wait for its old ZooKeeper session before broker epochs,
// and the links' isolation and healing.

// startBroker starts (or restarts) a broker process from its disk state.
func (e *Engine) startBroker(b *broker, restart bool) {
	b.incarnation++
	b.Startup(restart)
}

// sessionExpire is broker b's session expiry timer (generation gen). A broker restarted before
// broker epochs waits for its old session's expiry to start (restart).
func (e *Engine) sessionExpire(b int32, gen uint64) {
	for _, id := range e.expireSession(b, gen) {
		if br := e.brokers[id]; br.startsOnExpiry {
			br.startsOnExpiry = false
			e.startBroker(br, true)
		}
	}
}

// kill crashes a broker; with loseUnflushed its machine loses power too.
func (e *Engine) kill(b *broker, loseUnflushed bool) { b.Crash(loseUnflushed) }

// restart starts a dead broker again. Before broker epochs (KIP-380, 2.2) a broker restarted while
// its old ZooKeeper session lives fails to register (NodeExists: "you have shutdown this broker and
// restarted it faster than the zookeeper timeout") and exits; the engine starts it when that
// session expires, as a supervisor restarting it would, so the controller sees a death and then a
// new broker, never a bounce. From 2.2 the restart is a bounce the controller sees (the contract's
// rule), except for the controller's own broker: no controller is left to see it, and the new
// process cannot register either (3.7.0 KafkaZkClient.CheckedEphemeral.getAfterNodeExists throws
// NODEEXISTS when the znode's owner is an older session: "Fatal error during KafkaServer
// startup"), so it starts when the old session expired too, after the next controller's failover.
func (e *Engine) restart(b *broker) {
	if e.zk.registered(b.id) && (!e.era.brokerEpochs || e.metadata.activeController() == b.id) {
		if !b.startsOnExpiry {
			b.startsOnExpiry = true
			why := "before broker epochs (KIP-380, Kafka 2.2) it exits"
			if e.era.brokerEpochs {
				why = "its old process was the controller, so no controller sees a bounce; it exits"
			}
			e.emit(Event{Type: EvBrokerUp, Broker: Some(b.id), Reason: "NodeExists",
				Text: fmt.Sprintf("broker %d cannot register: its old ZooKeeper session is still alive (NodeExists); %s, and starts again once that session expires", b.id, why)})
			// The failed start had loaded the logs, and its shutdown flushed and closed them.
			b.FailedStart()
		}
		return
	}
	e.startBroker(b, true)
}

// beginShutdown is a controlled shutdown (brk.Broker.Shutdown, KafkaServer.shutdown).
func (e *Engine) beginShutdown(b *broker) { b.Shutdown() }

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
		if b.Dead() || !was {
			continue
		}
		if !e.reconnect(i) { // its session expired meanwhile: a new one
			e.register(b)
		}
		b.ZooKeeperReconnected()
	}
	if id == nil {
		e.emit(Event{Type: EvHeal, Text: "every link healed"})
	}
	e.releaseHeld()
}

// failDisk takes a broker's log directory offline (brk.Broker.LogDirFailure).
func (e *Engine) failDisk(b *broker) { b.LogDirFailure() }
