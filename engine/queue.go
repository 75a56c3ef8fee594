package engine

// The engine's agenda: every future happening (a message arriving, a timer firing) is one item,
// ordered by (at, seq). seq is the insertion order, so equal times resolve the same way on every
// run and every platform. A hand-written typed heap: container/heap boxes every item, which costs
// three times as much under WebAssembly (build-notes §6).

type itemKind uint8

const (
	itDeliver            itemKind = iota // msg arrives at msg.To
	itRequestFailed                      // the request msg failed (lost, timed out or reset)
	itFetcherWake                        // broker's fetcher (id) may work again
	itDelayedFetchDone                   // broker's parked fetch (id) reaches its max wait
	itDelayedProduceDone                 // broker's parked produce (id) times out
	itIsrShrinkTask                      // broker's periodic ISR shrink check
	itCheckpointTask                     // broker's periodic HW checkpoint
	itSessionExpire                      // broker's ZooKeeper session may expire (gen)
	itProducerRetry                      // client op (id) retries
	itAutoRebalance                      // controller's leader imbalance check
	itResend                             // broker re-sends a controller-bound request (id = pid or op)
	itControllerRetry                    // the controller (its epoch in gen) retries a broker's queue head
	itShutdownRetry                      // broker's next controlled-shutdown attempt
)

type item struct {
	at   int64
	seq  uint64
	kind itemKind
	// broker is the broker the item belongs to; gen guards against a later incarnation of it
	// (a timer set before a crash must not fire after the restart).
	broker int32
	gen    uint64
	id     int64
	msg    *Message
	// parked is the purgatory entry a timer is for.
	fetch   *delayedFetch
	produce *delayedProduce
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
