package engine

import (
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
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
//     (brk.StartArena), and the fetchers are sized once for their partitions, instead of an
//     allocation or a growth each.
func (e *Engine) applyFirstLeaderAndIsr(b *broker, req *LeaderAndIsrRequest) {
	if e.generalStart || !e.bulkStartApplies(b, req) {
		e.becomeLeaderOrFollower(b, req)
		return
	}
	e.bulkStarts++
	h, rm := b.Broker, b.rm
	rules := h.ReplicaRules()
	rm.SetControllerEpoch(req.ControllerEpoch)
	arena := e.newStartArena(b, req)
	for i := range req.Partitions {
		if ps := &req.Partitions[i]; ps.Leader == b.id {
			r := b.ReplicaAt(i)
			rm.MakeLeader(h, r.Pid(), r, *ps, arena)
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
		r := b.ReplicaAt(i)
		if !slices.Contains(req.LiveLeaders, ps.Leader) {
			r.SessionsChanged()
			r.Create()
			continue
		}
		if rm.MakeFollower(h, &rules, r.Pid(), r, *ps) {
			if restart == nil {
				restart = make([]int32, 0, len(req.Partitions)-i)
			}
			restart = append(restart, int32(i))
		}
	}
	ids, counts := e.fetcherIDs(b, req, restart)
	for k, i := range restart {
		ps, r := &req.Partitions[i], b.ReplicaAt(int(i))
		st, ok := rm.FollowerRestarts(h, &rules, r.Pid(), r, ps)
		if !ok {
			continue
		}
		// addFetcher, with the fetcher id known and a new thread sized for what it will take.
		f := b.fetchers.Started(h, ps.Leader, ids[k])
		if f.Len() == 0 && counts != nil {
			f.Reserve(int(counts[int64(ps.Leader)*e.cfg.NumReplicaFetchers+int64(ids[k])]))
		}
		if f.Add(st, r, e.tpOf(r.Pid())) {
			f.WakeUp(h, e.now)
		}
	}
	rm.StartCheckpoints(h, &rules)
	e.shutdownIdleFetchers(b)
}

// bulkStartApplies reports whether the bulk path may apply req to b: b has no fetcher,
// req names b's partitions in pid order, and becomeLeaderOrFollower would accept the request and
// each of its partitions (so neither path answers with an error, which the bulk path does not
// build).
func (e *Engine) bulkStartApplies(b *broker, req *LeaderAndIsrRequest) bool {
	if len(*b.fetchers) != 0 || len(req.Partitions) != len(b.Hosted()) ||
		(e.era.brokerEpochs && req.BrokerEpoch < b.brokerEpoch) || req.ControllerEpoch < b.rm.ControllerEpoch() {
		return false
	}
	for i := range req.Partitions {
		ps, r := &req.Partitions[i], b.ReplicaAt(i)
		if tp := e.tpOf(r.Pid()); ps.TP.Partition != tp.Partition || ps.TP.Topic != tp.Topic ||
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
		tp := e.tpOf(b.ReplicaAt(int(i)).Pid())
		ids[k] = brk.FetcherID(tp.Topic, tp.Partition, nf)
		if counts != nil {
			counts[int64(req.Partitions[i].Leader)*nf+int64(ids[k])]++
		}
	}
	return ids, counts
}

// newStartArena sizes an arena for the leaders among req's partitions (b's replicas).
func (e *Engine) newStartArena(b *broker, req *LeaderAndIsrRequest) *brk.StartArena {
	ids, reps, leaders := 0, 0, 0
	for i := range req.Partitions {
		if ps := &req.Partitions[i]; ps.Leader == b.id {
			ids += len(ps.ISR)
			reps += max(0, len(ps.Replicas)-1) // the assignment: at the start, the partition's hosts
			leaders++
		}
	}
	return brk.NewStartArena(ids, reps, leaders)
}
