package broker

import (
	"fmt"
	"strconv"

	"github.com/highwater-sim/highwater/engine/plural"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// Text is the event's one stable text (the narration, and what tests compare), as the broker
// with id broker states it of partition topic-partition (the engine's names, which the broker
// does not keep; none for the broker's own events). A kind made when read (Lazy) reads only the fields the trace keeps and Arg[0:2]: the
// engine makes it from its recorded event. The numerous ones append with strconv rather than
// fmt: a large traced run narrates hundreds of thousands.
func (ev *Event) Text(broker int32, topic string, partition int32) string {
	name := func() string { return topic + "-" + strconv.Itoa(int(partition)) }
	switch ev.Kind {
	case PartitionFailed:
		return fmt.Sprintf("broker %d stopped fetching %s: %s", broker, name(), ev.Reason)
	case FetcherAdded:
		return fmt.Sprintf("broker %d started fetcher %d for leader broker %d", broker, ev.Arg[0], ev.Arg[1])
	case FetcherRemoved:
		return fmt.Sprintf("broker %d stopped idle fetcher %d for leader broker %d", broker, ev.Arg[0], ev.Arg[1])
	case FetcherDied:
		return fmt.Sprintf("broker %d's fetcher %d for leader broker %d died on %s: %s; a KafkaException ends the thread before Kafka 2.3, and fetching of its %s stops until the thread is replaced",
			broker, ev.Arg[0], ev.Arg[1], name(), ev.Reason, plural.Of(ev.Arg[2], "partition"))
	case FatalExit:
		return fmt.Sprintf("broker %d exits: %s: %s", broker, name(), ev.Why)
	case LeaderAndIsrRejected:
		if protocol.KafkaError(ev.Arg[2]) == protocol.ErrStaleBrokerEpoch {
			return fmt.Sprintf("broker %d rejected a LeaderAndIsr for broker epoch %d: it is at broker epoch %d (%s)", broker, ev.Arg[0], ev.Arg[1], ev.Name)
		}
		return fmt.Sprintf("broker %d rejected a LeaderAndIsr from controller epoch %d: it has seen controller epoch %d (%s)", broker, ev.Arg[0], ev.Arg[1], ev.Name)
	case BecameLeader, BecameFollower:
		return roleText(ev, broker, topic, partition)
	case LeaderAppend:
		return appendText(ev, broker, topic, partition)
	case DuplicateBatch:
		return fmt.Sprintf("leader %d found %s's batch already at offsets %d..%d (idempotent producer, a retry): not appended again",
			broker, name(), ev.From.V, ev.To.V-1)
	case IsrChangeAsked:
		return fmt.Sprintf("leader %d asks to %s the ISR of %s: %v → %v", broker, ev.Reason, name(), ev.OldISR, ev.ISR)
	case IsrWriteSkipped:
		why := fmt.Sprintf("cached zkVersion %d, ZooKeeper has %d", ev.Arg[0], ev.Arg[1])
		if ev.Name == "blocked" {
			return fmt.Sprintf("leader %d writes the ISR of %s as %v to ZooKeeper without a connection: the write waits for it, holding the partition's lock", broker, name(), ev.ISR)
		}
		if ev.Arg[2] == 0 {
			why = "no ZooKeeper connection"
		}
		return fmt.Sprintf("leader %d could not %s the ISR of %s to %v in ZooKeeper (%s): skipped", broker, ev.Reason, name(), ev.ISR, why)
	case IsrWritten:
		return fmt.Sprintf("leader %d wrote the ISR of %s to ZooKeeper: %v → %v (zkVersion %d)", broker, name(), ev.OldISR, ev.ISR, ev.Arg[0])
	case Restarted:
		return fmt.Sprintf("broker %d started from its disk state", broker)
	case Crashed:
		return fmt.Sprintf("broker %d is down (%s)", broker, ev.Reason)
	case ShutdownBegan:
		return fmt.Sprintf("broker %d begins a controlled shutdown", broker)
	case ShutdownAttemptFailed:
		attempt, led, backoff := ev.Arg[0], ev.Arg[1], ev.Arg[2]
		if ev.Arg[3] != 0 {
			return fmt.Sprintf("broker %d's controlled shutdown attempt %d (the last): %s still led; it stops after %d ms", broker, attempt, plural.Of(led, "partition"), backoff)
		}
		why := plural.Of(led, "partition") + " still led (no other ISR member to take them)"
		if ev.Why != "" {
			why = ev.Why
		}
		return fmt.Sprintf("broker %d's controlled shutdown attempt %d: %s; retrying in %d ms", broker, attempt, why, backoff)
	case ShutdownGaveUp:
		if ev.Arg[0] < 0 {
			return fmt.Sprintf("broker %d stops without a controlled shutdown (controlled.shutdown.enable false): what it leads stays led by it until the controller hears it is gone", broker)
		}
		if ev.Arg[0] == 0 {
			return fmt.Sprintf("broker %d stops without a controlled shutdown (controlled.shutdown.max.retries 0)", broker)
		}
		if ev.Arg[1] < 0 {
			return fmt.Sprintf("broker %d stops anyway after %s and the backoff after the last", broker, plural.Of(ev.Arg[0], "controlled-shutdown attempt"))
		}
		return fmt.Sprintf("broker %d stops anyway after %s (%s still led)", broker, plural.Of(ev.Arg[0], "controlled-shutdown attempt"), plural.Of(ev.Arg[1], "partition"))
	case ShutdownCompleted:
		if ev.Reason == "clean shutdown" {
			return fmt.Sprintf("broker %d stopped (no controlled shutdown; logs flushed, ZooKeeper session closed)", broker)
		}
		return fmt.Sprintf("broker %d stopped (controlled shutdown; logs flushed)", broker)
	case LogDirFailed:
		if ev.Reason == "halt" {
			return fmt.Sprintf("broker %d's log directory failed: before KIP-112 (inter.broker.protocol.version 1.0) the broker halts", broker)
		}
		return fmt.Sprintf("broker %d's log directory failed: its %s %s Offline", broker, plural.Of(ev.Arg[0], "replica"), plural.Pick(ev.Arg[0], "is", "are"))
	case HighWatermarkMoved:
		return hwText(ev, broker, topic, partition)
	case Truncated:
		return fmt.Sprintf("broker %d truncated %s from offset %d to %d (%s dropped): %s", broker, name(), ev.From.V, ev.To.V, plural.Of(len(ev.Records), "record"), ev.Reason)
	}
	return fmt.Sprintf("broker %d: event kind %d", broker, ev.Kind)
}

// roleText is a role change's text: Arg is the epoch start offset for a leader, the leader and
// its epoch for a follower. A large cluster's start narrates one per replica.
func roleText(ev *Event, broker int32, topic string, partition int32) string {
	b := make([]byte, 0, 112)
	b = append(b, "broker "...)
	b = strconv.AppendInt(b, int64(broker), 10)
	if ev.Kind == BecameLeader {
		b = append(b, " became leader of "...)
	} else {
		b = append(b, " became follower of "...)
	}
	b = append(b, topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(partition), 10)
	if ev.Kind == BecameLeader {
		b = append(b, " in leader epoch "...)
		b = strconv.AppendInt(b, ev.Epoch.V, 10)
		b = append(b, " (epoch start offset "...)
		b = strconv.AppendInt(b, ev.Arg[0], 10)
		b = append(b, ", ISR "...)
		b = appendIDs(b, ev.ISR)
		b = append(b, ')')
		return string(b)
	}
	b = append(b, " under leader "...)
	b = strconv.AppendInt(b, ev.Arg[0], 10)
	b = append(b, " in leader epoch "...)
	b = strconv.AppendInt(b, ev.Arg[1], 10)
	return string(b)
}

// appendText is a leader's append's text.
func appendText(ev *Event, broker int32, topic string, partition int32) string {
	b := make([]byte, 0, 96)
	b = append(b, "leader "...)
	b = strconv.AppendInt(b, int64(broker), 10)
	b = append(b, " appended "...)
	b = plural.Append(b, ev.To.V-ev.From.V, "record")
	b = append(b, " to "...)
	b = append(b, topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, " at "...)
	b = plural.AppendOffsets(b, ev.From.V, ev.To.V-ev.From.V)
	b = append(b, " in epoch "...)
	b = strconv.AppendInt(b, ev.Epoch.V, 10)
	return string(b)
}

// hwText is a HW move's text, naming the follower whose fetch moved it.
func hwText(ev *Event, broker int32, topic string, partition int32) string {
	b := make([]byte, 0, 128)
	b = append(b, topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, " on broker "...)
	b = strconv.AppendInt(b, int64(broker), 10)
	b = append(b, " ("...)
	b = append(b, ev.Reason...)
	b = append(b, "): high watermark "...)
	b = strconv.AppendInt(b, ev.From.V, 10)
	b = append(b, " → "...)
	b = strconv.AppendInt(b, ev.To.V, 10)
	if ev.Follower.Set {
		b = append(b, " after follower "...)
		b = strconv.AppendInt(b, int64(ev.Follower.V), 10)
		b = append(b, "'s fetch at offset "...)
		b = strconv.AppendInt(b, ev.Arg[0], 10)
	}
	return string(b)
}

// appendIDs appends ids as fmt's %v prints them: [1 2 3], and [] for none.
func appendIDs(b []byte, ids []int32) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']')
}
