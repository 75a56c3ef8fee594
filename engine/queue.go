package engine

import brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process

// The engine's agenda: every future happening (a message arriving, a timer firing) is one item,
// ordered by (at, seq). seq is the insertion order, so equal times resolve the same way on every
// run and every platform. A hand-written typed heap: container/heap boxes every item, which costs
// three times as much under WebAssembly.

type itemKind uint8

// The agenda kinds, one payload type each (below).
const (
	itDeliver            itemKind = iota // deliverMsg: a message arrives
	itRequestFailed                      // requestFailed: a request failed (lost, timed out or reset)
	itFetcherWake                        // fetcherWake: a fetcher thread may work again
	itDelayedFetchDone                   // delayedFetchDone: a parked fetch reaches its max wait
	itDelayedProduceDone                 // delayedProduceDone: a parked produce times out
	itIsrShrinkTask                      // isrShrinkTask: a broker's periodic ISR shrink check
	itCheckpointTask                     // checkpointTask: a broker's periodic HW checkpoint
	itSessionExpire                      // sessionExpire: a ZooKeeper session may expire
	itProducerRetry                      // producerRetry: a producer's batch is retried
	itAutoRebalance                      // autoRebalance: the controller's leader imbalance check
	itResend                             // alterPartitionResend: a leader re-sends its AlterPartition
	itControllerRetry                    // controllerRetry: the controller retries a broker's queue head
	itShutdownRetry                      // shutdownRetry: a broker's next controlled-shutdown attempt
)

// brokerTimer is the owner of a broker's timer: the broker and its incarnation when the timer was
// set (a timer set before a crash must not fire after the restart).
type brokerTimer struct {
	broker      int32
	incarnation uint64
}

// The payloads. Each has due, which makes it an agenda item at a time, and item has one accessor
// per payload type: the fields of item are a union that only this file reads.
type (
	// deliverMsg: msg arrives at msg.To, if that broker is still the incarnation it was sent to.
	deliverMsg struct {
		msg         *Message
		incarnation uint64
	}
	// requestFailed: req got no answer; timedOut tells a held request's timeout from a reset.
	requestFailed struct {
		req      *Message
		timedOut bool
	}
	fetcherWake struct {
		brokerTimer
		fetcher int64 // fetcherKey(leader, fetcher id)
	}
	delayedFetchDone struct {
		brokerTimer
		fetch *delayedFetch
	}
	delayedProduceDone struct {
		brokerTimer
		produce *brk.DelayedProduce
	}
	isrShrinkTask  struct{ brokerTimer }
	checkpointTask struct{ brokerTimer }
	shutdownRetry  struct{ brokerTimer }
	// alterPartitionResend: the leader asks the controller again about partition pid.
	alterPartitionResend struct {
		brokerTimer
		pid int32
	}
	// sessionExpire: broker's ZooKeeper session expires, if it is still session generation gen.
	sessionExpire struct {
		broker int32
		gen    uint64
	}
	producerRetry   struct{ op int64 }
	autoRebalance   struct{ controllerEpoch int32 }
	controllerRetry struct {
		broker          int32
		controllerEpoch int32
	}
)

func (p deliverMsg) due(at int64) item {
	return item{at: at, kind: itDeliver, broker: -1, u: p.incarnation, msg: p.msg}
}
func (p requestFailed) due(at int64) item {
	var n int64
	if p.timedOut {
		n = 1
	}
	return item{at: at, kind: itRequestFailed, broker: -1, n: n, msg: p.req}
}
func (p fetcherWake) due(at int64) item {
	return item{at: at, kind: itFetcherWake, broker: p.broker, u: p.incarnation, n: p.fetcher}
}
func (p delayedFetchDone) due(at int64) item {
	return item{at: at, kind: itDelayedFetchDone, broker: p.broker, u: p.incarnation, fetch: p.fetch}
}
func (p delayedProduceDone) due(at int64) item {
	return item{at: at, kind: itDelayedProduceDone, broker: p.broker, u: p.incarnation, produce: p.produce}
}
func (p isrShrinkTask) due(at int64) item {
	return item{at: at, kind: itIsrShrinkTask, broker: p.broker, u: p.incarnation}
}
func (p checkpointTask) due(at int64) item {
	return item{at: at, kind: itCheckpointTask, broker: p.broker, u: p.incarnation}
}
func (p shutdownRetry) due(at int64) item {
	return item{at: at, kind: itShutdownRetry, broker: p.broker, u: p.incarnation}
}
func (p alterPartitionResend) due(at int64) item {
	return item{at: at, kind: itResend, broker: p.broker, u: p.incarnation, n: int64(p.pid)}
}
func (p sessionExpire) due(at int64) item {
	return item{at: at, kind: itSessionExpire, broker: p.broker, u: p.gen}
}
func (p producerRetry) due(at int64) item {
	return item{at: at, kind: itProducerRetry, broker: -1, n: p.op}
}
func (p autoRebalance) due(at int64) item {
	return item{at: at, kind: itAutoRebalance, broker: -1, u: uint64(p.controllerEpoch)}
}
func (p controllerRetry) due(at int64) item {
	return item{at: at, kind: itControllerRetry, broker: p.broker, u: uint64(p.controllerEpoch)}
}

// item is one agenda entry: a time, its insertion sequence, a kind, and that kind's payload in a
// flat union (no interface: boxing a payload would allocate on every timer).
type item struct {
	at   int64
	seq  uint64
	kind itemKind
	// broker is the broker the item belongs to (-1: none), for every kind.
	broker  int32
	u       uint64
	n       int64
	msg     *Message
	fetch   *delayedFetch
	produce *brk.DelayedProduce
}

// timer is the brokerTimer of an item that has one.
func (it *item) timer() brokerTimer { return brokerTimer{it.broker, it.u} }

func (it *item) deliverMsg() deliverMsg       { return deliverMsg{it.msg, it.u} }
func (it *item) requestFailed() requestFailed { return requestFailed{it.msg, it.n != 0} }
func (it *item) fetcherWake() fetcherWake     { return fetcherWake{it.timer(), it.n} }
func (it *item) delayedFetchDone() delayedFetchDone {
	return delayedFetchDone{it.timer(), it.fetch}
}
func (it *item) delayedProduceDone() delayedProduceDone {
	return delayedProduceDone{it.timer(), it.produce}
}
func (it *item) alterPartitionResend() alterPartitionResend {
	return alterPartitionResend{it.timer(), int32(it.n)}
}
func (it *item) sessionExpire() sessionExpire { return sessionExpire{it.broker, it.u} }
func (it *item) producerRetry() producerRetry { return producerRetry{it.n} }
func (it *item) autoRebalance() autoRebalance { return autoRebalance{int32(it.u)} }
func (it *item) controllerRetry() controllerRetry {
	return controllerRetry{it.broker, int32(it.u)}
}

type agenda struct {
	items []item
	seq   uint64
}

func (q *agenda) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *agenda) push(it item) {
	q.seq++
	it.seq = q.seq
	q.items = append(q.items, it)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *agenda) len() int { return len(q.items) }

func (q *agenda) peekAt() int64 { return q.items[0].at }

func (q *agenda) pop() item {
	top := q.items[0]
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items[n] = item{}
	q.items = q.items[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}
