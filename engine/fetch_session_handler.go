package engine

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
// state, brk.FetcherThread's, which also gathers the Fetch: Build); this file makes the request.

// buildFetch makes the thread's next Fetch (brk.FetcherThread.Build: RemoteLeaderEndPoint
// .buildFetch with FetchSessionHandler.Builder), or reports that there is none to send and the
// earliest backoff deadline of a delayed partition. Before fetch sessions every Fetch is full and
// sessionless. Before an incremental build the tests' followerCheck looks at the change list
// (fetcher_check.go).
func (e *Engine) buildFetch(f *fetcher, into []FetchPartition) (req FetchRequest, ok bool, next int64) {
	h := f.Session()
	sessions := e.era.fetchSessions
	if e.followerCheck != nil && sessions && !h.Full() && !e.followerWalkAll {
		e.checkFollowerChanges(f)
	}
	// (The era's flags are passed out: it is a large value.)
	parts, forgotten, next, ok := f.Build(sessions, e.followerWalkAll, e.era.fencing, e.era.truncateOnFetch, e.now,
		max(1, e.cfg.ReplicaFetchBackoffMs), e.pidOf, into)
	if !ok {
		return req, false, next
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
