package engine

import (
	"iter"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The engine's agenda: every future happening (a message arriving, a timer firing) is one item,
// ordered by (at, seq). seq is the insertion order, so equal times resolve the same way on every
// run and every platform. A hand-written typed heap: container/heap boxes every item, which costs
// three times as much under WebAssembly.

type itemKind uint8

// The agenda kinds, one payload type each (below).
const (
	itDeliver              itemKind = iota // deliverMsg: a message arrives
	itRequestFailed                        // requestFailed: a request failed (lost, timed out or reset)
	itFetcherWake                          // fetcherWake: a fetcher thread may work again
	itDelayedFetchDone                     // delayedFetchDone: a parked fetch reaches its max wait
	itDelayedProduceDone                   // delayedProduceDone: a parked produce times out
	itIsrShrinkTask                        // isrShrinkTask: a broker's periodic ISR shrink check
	itCheckpointTask                       // checkpointTask: a broker's periodic HW checkpoint
	itSessionExpire                        // sessionExpire: a ZooKeeper session may expire
	itProducerRetry                        // producerRetry: a producer's batch is retried
	itAutoRebalance                        // autoRebalance: the controller's leader imbalance check
	itResend                               // alterPartitionResend: a leader re-sends its AlterPartition
	itControllerRetry                      // controllerRetry: the controller retries a broker's queue head
	itShutdownRetry                        // shutdownRetry: a broker's next controlled-shutdown attempt
	itReassignWatch                        // reassignWatch: the controller's watch on a reassigned partition fired
	itRecoveryPointTask                    // recoveryPointTask: a broker's recovery-point checkpoint
	itProduceTimeout                       // produceTimeout: the producer's request timeout of a Produce
	itIsrChangePropagation                 // isrChangePropagationTask: a broker's isr-change-propagation task (before 2.7)
	itIsrChangeWatch                       // isrChangeWatch: the controller's watch on /isr_change_notification fired
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
	// delayedFetchDone: fetch reaches its max wait, if it is still the park numbered seq (a
	// session's parked fetch is reused: package broker's FetchSession).
	delayedFetchDone struct {
		brokerTimer
		fetch *brk.DelayedFetch
		seq   uint64
	}
	delayedProduceDone struct {
		brokerTimer
		produce *brk.DelayedProduce
	}
	isrShrinkTask struct{ brokerTimer }
	// isrChangePropagationTask: ReplicaManager's isr-change-propagation task, before 2.7.
	isrChangePropagationTask struct{ brokerTimer }
	// isrChangeWatch: the controller's child watch on /isr_change_notification.
	isrChangeWatch struct{}
	checkpointTask struct{ brokerTimer }
	// recoveryPointTask: LogManager's kafka-recovery-point-checkpoint task.
	recoveryPointTask struct{ brokerTimer }
	shutdownRetry     struct{ brokerTimer }
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
	producerRetry struct{ op int64 }
	// produceTimeout: the producer gives up on Produce id at its request.timeout.ms, if it is
	// still in flight. It names the request by id, not pointer, so an answered request can be
	// reused meanwhile (recycle.go): ids are never handed out twice.
	produceTimeout  struct{ id uint64 }
	reassignWatch   struct{ pid int32 }
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
	return item{at: at, kind: itDelayedFetchDone, broker: p.broker, u: p.incarnation, n: int64(p.seq), fetch: p.fetch}
}
func (p delayedProduceDone) due(at int64) item {
	return item{at: at, kind: itDelayedProduceDone, broker: p.broker, u: p.incarnation, produce: p.produce}
}
func (p isrShrinkTask) due(at int64) item {
	return item{at: at, kind: itIsrShrinkTask, broker: p.broker, u: p.incarnation}
}
func (p isrChangePropagationTask) due(at int64) item {
	return item{at: at, kind: itIsrChangePropagation, broker: p.broker, u: p.incarnation}
}
func (p isrChangeWatch) due(at int64) item {
	return item{at: at, kind: itIsrChangeWatch, broker: -1}
}
func (p recoveryPointTask) due(at int64) item {
	return item{at: at, kind: itRecoveryPointTask, broker: p.broker, u: p.incarnation}
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
func (p produceTimeout) due(at int64) item {
	return item{at: at, kind: itProduceTimeout, broker: -1, n: int64(p.id)}
}
func (p autoRebalance) due(at int64) item {
	return item{at: at, kind: itAutoRebalance, broker: -1, u: uint64(p.controllerEpoch)}
}
func (p reassignWatch) due(at int64) item {
	return item{at: at, kind: itReassignWatch, broker: -1, n: int64(p.pid)}
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
	fetch   *brk.DelayedFetch
	produce *brk.DelayedProduce
}

// timer is the brokerTimer of an item that has one.
func (it *item) timer() brokerTimer { return brokerTimer{it.broker, it.u} }

func (it *item) deliverMsg() deliverMsg       { return deliverMsg{it.msg, it.u} }
func (it *item) requestFailed() requestFailed { return requestFailed{it.msg, it.n != 0} }
func (it *item) fetcherWake() fetcherWake     { return fetcherWake{it.timer(), it.n} }
func (it *item) delayedFetchDone() delayedFetchDone {
	return delayedFetchDone{it.timer(), it.fetch, uint64(it.n)}
}
func (it *item) delayedProduceDone() delayedProduceDone {
	return delayedProduceDone{it.timer(), it.produce}
}
func (it *item) alterPartitionResend() alterPartitionResend {
	return alterPartitionResend{it.timer(), int32(it.n)}
}
func (it *item) sessionExpire() sessionExpire   { return sessionExpire{it.broker, it.u} }
func (it *item) producerRetry() producerRetry   { return producerRetry{it.n} }
func (it *item) produceTimeout() produceTimeout { return produceTimeout{uint64(it.n)} }
func (it *item) autoRebalance() autoRebalance   { return autoRebalance{int32(it.u)} }
func (it *item) reassignWatch() reassignWatch   { return reassignWatch{int32(it.n)} }
func (it *item) controllerRetry() controllerRetry {
	return controllerRetry{it.broker, int32(it.u)}
}

// numKinds counts the agenda kinds.
const numKinds = int(itIsrChangeWatch) + 1

// agenda is the items in (at, seq) order: a heap, and one FIFO lane per kind. Most kinds come due
// a fixed time after they are set (a delivery one latency after the send, a parked produce's
// timeout request.timeout.ms after it parks, a parked fetch's replica.fetch.wait.max.ms after),
// so each new item of a kind is usually due no earlier than the last one queued: it joins the
// end of its kind's lane, in O(1), and only an item due before its lane's last one goes to the
// heap. pop takes the least (at, seq) of the heap's top and the lanes' heads, which is the item
// the heap alone would have given: the order is the same, without a log n sift over tens of
// thousands of items (a steady 1,000 produces a second keep 30 s of timeouts waiting).
//
// The least of those sources is found through heads, each non-empty source's least (at, seq)
// kept inline in order: a push changes it only when its lane was empty or it is the big heap's
// new top, and a pop re-files the one source it took from, moving it back past the sources now
// before it (usually none or one: the next delivery is mostly due before any timer). Looking at
// every lane's head on each pop cost some 200 instructions an item, a binary heap of the heads
// some 80 (issue 12).
//
// The heap and the lanes hold entries, items without pointers: an item's pointer (a message, a
// parked fetch or produce) waits in refs while the item is queued. Tens of thousands of queued
// items are then memory the collector never scans, and moving one (a push, a take, a heap swap)
// is a plain copy, not one through the write barrier (issue 12: both cost far more under
// WebAssembly).
type agenda struct {
	heap  []entry
	lanes [numKinds]lane
	n     int
	seq   uint64
	// heads[:nheads] is each non-empty source's least item, least first.
	heads  [heapSrc + 1]head
	nheads int
	// refs holds the pointers of queued items, by entry.ref-1; free the unused slots.
	refs []itemRef
	free []int32
}

// entry is a queued item: its fields but the pointers, which are in refs[ref-1] (ref 0: none).
type entry struct {
	at     int64
	seq    uint64
	u      uint64
	n      int64
	broker int32
	ref    int32
	kind   itemKind
}

// head is a source's least item: a lane's head (src its kind) or the heap's top (src heapSrc).
type head struct {
	at  int64
	seq uint64
	src int32
}

// heapSrc is the big heap's number among the sources, after the lanes'.
const heapSrc = int32(numKinds)

func (h *head) before(o *head) bool {
	if h.at != o.at {
		return h.at < o.at
	}
	return h.seq < o.seq
}

// itemRef is a queued item's pointers.
type itemRef struct {
	msg     *Message
	fetch   *brk.DelayedFetch
	produce *brk.DelayedProduce
}

// enter fills en with it as queued, its pointers put in refs (in place, as leave).
func (q *agenda) enter(it *item, en *entry) {
	*en = entry{at: it.at, seq: it.seq, u: it.u, n: it.n, broker: it.broker, kind: it.kind}
	if it.msg != nil || it.fetch != nil || it.produce != nil {
		en.ref = q.ref(itemRef{it.msg, it.fetch, it.produce})
	}
}

// ref files a queued item's pointers in refs and gives their number (entry.ref).
func (q *agenda) ref(r itemRef) int32 {
	var ref int32
	if k := len(q.free) - 1; k >= 0 {
		ref = q.free[k]
		q.free = q.free[:k]
	} else {
		q.refs = append(grown(q.refs), itemRef{})
		ref = int32(len(q.refs))
	}
	q.refs[ref-1] = r
	return ref
}

// pushDeliver is push(deliverMsg{msg, gen}.due(at)) for the loop's most common item, without
// building the item to copy it into an entry.
func (q *agenda) pushDeliver(at int64, gen uint64, msg *Message) {
	en := entry{at: at, u: gen, broker: -1, kind: itDeliver, ref: q.ref(itemRef{msg: msg})}
	q.pushEntry(&en)
}

// itemOf is the item en stands for, its pointers read from refs.
func (q *agenda) itemOf(en *entry) item {
	it := item{at: en.at, seq: en.seq, kind: en.kind, broker: en.broker, u: en.u, n: en.n}
	if en.ref != 0 {
		r := &q.refs[en.ref-1]
		it.msg, it.fetch, it.produce = r.msg, r.fetch, r.produce
	}
	return it
}

// leave fills it with the item en stands for, leaving the agenda: its refs slot is freed. It
// writes in place: an item is nine words, and returning it by value copied it three times on
// the way to the loop (issue 12).
func (q *agenda) leave(en *entry, it *item) {
	*it = item{at: en.at, seq: en.seq, kind: en.kind, broker: en.broker, u: en.u, n: en.n}
	if en.ref != 0 {
		r := &q.refs[en.ref-1]
		it.msg, it.fetch, it.produce = r.msg, r.fetch, r.produce
		*r = itemRef{}
		q.free = append(q.free, en.ref)
	}
}

// lane is a FIFO of one kind's items, (at, seq) ascending from head.
type lane struct {
	items []entry
	head  int
}

func (l *lane) empty() bool { return l.head == len(l.items) }

// drop removes the head; the space before head is reclaimed once it is half the lane.
func (l *lane) drop() {
	l.head++
	switch {
	case l.head == len(l.items):
		l.items, l.head = l.items[:0], 0
	case l.head >= 256 && 2*l.head >= len(l.items):
		n := copy(l.items, l.items[l.head:])
		l.items, l.head = l.items[:n], 0
	}
}

// grown is s with room for one more: a full array doubles. append would grow a long one by a
// quarter, copying all of it each time, and a lane can be long: a steady acks=all load keeps
// every produce's timeout, request.timeout.ms ahead, queued (100,000 entries after 10 s at
// 10,000 produces a second, whose lane and refs grew by a quarter 40 times).
func grown[E any](s []E) []E {
	if len(s) == cap(s) {
		s = slices.Grow(s, len(s)+1)
	}
	return s
}

func before(a, b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *agenda) less(i, j int) bool { return before(&q.heap[i], &q.heap[j]) }

func (q *agenda) push(it *item) {
	var en entry
	q.enter(it, &en)
	q.pushEntry(&en)
}

// pushEntry queues en (entered: its pointers in refs), numbered now (en.seq is set).
func (q *agenda) pushEntry(en *entry) {
	q.seq++
	en.seq = q.seq
	q.n++
	if l := &q.lanes[en.kind]; l.empty() || en.at >= l.items[len(l.items)-1].at {
		if l.empty() {
			q.addHead(head{en.at, en.seq, int32(en.kind)})
		}
		l.items = append(grown(l.items), *en)
		return
	}
	q.heap = append(q.heap, *en)
	i := len(q.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.heap[i], q.heap[p] = q.heap[p], q.heap[i]
		i = p
	}
	switch {
	case i > 0: // the heap's top is unchanged
	case len(q.heap) == 1:
		q.addHead(head{en.at, en.seq, heapSrc})
	default: // a new top: the heap's head moves earlier
		for j := range q.nheads {
			if h := &q.heads[j]; h.src == heapSrc {
				h.at, h.seq = en.at, en.seq
				q.forward(j)
				break
			}
		}
	}
}

// addHead files a source that was empty among the heads.
func (q *agenda) addHead(h head) {
	q.heads[q.nheads] = h
	q.nheads++
	q.forward(q.nheads - 1)
}

// forward moves heads[i] towards the front while it is before the one ahead of it.
func (q *agenda) forward(i int) {
	h := q.heads[i]
	for ; i > 0 && h.before(&q.heads[i-1]); i-- {
		q.heads[i] = q.heads[i-1]
	}
	q.heads[i] = h
}

// refile puts the front source's new least item, en, in its place, or drops the source from the
// heads if it is empty now (en nil).
func (q *agenda) refile(en *entry) {
	n := q.nheads
	if en == nil {
		copy(q.heads[:n-1], q.heads[1:n])
		q.nheads--
		return
	}
	h := head{en.at, en.seq, q.heads[0].src}
	i := 0
	for ; i+1 < n && q.heads[i+1].before(&h); i++ {
		q.heads[i] = q.heads[i+1]
	}
	q.heads[i] = h
}

func (q *agenda) len() int { return q.n }

// peekAt is the least item's time. The agenda must not be empty.
func (q *agenda) peekAt() int64 { return q.heads[0].at }

// pop takes the least item out into it. The agenda must not be empty.
func (q *agenda) pop(it *item) {
	q.n--
	if k := q.heads[0].src; k != heapSrc {
		l := &q.lanes[k]
		q.leave(&l.items[l.head], it) // before drop, which may move the lane
		l.drop()
		if l.empty() {
			q.refile(nil)
		} else {
			q.refile(&l.items[l.head])
		}
		return
	}
	q.leave(&q.heap[0], it)
	q.popHeap()
	if len(q.heap) == 0 {
		q.refile(nil)
	} else {
		q.refile(&q.heap[0])
	}
}

// popHeap removes the heap's top.
func (q *agenda) popHeap() {
	n := len(q.heap) - 1
	q.heap[0] = q.heap[n]
	q.heap = q.heap[:n]
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
		q.heap[i], q.heap[m] = q.heap[m], q.heap[i]
		i = m
	}
}

// all yields every item, the heap's then each lane's in kind order: not in (at, seq) order. Each
// is a copy (the agenda holds entries) in one variable, overwritten by the next.
func (q *agenda) all() iter.Seq[*item] {
	return func(yield func(*item) bool) {
		var it item
		for i := range q.heap {
			it = q.itemOf(&q.heap[i])
			if !yield(&it) {
				return
			}
		}
		for k := range q.lanes {
			l := &q.lanes[k]
			for i := l.head; i < len(l.items); i++ {
				it = q.itemOf(&l.items[i])
				if !yield(&it) {
					return
				}
			}
		}
	}
}
