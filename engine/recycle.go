package engine

import brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process

// Reusing a fetch round's messages (issue 12). A steady cluster's garbage is mostly its fetch
// rounds: a Fetch (package broker's FetchMessage) and its answer (fetchResponseWithParts), a few hundred
// bytes each, full of pointers, made and dropped at every round. Under WebAssembly the collector
// is single-threaded, so this garbage costs the page far more than natively.
//
// A message is data that events and the read API share, and the engine never writes to one once
// sent (docs/engine.md). So a round's messages are reused only when nothing can refer to them any
// more, which this file makes provable:
//
//   - the engine records no trace (a run without --trace, a benchmark): no event keeps a message.
//     Tests (recycleForce) reuse them with the trace on and encode each event as it is emitted,
//     refusing it (EventFilter), so that no event is kept either;
//   - the answer was delivered to its follower and handled there: no agenda item, held message
//     or retransmitted copy refers to it (a retransmitted copy is a copy: its reuse is never
//     attempted, since it is not the message registered), and the follower keeps nothing of it
//     (the session handler and processPartitionData copy what they keep);
//   - its request is then answered: it left e.pending before the answer was handled, and the
//     leader's parked fetch that held it is done (every reader of a parked fetch checks done
//     before its request). Only a requestFailed timer can still point at an answered request (a
//     reset scheduled when its leader crashed, a timeout armed when it was held): no request is
//     reused while any requestFailed item waits (failing).
//
// The read API's InFlight and Purgatory hand out messages in flight or parked, never reused
// while they are; a driver that keeps one past the engine moving on must run with the trace on
// (a session does).
//
// What this file knows of a message is registered by its id in a table (slots): a pointer into a
// wrapper cannot be turned back into the wrapper without unsafe. A full table's slot is
// overwritten when a later message lands on it; the earlier message is then simply never reused.

// recycler is the engine's store of reusable fetch round messages (kept in the outbox, which
// owns the running item's sends).
type recycler struct {
	// force (tests only) reuses messages with the trace on (see above).
	force bool
	// failing counts the requestFailed items scheduled and not yet handled.
	failing int
	slots   []recycleSlot
	mask    uint64
	// The free wrappers, and the free Fetch lent to the fetchers as e.spareFetch (a thread's
	// maybeFetch takes its Fetch from there: broker_cluster.go's NewFetch): its send registers it.
	freeReq  []*brk.FetchMessage
	freeResp []*fetchResponseWithParts
	lent     *brk.FetchMessage
	// reused counts the messages reused (tests read it).
	reused uint64
}

// recycleSlot is a registered message: its id and its wrapper (one of the two).
type recycleSlot struct {
	id   uint64
	req  *brk.FetchMessage
	resp *fetchResponseWithParts
}

// recycling reports whether the messages sent now may be reused once done.
func (e *Engine) recycling() bool { return !e.trace || e.out.recycle.force }

// slot is message id's slot.
func (e *Engine) slot(id uint64) *recycleSlot {
	rc := &e.out.recycle
	if rc.slots == nil {
		rc.slots, rc.mask = make([]recycleSlot, minSlots), minSlots-1
	}
	return &rc.slots[id&rc.mask]
}

// The slot table starts small and doubles, up to maxSlots, when a message would overwrite one
// still registered: it holds about the messages of the last half second (a parked Fetch waits up
// to replica.fetch.wait.max.ms), a few thousand in a steady 10-broker cluster.
const minSlots, maxSlots = 1 << 10, 1 << 16

// registerMsg records message id's wrapper (in s).
func (e *Engine) registerMsg(s recycleSlot) {
	rc := &e.out.recycle
	at := e.slot(s.id)
	for (at.req != nil || at.resp != nil) && len(rc.slots) < maxSlots {
		old := rc.slots
		rc.slots, rc.mask = make([]recycleSlot, 2*len(old)), uint64(2*len(old)-1)
		for _, o := range old { // distinct old slots land on distinct new ones
			if o.req != nil || o.resp != nil {
				rc.slots[o.id&rc.mask] = o
			}
		}
		at = e.slot(s.id)
	}
	*at = s
}

// sentFetch registers Fetch m if it is the lent one, and lends the next free Fetch.
func (e *Engine) sentFetch(m *Message) {
	rc := &e.out.recycle
	if rc.lent == nil || m != rc.lent.Message() {
		return
	}
	if e.recycling() {
		e.registerMsg(recycleSlot{id: m.ID, req: rc.lent})
	}
	rc.lent = nil
	e.lendFetch()
}

// lendFetch puts a free Fetch (a new one if none is free) where a fetcher thread takes its next
// one (broker_cluster.go: NewFetch), if that place is empty and messages are reused.
func (e *Engine) lendFetch() {
	rc := &e.out.recycle
	if e.spareFetch != nil || !e.recycling() {
		return
	}
	if n := len(rc.freeReq) - 1; n >= 0 {
		rc.lent = rc.freeReq[n]
		rc.freeReq[n] = nil
		rc.freeReq = rc.freeReq[:n]
	} else {
		rc.lent = &brk.FetchMessage{}
	}
	e.spareFetch = rc.lent
}

// answerWrapper is the storage of a session answer: a free one when messages are reused (it is
// then registered when sent), else a new one.
func (e *Engine) answerWrapper() *fetchResponseWithParts {
	rc := &e.out.recycle
	if n := len(rc.freeResp) - 1; n >= 0 && e.recycling() {
		x := rc.freeResp[n]
		rc.freeResp[n] = nil
		rc.freeResp = rc.freeResp[:n]
		return x
	}
	return &fetchResponseWithParts{}
}

// sentAnswer registers answer x, just sent, when messages are reused.
func (e *Engine) sentAnswer(x *fetchResponseWithParts) {
	if e.recycling() {
		e.registerMsg(recycleSlot{id: x.m.ID, resp: x})
	}
}

// fetchRoundDone is called when answer m to Fetch req was delivered and handled: both are free
// for reuse if registered (see above for why nothing else refers to them then).
func (e *Engine) fetchRoundDone(m, req *Message) {
	if !e.recycling() {
		return
	}
	rc := &e.out.recycle
	if s := e.slot(m.ID); s.id == m.ID && s.resp != nil && &s.resp.m == m {
		rc.freeResp = append(rc.freeResp, s.resp)
		*s = recycleSlot{}
		rc.reused++
	}
	// failing: a requestFailed timer may point at req.
	if s := e.slot(req.ID); rc.failing == 0 && s.id == req.ID && s.req != nil && s.req.Message() == req {
		rc.freeReq = append(rc.freeReq, s.req)
		*s = recycleSlot{}
		rc.reused++
	}
	e.lendFetch()
}
