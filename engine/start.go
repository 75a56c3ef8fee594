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
// network round trip at time 0; nobody reads the answer). When b is fresh (bulkStartPlan) it
// is becomeLeaderOrFollower simplified:
//   - each partition's replica is the broker's i-th (the controller lists b's partitions in pid
//     order), where the general path looks each up by name, three times;
//   - nothing is removed from fetchers (b has none), and no answer is built;
//   - the leaders' ISRs, followers' state and first epoch cache entries are cut from three arrays
//     (brk.StartArena), and the fetchers are sized once for their partitions, instead of an
//     allocation or a growth each;
//   - the request is read whole once (bulkStartPlan, which lists its leaders and followers),
//     then each partition once more: a broker's request is some 250 KB at 100,000 partitions,
//     out of the first-level cache, where each of five passes cost a miss per partition.
func (e *Engine) applyFirstLeaderAndIsr(b *broker, req *LeaderAndIsrRequest) {
	if e.generalStart || !e.bulkStartPlan(b, req) {
		e.becomeLeaderOrFollower(b, req)
		return
	}
	e.bulkStarts++
	h, rm := b.Broker, b.rm
	rules := h.ReplicaRules()
	rm.SetControllerEpoch(req.ControllerEpoch)
	plan := &e.startPlan
	arena := brk.NewStartArena(len(plan.leaders), plan.ids, plan.reps)
	for _, i := range plan.leaders {
		r := b.ReplicaAt(int(i))
		rm.MakeLeader(h, r.Pid(), r, req.Partitions[i], arena)
	}
	// makeFollowers: the followers whose leader lives become followers, in order; then each
	// whose fetcher restarts is completed and handed to its fetcher. Its fetcher id and each
	// fetcher's count of partitions are found as it is listed (fetcherCounts).
	var restart, ids []int32
	counts := e.fetcherCounts()
	nf := e.cfg.NumReplicaFetchers
	followers := plan.followers
	for k, i := range followers {
		ps, r := &req.Partitions[i], b.ReplicaAt(int(i))
		if !slices.Contains(req.LiveLeaders, ps.Leader) {
			r.SessionsChanged()
			r.Create()
			continue
		}
		if rm.MakeFollower(h, &rules, r.Pid(), r, *ps) {
			if restart == nil {
				n := len(followers) - k
				restart, ids = make([]int32, 0, n), make([]int32, 0, n)
			}
			id := brk.FetcherID(ps.TP.Topic, ps.TP.Partition, nf)
			restart, ids = append(restart, i), append(ids, id)
			if counts != nil {
				counts[int64(ps.Leader)*nf+int64(id)]++
			}
		}
	}
	for k, i := range restart {
		ps, r := &req.Partitions[i], b.ReplicaAt(int(i))
		st, ok := rm.FollowerRestarts(h, &rules, r.Pid(), r, ps)
		if !ok {
			continue
		}
		// addFetcher, with the fetcher id known and a new thread sized for what it will take.
		f := b.fetchers.Started(h, ps.Leader, ids[k])
		if f.Len() == 0 && counts != nil {
			f.Reserve(int(counts[int64(ps.Leader)*nf+int64(ids[k])]))
		}
		if f.Add(st, r) {
			f.WakeUp(h, e.now)
		}
	}
	rm.StartCheckpoints(h, &rules)
	e.shutdownIdleFetchers(b)
}

// startPlan is what bulkStartPlan found of a broker's first LeaderAndIsr: the indexes (into the
// request and the broker's replicas) of the partitions it leads and follows, in order, and the
// sizes of the leaders' arena (brk.NewStartArena: leaders, ISR members, followers). Its lists
// are reused from broker to broker.
type startPlan struct {
	leaders, followers []int32
	ids, reps          int
}

// bulkStartPlan reports whether the bulk path may apply req to b: b has no fetcher, req names
// b's partitions in pid order, and becomeLeaderOrFollower would accept the request and each of
// its partitions (so neither path answers with an error, which the bulk path does not build).
// If so, e.startPlan is req's plan.
func (e *Engine) bulkStartPlan(b *broker, req *LeaderAndIsrRequest) bool {
	if len(*b.fetchers) != 0 || len(req.Partitions) != len(b.Hosted()) ||
		(e.era.brokerEpochs && req.BrokerEpoch < b.brokerEpoch) || req.ControllerEpoch < b.rm.ControllerEpoch() {
		return false
	}
	plan := &e.startPlan
	plan.leaders, plan.followers, plan.ids, plan.reps = plan.leaders[:0], plan.followers[:0], 0, 0
	for i := range req.Partitions {
		ps, r := &req.Partitions[i], b.ReplicaAt(i)
		if tp := e.tpOf(r.Pid()); ps.TP.Partition != tp.Partition || ps.TP.Topic != tp.Topic ||
			!slices.Contains(ps.Replicas, b.id) || r.Offline() || ps.LeaderEpoch <= r.LeaderEpoch() {
			return false
		}
		if ps.Leader == b.id {
			plan.leaders = append(plan.leaders, int32(i))
			plan.ids += len(ps.ISR)
			plan.reps += max(0, len(ps.Replicas)-1) // the assignment: at the start, the partition's hosts
		} else {
			plan.followers = append(plan.followers, int32(i))
		}
	}
	return true
}

// fetcherCounts is an array for how many partitions each fetcher will take, at
// leader·num.replica.fetchers + id (an array: a map updated per partition cost more than the rest
// of the count), or nil when that array would be large (thousands of fetchers per leader): the
// threads then grow as they fill.
func (e *Engine) fetcherCounts() []int32 {
	if n := int64(len(e.brokers)) * e.cfg.NumReplicaFetchers; n <= 1<<20 {
		return make([]int32, n)
	}
	return nil
}
