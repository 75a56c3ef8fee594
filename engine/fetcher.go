package engine

import (
	"fmt"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// Replica fetcher threads (AbstractFetcherManager, AbstractFetcherThread, ReplicaFetcherThread).
// A broker runs one fetcher per (source broker, fetcherId); fetcherId hashes the partition as
// Kafka does, so partitions spread over num.replica.fetchers threads per leader. A thread's loop
// and its answers' handling are package broker's (brk.FetcherThread.DoWork and its Handle*
// methods), asking what they need of the broker and the cluster through the broker's
// brk.Follower (follower.go). Here: the fetcher manager's part (adding, removing and stopping
// threads), waking them, and handing them their answers. What a turn costs follows what changed,
// not the thread's size (fetcher_changes.go).

// fetchState is a follower's per-partition fetch state (broker.PartitionFetchState).
type fetchState = brk.PartitionFetchState

// fetcher is a fetcher thread (brk.FetcherThread: its partitions' fetch states, session handler,
// change list, request in flight and wake-up, its loop and its answers' handling).
type fetcher struct {
	brk.FetcherThread
}

func fetcherKey(leader, id int32) int64 { return int64(leader)<<32 | int64(uint32(id)) }

func (b *broker) fetcherFor(leader, id int32) *fetcher {
	for _, f := range b.fetchers {
		if f.Leader() == leader && f.ID() == id {
			return f
		}
	}
	return nil
}

// addFetcher gives partition st to the fetcher for (leader, fetcherId), creating the thread if
// needed. An existing state at the same leader epoch is kept (no re-truncation).
func (e *Engine) addFetcher(b *broker, leader int32, st fetchState) {
	p := e.partitions[st.Pid()]
	f := e.fetcherStarted(b, leader, brk.FetcherID(p.topic, p.index, e.cfg.NumReplicaFetchers))
	if f.Add(st, b.replicaOf(p.pid).Log(), p.tp()) {
		e.wakeFetcher(f, e.now)
	}
}

// fetcherStarted is b's fetcher for (leader, id), started if there is none.
func (e *Engine) fetcherStarted(b *broker, leader, id int32) *fetcher {
	if f := b.fetcherFor(leader, id); f != nil {
		return f
	}
	f := &fetcher{FetcherThread: brk.NewFetcherThread(b.id, leader, id)}
	b.fetchers = append(b.fetchers, f)
	slices.SortFunc(b.fetchers, func(x, y *fetcher) int {
		if x.Leader() != y.Leader() {
			return int(x.Leader() - y.Leader())
		}
		return int(x.ID() - y.ID())
	})
	e.emit(Event{Type: EvFetcher, Broker: Some(b.id), Reason: "started",
		Text: fmt.Sprintf("broker %d started fetcher %d for leader broker %d", b.id, id, leader)})
	return f
}

// removeFetcherForPartitions takes partitions off every fetcher of b.
func (e *Engine) removeFetcherForPartitions(b *broker, pids []int32) {
	sorted := slices.Clone(pids)
	slices.Sort(sorted)
	for _, f := range b.fetchers {
		f.Remove(sorted)
	}
}

// shutdownIdleFetchers stops fetchers left without partitions.
func (e *Engine) shutdownIdleFetchers(b *broker) {
	b.fetchers = slices.DeleteFunc(b.fetchers, func(f *fetcher) bool {
		if f.Len() > 0 {
			return false
		}
		e.emit(Event{Type: EvFetcher, Broker: Some(b.id), Reason: "stopped",
			Text: fmt.Sprintf("broker %d stopped idle fetcher %d for leader broker %d", b.id, f.ID(), f.Leader())})
		return true
	})
}

func (e *Engine) wakeFetcher(f *fetcher, at int64) { f.WakeUp(e.brokers[f.Owner()].follower, at) }

func (e *Engine) fetcherWake(b *broker, key int64) {
	f := b.fetcherFor(int32(key>>32), int32(uint32(key)))
	if f == nil || !f.Woken(e.now) {
		return
	}
	f.DoWork(b.follower)
}

// doWork is one turn of f's loop (tests call it).
func (e *Engine) doWork(b *broker, f *fetcher) { f.DoWork(b.follower) }

// fetcherOf returns the fetcher of b waiting for the answer to request id.
func (b *broker) fetcherOf(id uint64) *fetcher {
	for _, f := range b.fetchers {
		if f.InFlight() == id {
			return f
		}
	}
	return nil
}

// The answers to a fetcher's requests go to the fetcher of b that sent the request, if any
// (package broker's fetcher_answers.go).

func (e *Engine) handleFetchResponse(b *broker, m *Message) {
	if f := b.fetcherOf(m.ReplyTo); f != nil {
		f.HandleFetchResponse(b.follower, m)
	}
}

func (e *Engine) handleOffsetsForEpochResponse(b *broker, m *Message) {
	if f := b.fetcherOf(m.ReplyTo); f != nil {
		f.HandleOffsetsForEpochResponse(b.follower, m)
	}
}

func (e *Engine) handleListOffsetsResponse(b *broker, m *Message) {
	if f := b.fetcherOf(m.ReplyTo); f != nil {
		f.HandleListOffsetsResponse(b.follower, m)
	}
}

// fetcherRequestFailed handles a failed send or a timeout of a fetcher's request.
func (e *Engine) fetcherRequestFailed(b *broker, req *Message) {
	if f := b.fetcherOf(req.ID); f != nil {
		f.RequestFailed(b.follower, req)
	}
}
