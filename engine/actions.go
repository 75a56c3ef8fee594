package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/highwater-sim/highwater/engine/netsim"
)

// Apply runs an action at the current time. It returns an error only for misuse (an id out of
// range, an action that needs the run's expectations); an action on a broker already in the
// state it asks for is a narrated no-op (noOp), and Kafka-level
// outcomes (a failed election, a produce error) are events.
func (e *Engine) Apply(a Action) error {
	if err := validateAction(a, len(e.brokers), e.topicPartitions); err != nil {
		return err
	}
	if a.Do == "expect" {
		return errors.New("expect: checks belong to a scenario run (use Run or CheckExpect), not Apply")
	}
	// An action's sends, timers, events and releases of held messages go through the outbox
	// like a handler's, carried out in the order it made them when it returns.
	e.out.active = true
	defer e.drainOutbox()
	var b *broker
	if a.Broker != nil {
		b = e.brokers[*a.Broker]
	}
	switch a.Do {
	case "produce":
		count, acks := int64(1), Acks(-1)
		if a.Count != nil {
			count = *a.Count
		}
		if a.Acks != nil {
			acks = *a.Acks
		}
		e.produceOn(e.pidOf(TP{Topic: a.Topic, Partition: *a.Partition}), count, acks)
	case "consume":
		count := int64(0)
		if a.Count != nil {
			count = *a.Count
		}
		e.consume(e.partitionOf(a.Topic, *a.Partition), count)
	case "kill":
		if b.Dead() && b.startsOnExpiry {
			b.startsOnExpiry = false // killed before it could start: its pending start is off
			how := "killed again"
			if a.LoseUnflushed {
				how = "killed again, and its machine lost power"
			}
			e.emit(Event{Type: EvBrokerDown, Broker: Some(b.id), Reason: "start cancelled",
				Text: fmt.Sprintf("broker %d will not start when its old session expires: %s", b.id, how)})
			if a.LoseUnflushed {
				b.PowerLoss() // its process exited (NodeExists), but its page cache was still there
			}
			return nil
		}
		if b.Dead() {
			// Nothing to kill; a power loss still reaches the machine, whose page cache outlived
			// the process (a crash, then the power: the records past the last flush go).
			if a.LoseUnflushed {
				e.emit(Event{Type: EvBrokerDown, Broker: Some(b.id), Reason: "power loss",
					Text: fmt.Sprintf("broker %d's machine loses power (its process was already down): records past the last flush are gone", b.id)})
				b.PowerLoss()
				return nil
			}
			e.emit(Event{Type: EvBrokerDown, Broker: Some(b.id), Reason: "already down",
				Text: fmt.Sprintf("broker %d is already down: nothing to kill", b.id)})
			return nil
		}
		e.kill(b, a.LoseUnflushed)
	case "restart":
		if !b.Dead() {
			// A second process finds the log directory locked by the running one
			// (LogManager.lockLogDirs: "Failed to acquire lock") and exits; the broker goes on.
			// The contract lists no error for it (exit 2 is for an invalid file): a no-op.
			e.noOp(EvBrokerUp, b.id, "already running", " is running (or shutting down): a second process cannot lock its log directory, so nothing changes")
			return nil
		}
		e.restart(b)
	case "shutdown":
		if b.Dead() {
			e.noOp(EvShutdown, b.id, "already down", " is already down: nothing to shut down")
			return nil
		}
		if !b.Running() {
			e.noOp(EvShutdown, b.id, "already shutting down", " is already in its controlled shutdown: nothing changes")
			return nil
		}
		e.beginShutdown(b)
	case "isolate":
		if b.isolated {
			e.noOp(EvIsolate, b.id, "already isolated", " is already isolated: nothing changes")
			return nil
		}
		e.isolate(b)
	case "heal":
		e.heal(a.Broker)
	case "link":
		e.setLink(*a.From, *a.To, a.LatencyMs, a.Down)
	case "failDisk":
		if b.DiskFailed() {
			e.noOp(EvLogDirFailure, b.id, "already failed", "'s log directory has already failed: nothing changes")
			return nil
		}
		if b.Dead() {
			// Simplification: a disk that fails while its broker is down is not modelled (Kafka
			// would find the directory offline at the next startup); the step changes nothing.
			e.noOp(EvLogDirFailure, b.id, "broker down", " is down: a disk failing while nothing runs on it is not modelled, so nothing changes")
			return nil
		}
		e.failDisk(b)
	case "elect":
		e.elect(e.partitionOf(a.Topic, *a.Partition), a.Broker, a.Unclean)
	case "config":
		return e.setConfig(a.Set)
	case "caption":
		// A tour's line: it changes nothing in the cluster, only the narration.
		e.emit(Event{Type: EvCaption, Text: a.Text})
	}
	return nil
}

// noOp narrates an action that finds its broker already in the state it asks for: the contract's
// exit codes make no error of it, so the step changes nothing and the trace says so. what follows
// "broker N" in the text (" is …" or "'s …").
func (e *Engine) noOp(typ string, id int32, reason, what string) {
	e.emit(Event{Type: typ, Broker: Some(id), Reason: reason, Text: fmt.Sprintf("broker %d%s", id, what)})
}

func (e *Engine) topicPartitions(name string) int { return e.names.Partitions(name) }

func (e *Engine) setLink(from, to int32, latency *int64, down bool) {
	lat := e.net.SetLink(netsim.Link{From: from, To: to}, latency, down, e.cfg.NetworkLatencyMs)
	state := "up"
	if down {
		state = "down"
	}
	e.emit(Event{Type: EvLink, Broker: Some(from), To: Some(int64(to)), Reason: state,
		Text: fmt.Sprintf("link broker %d → broker %d: %s, latency %d ms", from, to, state, lat)})
	e.releaseHeld()
}

// setConfig changes settings mid-run. The protocol era cannot change once the cluster runs.
func (e *Engine) setConfig(set map[string]json.RawMessage) error {
	next := e.cfg
	for _, name := range sortedKeys(set) {
		if err := next.Set(name, set[name]); err != nil {
			return err
		}
	}
	if next.InterBrokerProtocolVersion != e.cfg.InterBrokerProtocolVersion {
		return errors.New("set.inter.broker.protocol.version: the protocol era is fixed for a run; start a new cluster")
	}
	if err := next.checkIdempotence("set"); err != nil {
		return err
	}
	raw, explicit := set["delivery.timeout.ms"]
	explicit = explicit && !isNull(raw) // null is not given
	if err := next.checkDeliveryTimeout("set", explicit); err != nil {
		return err
	}
	old := e.cfg
	e.cfg = next
	e.setRules()
	e.emit(Event{Type: EvConfig, Text: fmt.Sprintf("config changed: %s", describeSet(set))})
	if next.UncleanLeaderElectionEnable && !old.UncleanLeaderElectionEnable && e.era.uncleanEnableElects {
		e.uncleanElectionEnabled()
	}
	return nil
}

func describeSet(set map[string]json.RawMessage) string {
	s := ""
	for i, k := range sortedKeys(set) {
		if i > 0 {
			s += ", "
		}
		s += k + "=" + string(set[k])
	}
	return s
}
