package broker

import "fmt"

// eventCall is what a fake cluster notes of an event: what it says, read from its kind and the
// fields that kind carries (a field in the wrong place, or a wrong kind, reads differently).
func eventCall(ev *Event) string {
	pid := ev.Pid.V
	if !ev.Pid.Set {
		pid = -1
	}
	switch ev.Kind {
	case PartitionFailed:
		return fmt.Sprintf("failed %d: %s", pid, ev.Reason)
	case FetcherAdded:
		return fmt.Sprintf("started fetcher %d for %d (%s)", ev.Arg[0], ev.Arg[1], ev.Reason)
	case FetcherRemoved:
		return fmt.Sprintf("stopped fetcher %d for %d (%s)", ev.Arg[0], ev.Arg[1], ev.Reason)
	case FatalExit:
		return fmt.Sprintf("exiting on %d: %s (%s)", pid, ev.Why, ev.Reason)
	case LeaderAndIsrRejected:
		return fmt.Sprintf("rejected %s: %d < %d", ev.Name, ev.Arg[0], ev.Arg[1])
	case BecameLeader:
		return fmt.Sprintf("leader %d in %d from %d, ISR %v", pid, ev.Epoch.V, ev.Arg[0], ev.ISR)
	case BecameFollower:
		return fmt.Sprintf("follower %d of %d at %d", pid, ev.Arg[0], ev.Arg[1])
	case LeaderAppend:
		return fmt.Sprintf("appended to %d at %d..%d in %d", pid, ev.From.V, ev.To.V, ev.Epoch.V)
	case DuplicateBatch:
		return fmt.Sprintf("duplicate in %d at %d..%d in %d", pid, ev.From.V, ev.To.V, ev.Epoch.V)
	case IsrChangeAsked:
		return fmt.Sprintf("ask %s %d %v → %v", ev.Reason, pid, ev.OldISR, ev.ISR)
	case IsrWriteSkipped:
		return fmt.Sprintf("skipped %s %d: %v → %v, cached %d, ZooKeeper %d, connected %d (%s)", ev.Reason, pid,
			ev.OldISR, ev.ISR, ev.Arg[0], ev.Arg[1], ev.Arg[2], ev.Name)
	case IsrWritten:
		return fmt.Sprintf("written %s %d: %v → %v in %d at version %d", ev.Reason, pid, ev.OldISR, ev.ISR, ev.Epoch.V, ev.Arg[0])
	case Restarted:
		return "restarted"
	case Crashed:
		return fmt.Sprintf("crashed (%s)", ev.Reason)
	case ShutdownBegan:
		return "shutdown began"
	case ShutdownAttemptFailed:
		return fmt.Sprintf("attempt %d failed (error %q), %d led, backoff %d, last %d (%s)", ev.Arg[0], ev.Why, ev.Arg[1],
			ev.Arg[2], ev.Arg[3], ev.Reason)
	case ShutdownGaveUp:
		return fmt.Sprintf("stopped anyway after %d (%d led; %s)", ev.Arg[0], ev.Arg[1], ev.Reason)
	case ShutdownCompleted:
		return fmt.Sprintf("shut down (%s)", ev.Reason)
	case LogDirFailed:
		return fmt.Sprintf("log dir failed (%q, %d offline)", ev.Reason, ev.Arg[0])
	case HighWatermarkMoved:
		f := int32(-1)
		if ev.Follower.Set {
			f = ev.Follower.V
		}
		return fmt.Sprintf("hw %d: %d → %d (%s, follower %d at %d)", pid, ev.From.V, ev.To.V, ev.Reason, f, ev.Arg[0])
	case Truncated:
		return fmt.Sprintf("truncated %d from %d to %d (%d cut): %s", pid, ev.From.V, ev.To.V, len(ev.Records), ev.Reason)
	}
	return fmt.Sprintf("event of kind %d", ev.Kind)
}
