package engine

import (
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/commitlog"
)

// The cluster's start at time 0 (start, in engine.go): every broker registers, broker 0 becomes
// controller and every broker applies a LeaderAndIsr naming each of its partitions. That round
// is a large part of a short run at scale (three million replicas for a million partitions), so
// it takes a bulk path: the same calls as becomeLeaderOrFollower's, in the same order, without
// the work a fresh broker cannot need. Its effects (events, their order and text, timers,
// observers' facts, state) are the general path's; TestBulkStartMatchesGeneral holds the two
// equal, with generalStart forcing the general one.

// applyFirstLeaderAndIsr applies broker b's LeaderAndIsr at the cluster's start, at once (no
// network round trip at time 0; nobody reads the answer). When b is fresh (bulkStartApplies) it
// is becomeLeaderOrFollower simplified:
//   - each partition's replica is the broker's i-th (the controller lists b's partitions in pid
//     order), where the general path looks each up by name, three times;
//   - nothing is removed from fetchers (b has none), and no answer is built;
//   - the leaders' ISRs, followers' state and first epoch cache entries are cut from three arrays
//     (startArena), and the fetchers are sized once for their partitions, instead of an
//     allocation or a growth each.
func (e *Engine) applyFirstLeaderAndIsr(b *broker, req *LeaderAndIsrRequest) {
	if e.generalStart || !e.bulkStartApplies(b, req) {
		e.becomeLeaderOrFollower(b, req)
		return
	}
	e.bulkStarts++
	b.controllerEpoch = req.ControllerEpoch
	arena := newStartArena(b, req)
	for i := range req.Partitions {
		if ps := &req.Partitions[i]; ps.Leader == b.id {
			e.makeLeaderIn(b, &b.replicas[i], *ps, arena)
		}
	}
	// makeFollowers: the followers whose leader lives become followers, in order; then each
	// whose fetcher restarts is completed and handed to its fetcher.
	var restart []int32
	for i := range req.Partitions {
		ps := &req.Partitions[i]
		if ps.Leader == b.id {
			continue
		}
		r := &b.replicas[i]
		if !slices.Contains(req.LiveLeaders, ps.Leader) {
			e.sessionsChanged(r)
			r.Create()
			continue
		}
		if e.makeFollower(b, r, *ps) {
			if restart == nil {
				restart = make([]int32, 0, len(req.Partitions)-i)
			}
			restart = append(restart, int32(i))
		}
	}
	ids, counts := e.fetcherIDs(b, req, restart)
	for k, i := range restart {
		ps, r := &req.Partitions[i], &b.replicas[i]
		e.completeDelayedProduces(r)
		e.tryCompleteWatchers(b, r)
		if b.state == brokerShuttingDown {
			continue
		}
		if !e.era.epochRequests && !e.era.truncateOnFetch {
			e.truncate(r, r.Log().HighWatermark(), "becoming follower: truncate to the own high watermark (pre-KIP-101)")
		}
		// addFetcher, with the fetcher id known and a new thread sized for what it will take.
		f := b.fetchers.Started(b.follower, ps.Leader, ids[k])
		if f.Len() == 0 && counts != nil {
			f.Reserve(int(counts[int64(ps.Leader)*e.cfg.NumReplicaFetchers+int64(ids[k])]))
		}
		p := r.p
		if f.Add(e.era.initialFetchState(r.Log(), p.pid, ps.LeaderEpoch), r.Log(), p.tp()) {
			e.wakeFetcher(f, e.now)
		}
	}
	if !b.checkpointing {
		b.checkpointing = true
		e.schedule(checkpointTask{e.timer(b)}.due(e.now + e.cfg.HighWatermarkCheckpointMs))
	}
	e.shutdownIdleFetchers(b)
}

// bulkStartApplies reports whether the bulk path may apply req to b: b has no fetcher,
// req names b's partitions in pid order, and becomeLeaderOrFollower would accept the request and
// each of its partitions (so neither path answers with an error, which the bulk path does not
// build).
func (e *Engine) bulkStartApplies(b *broker, req *LeaderAndIsrRequest) bool {
	if len(b.fetchers) != 0 || len(req.Partitions) != len(b.hosted) ||
		(e.era.brokerEpochs && req.BrokerEpoch < b.brokerEpoch) || req.ControllerEpoch < b.controllerEpoch {
		return false
	}
	for i := range req.Partitions {
		ps, r := &req.Partitions[i], &b.replicas[i]
		if p := r.p; ps.TP.Partition != p.index || ps.TP.Topic != p.topic ||
			!slices.Contains(ps.Replicas, b.id) || r.Offline() || ps.LeaderEpoch <= r.LeaderEpoch() {
			return false
		}
	}
	return true
}

// fetcherIDs are the fetcher ids of the partitions of restart (indexes into req and b's
// replicas), and how many partitions each fetcher will take, at leader·num.replica.fetchers + id
// (an array: a map updated per partition cost more than the rest of the count). counts is nil
// when that array would be large (thousands of fetchers per leader): the threads then grow as
// they fill.
func (e *Engine) fetcherIDs(b *broker, req *LeaderAndIsrRequest, restart []int32) (ids, counts []int32) {
	nf := e.cfg.NumReplicaFetchers
	ids = make([]int32, len(restart))
	if n := int64(len(e.brokers)) * nf; n <= 1<<20 {
		counts = make([]int32, n)
	}
	for k, i := range restart {
		p := b.replicas[i].p
		ids[k] = brk.FetcherID(p.topic, p.index, nf)
		if counts != nil {
			counts[int64(req.Partitions[i].Leader)*nf+int64(ids[k])]++
		}
	}
	return ids, counts
}

// startArena holds the arrays a broker's leaders keep from its first LeaderAndIsr: their ISRs,
// their followers' state and their epoch caches' first entries, cut in turn (capped windows: an
// append copies), three allocations where each leader made three. Its nil value allocates each
// array on its own (makeLeader).
type startArena struct {
	ids    []int32
	reps   []brk.Replica
	epochs []commitlog.EpochEntry
}

// newStartArena sizes an arena for the leaders among req's partitions (b's replicas).
func newStartArena(b *broker, req *LeaderAndIsrRequest) *startArena {
	ids, reps, leaders := 0, 0, 0
	for i := range req.Partitions {
		if ps := &req.Partitions[i]; ps.Leader == b.id {
			ids += len(ps.ISR)
			reps += max(0, len(b.replicas[i].p.hosts)-1)
			leaders++
		}
	}
	return &startArena{ids: make([]int32, 0, ids), reps: make([]brk.Replica, 0, reps),
		epochs: make([]commitlog.EpochEntry, 0, leaders)}
}

// entry is an empty array with room for one epoch cache entry (nil: AssignIn allocates).
func (a *startArena) entry() []commitlog.EpochEntry {
	if a == nil || len(a.epochs) == cap(a.epochs) {
		return nil
	}
	at := len(a.epochs)
	a.epochs = a.epochs[:at+1]
	return a.epochs[at : at : at+1]
}

// clone is a copy of isr (slices.Clone: nil stays nil).
func (a *startArena) clone(isr []int32) []int32 {
	if a == nil || isr == nil {
		return slices.Clone(isr)
	}
	at := len(a.ids)
	a.ids = append(a.ids, isr...)
	return a.ids[at:len(a.ids):len(a.ids)]
}

// remotes is an empty array with room for n followers' state (nil: ResetRemotesIn allocates).
func (a *startArena) remotes(n int) []brk.Replica {
	if a == nil || n <= 0 || len(a.reps)+n > cap(a.reps) {
		return nil
	}
	at := len(a.reps)
	a.reps = a.reps[:at+n]
	return a.reps[at : at : at+n]
}
