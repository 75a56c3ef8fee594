package engine

import (
	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Shorthands the tests call with the engine's own types (a replica, a broker, the era), for
// what package broker does: the engine's run reaches these through the broker's brk.Broker
// and needs none of them.

// makeLeader and makeFollower are Partition.makeLeader and makeFollower of r on b (tests call
// them; brk.ReplicaManager.MakeLeader, MakeFollower).
func (e *Engine) makeLeader(b *broker, r *replica, ps LeaderAndIsrState) {
	b.rm.MakeLeader(b.Broker, r.Pid(), r, ps, nil)
}

func (e *Engine) makeFollower(b *broker, r *replica, ps LeaderAndIsrState) bool {
	rules := b.Broker.ReplicaRules()
	return b.rm.MakeFollower(b.Broker, &rules, r.Pid(), r, ps)
}

// truncate cuts a replica's log at t and records what was cut (brk.ReplicaManager.Truncate).
func (e *Engine) truncate(r *replica, t int64, reason string) {
	b := e.brokers[r.Broker()]
	b.rm.Truncate(b.Broker, r.Pid(), r, t, reason)
}

// doWork is one turn of f's loop (tests call it).
func (e *Engine) doWork(b *broker, f *fetcher) { f.DoWork(b.Broker) }

// addFetcher gives partition st to b's fetcher for (leader, its fetcher id), starting the thread
// if needed (brk.FetcherManager.AddFetcher).
func (e *Engine) addFetcher(b *broker, leader int32, st fetchState) {
	b.fetchers.AddFetcher(b.Broker, leader, st, e.cfg.NumReplicaFetchers)
}

// initialFetchState is where a new follower starts fetching (brk.InitialFetchState under the
// era's truncate-on-fetch rule).
func (er era) initialFetchState(log *commitlog.Log, pid, currentEpoch int32) fetchState {
	return brk.InitialFetchState(log, pid, currentEpoch, er.truncateOnFetch)
}

// answerOffsetsForEpoch is the leader's answer to OffsetsForLeaderEpoch(asked), as the era
// words it (broker.LastOffsetForLeaderEpoch).
func (er era) answerOffsetsForEpoch(log *commitlog.Log, asked int32) (int32, int64) {
	return brk.LastOffsetForLeaderEpoch(log, asked, er.epochAnswerNamesEpoch)
}

// isrShrinkTask is one run of b's "isr-expiration" task (brk.Broker.IsrExpiration).
func (e *Engine) isrShrinkTask(b *broker) { b.IsrExpiration() }
