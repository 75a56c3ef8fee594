package engine

import "slices"

// The read API's view of the agenda: messages in flight, requests parked in purgatory, and the
// timers that will act when due. Stale items (of an earlier broker incarnation, ZooKeeper session
// or controller epoch, or whose work is done) are left out: they do nothing when they come due.

// InFlight returns the messages in flight, in agenda order (not sorted). They are shared: a
// reader must not change them. Without a trace, a fetch round's messages are reused once the
// round is over (recycle.go): a reader keeps them only until the engine moves on.
func (e *Engine) InFlight() []*Message {
	var out []*Message
	for it := range e.agenda.all() {
		if it.kind == itDeliver {
			out = append(out, it.deliverMsg().msg)
		}
	}
	return out
}

// ParkedRequest is a request waiting in a leader's purgatory (DelayedFetch, DelayedProduce).
type ParkedRequest struct {
	Broker   int32 // the leader it waits on
	Request  *Message
	Deadline int64 // when it gives up waiting
	// RequiredOffset is the high watermark an acks=all produce waits for (0 for a fetch).
	RequiredOffset int64
	// SessionPartitions is the size of the session an incremental fetch waits on (its request
	// lists only the partitions that changed); 0 for a full fetch.
	SessionPartitions int
}

// Purgatory returns the parked Fetch and Produce requests, in agenda order.
func (e *Engine) Purgatory() (fetches, produces []ParkedRequest) {
	for it := range e.agenda.all() {
		switch it.kind {
		case itDelayedFetchDone:
			p := it.delayedFetchDone()
			if !p.fetch.Done() && p.fetch.Seq() == p.seq && e.brokers[p.broker].incarnation == p.incarnation {
				fetches = append(fetches, ParkedRequest{Broker: it.broker, Request: p.fetch.Request(), Deadline: it.at,
					SessionPartitions: p.fetch.SessionSize()})
			}
		case itDelayedProduceDone:
			p := it.delayedProduceDone()
			if !p.produce.Done() && e.brokers[p.broker].incarnation == p.incarnation {
				produces = append(produces, ParkedRequest{Broker: it.broker, Request: p.produce.Request(), Deadline: it.at,
					RequiredOffset: p.produce.RequiredOffset()})
			}
		}
	}
	return fetches, produces
}

// TimerKind names a timer a reader can see.
type TimerKind uint8

// The timers Timers lists.
const (
	TimerSessionExpiry        TimerKind = iota // a disconnected broker's ZooKeeper session expires
	TimerLeaderRebalance                       // the controller's leader imbalance check
	TimerHWCheckpoint                          // a live broker writes its high watermarks
	TimerISRShrink                             // a broker's periodic ISR shrink check
	TimerRequestTimeout                        // a request held on a cut link times out
	TimerProducerRetry                         // a producer sends a batch again
	TimerControllerRetry                       // the controller re-sends to a broker
	TimerAlterPartitionResend                  // a leader re-sends its AlterPartition
)

// Timer is one timer that will act when due.
type Timer struct {
	At     int64
	Kind   TimerKind
	Broker int32 // the broker it belongs to (the controller's for TimerLeaderRebalance), -1 none
	// Partition is the partition id of a producer retry or an AlterPartition resend, else -1.
	Partition int32
	// Request is the held request of a TimerRequestTimeout.
	Request *Message
	// RecordIDs are the records of a producer retry, and Failures how many of that batch's
	// sends failed (0: it waits for its first send, for a live leader or a free connection).
	RecordIDs []int64
	Failures  int
}

// Timers returns the timers that will act when due, in agenda order (not sorted).
func (e *Engine) Timers() []Timer {
	var out []Timer
	for it := range e.agenda.all() {
		live := func() bool {
			return it.broker >= 0 && !e.brokers[it.broker].Dead() && e.brokers[it.broker].incarnation == it.timer().incarnation
		}
		t := Timer{At: it.at, Broker: it.broker, Partition: -1}
		switch it.kind {
		case itIsrShrinkTask:
			if e.brokers[it.broker].incarnation != it.timer().incarnation {
				continue
			}
			t.Kind = TimerISRShrink
		case itSessionExpire:
			if !e.ctrl.SessionExpiryPending(it.broker, it.sessionExpire().gen) {
				continue
			}
			t.Kind = TimerSessionExpiry
		case itAutoRebalance:
			if !e.ctrl.RebalancePending(it.autoRebalance().controllerEpoch) || !e.cfg.AutoLeaderRebalanceEnable {
				continue
			}
			t.Kind, t.Broker = TimerLeaderRebalance, e.ctrl.Broker()
		case itCheckpointTask:
			if !live() {
				continue
			}
			t.Kind = TimerHWCheckpoint
		case itRequestFailed:
			f := it.requestFailed()
			if !f.timedOut || e.pending.get(f.req.ID) != f.req {
				continue // only a held request's timeout (held.go); resets are immediate
			}
			t.Kind, t.Request = TimerRequestTimeout, f.req
		case itProducerRetry:
			id := it.producerRetry().op
			op := e.clients.Produce(max(id, -id))
			if op.Done {
				continue
			}
			if t, ok := op.Look(); id < 0 && (!op.Queued() || !ok || t != it.at) || id > 0 && op.Queued() {
				continue // a stale wake-up of a batch in its deque (lookAt)
			}
			t.Kind, t.Partition, t.RecordIDs, t.Failures = TimerProducerRetry, op.PID(), slices.Clone(op.RecordIDs), op.Failures()
		case itControllerRetry:
			if !e.ctrl.RetryPending(it.controllerRetry().controllerEpoch) {
				continue
			}
			t.Kind = TimerControllerRetry
		case itResend:
			pid := it.alterPartitionResend().pid
			r := e.replicaOn(pid, it.broker)
			if !live() || r == nil || !r.State().IsInflight() {
				continue
			}
			t.Kind, t.Partition = TimerAlterPartitionResend, pid
		default:
			continue
		}
		out = append(out, t)
	}
	return out
}
