package engine

import (
	"cmp"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
)

// The follower's side of fetch sessions (KIP-227, 1.1): Kafka's FetchSessionHandler, one per
// fetcher thread. The thread's first Fetch is full (session id 0, epoch 0) and the leader's
// answer names the session it created; each next Fetch is incremental (that id, the next epoch)
// and lists only the partitions added to the session or whose fetch data changed (fetch offset,
// log start offset, current leader epoch, last fetched epoch: PartitionData.equals), and forgets
// the partitions that left it. A partition leaves the session when it is not ready to fetch
// (truncating, or backing off after an error) or leaves the thread; it joins again, listed, when
// it is ready. A session error or a failed Fetch makes the next Fetch full again. A new thread
// (a fetcher removed and started again) starts with no session. The handler itself is package
// broker's (brk.FetchSessionHandler, with each partition's SessionPartition kept on its fetch
// state, brk.FetcherThread's); this file builds the Fetch from the thread's partitions
// (brk.FetchBuild does the walk).

// buildFetch is RemoteLeaderEndPoint.buildFetch with FetchSessionHandler.Builder: the partitions
// the thread can fetch now become the session (and what the request carries, for checking the
// answer), the request lists those a full Fetch must (all) or an incremental one must (added or
// changed), and forgets the partitions that left. Before fetch sessions every Fetch is full and
// sessionless. It reports the earliest backoff deadline of a delayed partition. A full build
// looks at every partition; an incremental one only at those on the change list
// (fetcher_changes.go): every other partition is as the last build left it.
func (e *Engine) buildFetch(f *fetcher) (req FetchRequest, ok bool, next int64) {
	h := f.Session()
	sessions := e.era.fetchSessions
	full := !sessions || h.Full()
	walkAll := full || e.followerWalkAll
	if e.followerCheck != nil && !walkAll {
		e.checkFollowerChanges(f)
	}
	// An incremental Fetch's lists are gathered in the thread's buffers, then copied out at their
	// size: the request is shared once sent. (The era's flags are copied out: it is a large value.)
	parts := f.partsBuf[:0]
	if full {
		parts = make([]FetchPartition, 0, f.Len())
	}
	bd := brk.NewFetchBuild(full, e.era.fencing, e.era.truncateOnFetch, e.now, e.now+max(1, e.cfg.ReplicaFetchBackoffMs),
		parts, f.forgetBuf[:0])
	if walkAll {
		f.WalkAll(&bd)
		if e.followerWalkAll {
			f.RecordSent()
		}
	} else {
		f.WalkChanges(&bd)
	}
	parts, forgotten, next := bd.Result()
	if !full && h.HasGone() {
		forgotten = h.AppendGone(forgotten)
		// The request lists partitions in pid order (Kafka: added, then altered).
		slices.SortFunc(forgotten, func(a, b TP) int { return cmp.Compare(e.pidOf(a), e.pidOf(b)) })
	}
	h.Built()
	if !full {
		f.partsBuf, f.forgetBuf = parts[:0], forgotten[:0]
		parts = slices.Clone(parts) // nil if empty
		forgotten = slices.Clone(forgotten)
	}
	sentCount := f.InSessionCount()
	if e.followerWalkAll {
		sentCount = f.SentLen() // the reference counts its list
	}
	f.SetSentCount(sentCount)
	if sentCount == 0 && len(forgotten) == 0 {
		return req, false, next // nothing to send (Kafka: an empty session and nothing to forget)
	}
	b := e.brokers[f.Owner()]
	req = FetchRequest{ReplicaID: b.id, BrokerEpoch: b.brokerEpoch, MaxWaitMs: e.cfg.ReplicaFetchWaitMaxMs,
		MinBytes: e.cfg.ReplicaFetchMinBytes, FetcherID: f.ID(), SessionID: h.SessionID(), SessionEpoch: h.Epoch(),
		Partitions: parts, ForgottenTopicsData: forgotten}
	if !sessions {
		req.SessionID, req.SessionEpoch = InvalidSessionID, FinalEpoch // Fetch before v7: no session
	}
	if req.Partitions == nil {
		req.Partitions = []FetchPartition{}
	}
	return req, true, next
}
