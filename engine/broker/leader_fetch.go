package broker

import (
	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// The leader's side of Fetch: KafkaApis.handleFetchRequest's FetchManager.newContext (full,
// incremental, sessionless), ReplicaManager.fetchMessages with Partition.fetchRecords, and the
// follower state a read updates. A follower's fetch is answered at once when it brings an error or
// a divergence, or when enough bytes are there; otherwise it waits in the fetch purgatory
// (delayed_fetch.go) up to replica.fetch.wait.max.ms for data. A consumer's fetch (replica id
// -1) reads only up to the high watermark, and waits the same way, up to its fetch.max.wait.ms,
// for fetch.min.bytes below the high watermark (DelayedFetch with FetchIsolation.HIGH_WATERMARK;
// 0.10.2.2's fetchOnlyCommitted).

// LeaderFetchRules are the rules the leader's side of Fetch follows: those of the protocol era
// and the settings it reads.
type LeaderFetchRules struct {
	// Sessions: fetches belong to incremental fetch sessions (KIP-227, 1.1); before, every fetch
	// is sessionless and full.
	Sessions bool
	// SessionTouchedByFetch: every incremental fetch touches its session (KAFKA-9137, 2.4);
	// before, only one that changed its size, at the old time.
	SessionTouchedByFetch bool
	// NotLeaderForUnknownLocal is ReplicaRules' rule for a partition without its Partition
	// object yet (CheckLeaderRequest).
	NotLeaderForUnknownLocal bool
	// FailedReadResetsFollower: a follower's read that failed (fenced, out of range) still
	// records its position, LogReadResult's unknown one (before 2.4, KAFKA-8400): followerReadFailed.
	FailedReadResetsFollower bool
	// SessionKeepsLeaderEpoch: a fetch session keeps its partitions' currentLeaderEpoch, so an
	// incremental fetch is fenced as a full one (KAFKA-9338, 2.5); before, only the full fetch
	// that creates a session is checked (FetchSession.keepsLeaderEpoch).
	SessionKeepsLeaderEpoch bool
	// MaxBytes is replica.fetch.max.bytes (per partition) and RecordSizeBytes the size of one
	// record; SessionSlots is max.incremental.fetch.session.cache.slots.
	MaxBytes, RecordSizeBytes, SessionSlots int64
	// ResponseMaxBytes is replica.fetch.response.max.bytes: the bytes of one whole answer to a
	// follower (responseLimit).
	ResponseMaxBytes int64
	// ReadAll (tests only) reads every session partition at every incremental fetch, as Kafka's
	// leader does: the reference the dirty reads must match event for event. Check (tests only)
	// has every incremental fetch also read its whole session and is told where that answer
	// differs from the dirty partitions' one (fetch_session_check.go).
	ReadAll bool
	Check   func(problem string)
}

// FetchMessages handles Fetch m: KafkaApis.handleFetchRequest's FetchManager.newContext, then
// ReplicaManager.fetchMessages over what the context reads. A full fetch reads every partition
// it lists (and, at epoch 0, creates a session when answered, closing the one it names); an
// incremental one updates its session and reads the session's partitions. Before fetch sessions
// (1.1), and for consumers, every fetch is sessionless and full.
func (rm *ReplicaManager) FetchMessages(h Host, m *protocol.Message) {
	req := m.Fetch
	rules := h.LeaderFetchRules()
	switch {
	case !rules.Sessions:
		rm.fetchMessages(h, &rules, m, false)
	case req.SessionEpoch == protocol.InitialEpoch || req.SessionEpoch == protocol.FinalEpoch:
		if s := rm.sessions.Get(req.SessionID); req.SessionID != protocol.InvalidSessionID && s != nil {
			rm.removeSession(s) // a full fetch closes the session it names
		}
		rm.fetchMessages(h, &rules, m, req.SessionEpoch == protocol.InitialEpoch)
	default:
		rm.incrementalFetch(h, &rules, m)
	}
}

// fetchMessages is ReplicaManager.fetchMessages over a full fetch (FullFetchContext or
// SessionlessFetchContext): it reads every partition, updating follower state, and answers at
// once or parks the fetch on every partition it lists.
func (rm *ReplicaManager) fetchMessages(h Host, rules *LeaderFetchRules, m *protocol.Message, newSession bool) {
	req := m.Fetch
	// The reads go into the buffer a parked fetch left (parkedReads), left in turn if this one
	// parks too; an answer sent at once keeps it.
	data := rm.parkedReads(len(req.Partitions))
	var bytes int64
	now := req.MaxWaitMs <= 0 || len(req.Partitions) == 0
	// The fetch is parked on its partitions in the same walk, while it may still wait; if it is
	// answered at once it is marked done, which every watch list skips (nothing checks a watch
	// list during the walk).
	rm.parkSeq++
	df := &DelayedFetch{req: m, newSession: newSession, readAt: h.Now(), seq: rm.parkSeq}
	lim := newResponseLimit(rules, req)
	for i := range req.Partitions {
		fp := &req.Partitions[i]
		pid, r := h.ReplicaNamed(fp.TP)
		data = append(data, protocol.FetchPartitionData{})
		d := &data[len(data)-1]
		bytes += rm.readPartitionTo(d, h, rules, pid, r, req, fp, true, &lim)
		if d.Error != protocol.ErrNone || d.DivergingEpoch != nil {
			now = true
		}
		if !now && r != nil {
			r.watch(df)
		}
	}
	if now || bytes >= req.MinBytes {
		df.done = true
		rm.answerFull(h, rules, df, data)
		return
	}
	clear(data) // its records and divergences are not kept alive
	rm.parkedData = data[:0]
	h.ScheduleFetchTimeout(df, h.Now()+req.MaxWaitMs)
}

// parkedReads is an empty buffer for n partitions' reads: the one a full fetch that parked left
// (its reads are dropped: completeFetch reads again), taken while in use, or a new one. The next
// full fetch or the answer of a parked one takes it, so it is not kept long: at a cluster's start
// every follower's first Fetch, full, parks, and their reads were 17.6 MB at 100,000 partitions,
// allocated and dropped at once.
func (rm *ReplicaManager) parkedReads(n int) []protocol.FetchPartitionData {
	data := rm.parkedData[:0]
	rm.parkedData = nil
	if cap(data) < n {
		data = make([]protocol.FetchPartitionData, 0, n)
	}
	return data
}

// answerFull sends a full answer (every partition; FullFetchContext or SessionlessFetchContext):
// at epoch 0 it creates a session first, if the cache has room, from the request and the answer.
func (rm *ReplicaManager) answerFull(h Host, rules *LeaderFetchRules, df *DelayedFetch, data []protocol.FetchPartitionData) {
	req := df.req.Fetch
	resp := protocol.FetchResponse{Partitions: data}
	if df.newSession {
		if s := rm.sessions.MaybeCreateSession(h.Now(), rules.SessionSlots, req.ReplicaID != protocol.ClientNode, len(data),
			rm.removeSession, func(s *FetchSession) { s.fill(h, req, df.readAt, data) }); s != nil {
			resp.SessionID = s.ID()
		}
	}
	h.SendFetchResponse(df.req, resp)
}

// incrementalFetch is an incremental fetch (epoch > 0): the session must exist and expect this
// epoch; its partitions take the request's changes and lose the forgotten ones; then its dirty
// partitions are read (IncrementalFetchContext).
func (rm *ReplicaManager) incrementalFetch(h Host, rules *LeaderFetchRules, m *protocol.Message) {
	req := m.Fetch
	s := rm.sessions.Get(req.SessionID)
	switch {
	case s == nil:
		h.SendFetchResponse(m, protocol.FetchResponse{Error: protocol.ErrFetchSessionIDNotFound, Partitions: []protocol.FetchPartitionData{}})
		return
	case s.Epoch() != req.SessionEpoch:
		h.SendFetchResponse(m, protocol.FetchResponse{Error: protocol.ErrInvalidFetchSessionEpoch, Partitions: []protocol.FetchPartitionData{}})
		return
	}
	if req.BrokerEpoch != s.brokerEpoch || rules.ReadAll {
		// Every read updates the follower's broker epoch: none is clean until read again.
		s.markAllDirty()
		s.brokerEpoch = req.BrokerEpoch
	}
	for i := range req.Partitions { // FetchSession.update
		fp := &req.Partitions[i]
		pid := h.PidOf(fp.TP)
		if i := s.index(pid); i >= 0 {
			s.markDirty(i)
			s.parts[i].updateRequestParams(fp, s.keepsLeaderEpoch)
		} else {
			s.add(pid, h.Replica(pid), fp)
		}
	}
	for _, tp := range req.ForgottenTopicsData {
		s.remove(h.PidOf(tp))
	}
	if len(s.parts) == 0 {
		// Nothing left: the session is closed and the (empty) request answered sessionless.
		rm.removeSession(s)
		h.SendFetchResponse(m, protocol.FetchResponse{Partitions: []protocol.FetchPartitionData{}})
		return
	}
	if rules.SessionTouchedByFetch {
		rm.sessions.Touch(s, h.Now())
	} else if len(s.parts) != s.CachedSize() {
		rm.sessions.Touch(s, s.LastUsedMs()) // before KAFKA-9137: only a new size, at the old time
	}
	s.nextEpoch()
	s.readAt = h.Now()
	rm.readSession(h, rules, m, s)
}

// readSession is ReplicaManager.fetchMessages over an incremental fetch's session: the dirty
// partitions are read, updating follower state (a clean one's read would only set the follower's
// times: readAt holds them); then the fetch is answered or parked.
func (rm *ReplicaManager) readSession(h Host, rules *LeaderFetchRules, m *protocol.Message, s *FetchSession) {
	req := m.Fetch
	var full *protocol.FetchResponse
	if rules.Check != nil {
		full = rm.readWholeSession(h, rules, s, req)
	}
	work := rm.takeDirty(s)
	data := rm.sessionData[:0]
	var bytes int64
	now := req.MaxWaitMs <= 0
	lim := newResponseLimit(rules, req)
	for _, i := range work {
		cp := &s.parts[i]
		fp := cp.fetchData() // unnamed: the answer names what it carries
		data = append(data, protocol.FetchPartitionData{})
		d := &data[len(data)-1]
		bytes += rm.readPartitionTo(d, h, rules, cp.pid, cp.r, req, &fp, true, &lim)
		if d.Error != protocol.ErrNone || d.DivergingEpoch != nil {
			now = true
		}
	}
	if now || bytes >= req.MinBytes {
		// The partitions with news are moved to the front of the reads, then copied out.
		kept := 0
		for i, j := range work {
			cp := &s.parts[j]
			cp.dirty = false
			must := cp.maybeUpdateResponseData(&data[i], true)
			if !s.clean(cp, &data[i]) {
				s.redirty(j)
			}
			if must {
				if len(data[i].Records) > 0 {
					s.moveToEnd(j)
				}
				data[kept] = data[i]
				data[kept].TP = cp.name(h)
				kept++
			}
		}
		resp := protocol.FetchResponse{SessionID: s.ID(), Partitions: data[:kept]}
		if full != nil {
			rm.compareSessionAnswers(h, rules, s, full, resp)
		}
		h.SendSessionAnswer(m, resp)
	} else {
		s.dirty = append(s.dirty, work...) // still dirty: the answer will read them again
		rm.parkSeq++
		s.parked = s.newPark(m, rm.parkSeq)
		h.ScheduleFetchTimeout(s.parked, h.Now()+req.MaxWaitMs)
	}
	clear(data)
	rm.sessionData = data[:0]
	rm.doneWithDirty(work)
}

// ReadPartition reads one partition of fetch req from r, the broker's replica of pid (nil if it
// has none), as Partition.fetchRecords does, and, for a follower's first read (update), updates
// what the leader knows of the follower. It returns the data and the bytes it holds.
func (rm *ReplicaManager) ReadPartition(h Host, pid int32, r *Partition, req *protocol.FetchRequest,
	fp *protocol.FetchPartition, update bool) (protocol.FetchPartitionData, int64) {
	rules := h.LeaderFetchRules()
	return rm.readPartition(h, &rules, pid, r, req, fp, update, nil)
}

func (rm *ReplicaManager) readPartition(h Host, rules *LeaderFetchRules, pid int32, r *Partition, req *protocol.FetchRequest,
	fp *protocol.FetchPartition, update bool, lim *responseLimit) (protocol.FetchPartitionData, int64) {
	var d protocol.FetchPartitionData
	n := rm.readPartitionTo(&d, h, rules, pid, r, req, fp, update, lim)
	return d, n
}

// consumerMaxPartitionFetchBytes is the consumer's max.partition.fetch.bytes default
// (ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES, 0.10.2.2 to 3.7.0).
const consumerMaxPartitionFetchBytes = 1 << 20

// responseLimit is what is left of a follower's answer's byte limit while its partitions are
// read in turn (ReplicaManager.readFromLocalLog, 0.10.2.2 to 3.7.0): each partition reads at
// most min(replica.fetch.max.bytes, the bytes left of replica.fetch.response.max.bytes), and at
// least one record (minOneMessage: a follower's Fetch is v3 or later, hardMaxBytesLimit false)
// until a partition returned records. nil: no response limit (a consumer's one-partition Fetch,
// the tests' single reads).
type responseLimit struct {
	left   int64
	minOne bool
}

func newResponseLimit(rules *LeaderFetchRules, req *protocol.FetchRequest) responseLimit {
	if req.ReplicaID == protocol.ClientNode || rules.ResponseMaxBytes <= 0 {
		return responseLimit{left: -1, minOne: true}
	}
	return responseLimit{left: rules.ResponseMaxBytes, minOne: true}
}

// read is how many of want records of size size a partition reads under partition limit
// maxBytes, and the bytes that read takes off the answer's limit (LogSegment.read and
// ReplicaManager.readFromLocalLog, 0.10.2.2 to 3.7.0): adjustedMaxSize is min(maxBytes, the bytes
// left), at least the first record while minOneMessage; the read is fetchSize = min(the bytes
// there are, adjustedMaxSize), of which the follower keeps the whole records, but all of it,
// a partial record at its end included, counts as read (records.sizeInBytes): off the bytes
// left, and toward fetch.min.bytes. When all of them fit, the usual case (a follower's fetch
// finds a record or two), it is want, found without a division.
func (l *responseLimit) read(want, maxBytes, size int64) (n, bytes int64) {
	limited := l != nil && l.left >= 0
	if limited {
		maxBytes = min(maxBytes, l.left)
	}
	if want*size <= maxBytes {
		return want, want * size
	}
	if !limited || l.minOne {
		maxBytes = max(maxBytes, size)
	}
	return maxBytes / size, maxBytes
}

// readBatches is read over log's batches from offset from (a follower's read; a consumer reads
// records, read): at least the whole first batch while minOneMessage (LogSegment.read's
// adjustedMaxSize = max(maxSize, the first batch's size)), and of the fetchSize bytes read the
// follower keeps the whole batches. Before message format v2 (0.10.2) every record is its own
// batch, and this is read.
func (l *responseLimit) readBatches(log *commitlog.Log, from, want, maxBytes, size int64) (n, bytes int64) {
	limited := l != nil && l.left >= 0
	if limited {
		maxBytes = min(maxBytes, l.left)
	}
	if want*size <= maxBytes {
		return want, want * size // every batch ends by the LEO: all of them are whole
	}
	if !limited || l.minOne {
		maxBytes = max(maxBytes, (log.BatchEnd(from, from+want)-from)*size)
	}
	bytes = min(want*size, maxBytes)
	return log.WholeBatchesEnd(from, from+bytes/size) - from, bytes
}

// took counts a partition's read of bytes: readFromLocalLog stops ignoring the limits once a
// partition returned some bytes, and takes them off the bytes left.
func (l *responseLimit) took(bytes int64) {
	if l == nil || l.left < 0 || bytes == 0 {
		return
	}
	l.minOne = false
	l.left = max(0, l.left-bytes)
}

// readPartitionTo is readPartition writing the data into *d, a zero entry of the answer's
// partitions: a fetch round's reads write in place, where returning the data by value copied
// it twice on its way into the answer (issue 12). Nothing a read sets off (a HW move, a produce
// completed, a parked fetch answered) writes into the answer being built.
func (rm *ReplicaManager) readPartitionTo(d *protocol.FetchPartitionData, h Host, rules *LeaderFetchRules, pid int32, r *Partition,
	req *protocol.FetchRequest, fp *protocol.FetchPartition, update bool, lim *responseLimit) int64 {
	d.TP, d.HighWatermark, d.LogStartOffset, d.LogEndOffset = fp.TP, -1, -1, -1
	if d.Error = r.CheckLeaderRequest(fp.CurrentLeaderEpoch, req.ReplicaID, rules.NotLeaderForUnknownLocal); d.Error != protocol.ErrNone {
		if update && rules.FailedReadResetsFollower && req.ReplicaID != protocol.ClientNode {
			rm.followerReadFailed(h, pid, r, req.ReplicaID)
		}
		return 0
	}
	log := r.Log()
	hw, start, leo := log.HighWatermark(), log.LogStartOffset(), log.LogEndOffset()
	d.HighWatermark, d.LogStartOffset, d.LogEndOffset = hw, start, leo
	consumer := req.ReplicaID == protocol.ClientNode
	if fp.LastFetchedEpoch >= 0 && !consumer {
		ep, off := log.Cache().EndOffsetFor(fp.LastFetchedEpoch, leo)
		switch {
		case ep == -1 && off == -1, fp.FetchOffset < start:
			d.Error = protocol.ErrOffsetOutOfRange
			return 0
		case ep < fp.LastFetchedEpoch || off < fp.FetchOffset:
			// No follower state update on a divergence (KAFKA-13141).
			d.DivergingEpoch = &protocol.EpochEndOffset{Epoch: ep, EndOffset: off}
			return 0
		}
	}
	if fp.FetchOffset > leo || fp.FetchOffset < start {
		d.Error = protocol.ErrOffsetOutOfRange
		if update && !consumer && rules.FailedReadResetsFollower {
			rm.followerReadFailed(h, pid, r, req.ReplicaID)
		}
		return 0
	}
	end := leo
	if consumer {
		end = hw
		if fp.MaxRecords > 0 {
			end = min(end, fp.FetchOffset+fp.MaxRecords)
		}
	}
	// replica.fetch.max.bytes per partition, within what is left of the answer's
	// replica.fetch.response.max.bytes; the first record always fits while none was read. A
	// consumer's partition limit is its own max.partition.fetch.bytes (ConsumerConfig, 1 MiB in
	// every era), not the brokers' replica.fetch.max.bytes.
	maxBytes := rules.MaxBytes
	if consumer {
		maxBytes = consumerMaxPartitionFetchBytes
	}
	var n int64 // the bytes read
	from := fp.FetchOffset
	if consumer {
		if want := end - from; want > 0 {
			var recs int64
			recs, n = lim.read(want, maxBytes, rules.RecordSizeBytes)
			end = from + recs
		}
	} else if from < end {
		// A follower's read starts at the batch translateOffset finds (LogSegment.read,
		// 0.11.0.2 to 3.7.0: the first batch whose last offset is at or past the fetch offset):
		// from inside a batch the whole batch, records below its offset included, which its
		// Log.append refuses (fetcher_answers.go's appendBelowEnd); from a Gap the batch after
		// it, past the fetch offset; nothing from a Gap at the log's end. Before message format
		// v2 (0.10.2) every record is its own batch.
		if from = log.NextRecord(from); from < end {
			from = log.BatchStart(from)
		}
		end = min(end, log.RecordsEnd())
		if want := end - from; want > 0 {
			var recs int64
			recs, n = lim.readBatches(log, from, want, maxBytes, rules.RecordSizeBytes)
			end = from + recs
		} else {
			end = from
		}
	}
	d.Records = log.Read(from, end)
	if len(d.Records) > 0 {
		d.RecordsBefore = fp.FetchOffset - from
	}
	lim.took(n)
	if update && !consumer {
		rm.updateFollowerFetchState(h, pid, r, req.ReplicaID, fp.FetchOffset, fp.LogStartOffset, leo, req.BrokerEpoch)
	}
	return n
}

// updateFollowerFetchState is ReplicaManager.updateFollowerFetchState with
// Partition.updateFollowerFetchState: follower's fetch at offset f while the leader's LEO is leo
// (Replica.updateFetchState), then maybeExpandIsr and the HW's advance, which may complete
// parked fetches (a consumer's waits for the HW) and produces: tryCompleteDelayedRequests.
func (rm *ReplicaManager) updateFollowerFetchState(h Host, pid int32, r *Partition, follower int32, f, logStart, leo int64, brokerEpoch int64) {
	rr := r.Remote(follower)
	if rr == nil {
		return
	}
	moved := rr.UpdateFetchState(h.Now(), f, logStart, leo, brokerEpoch)
	rm.MaybeExpandIsr(h, pid, r, rr)
	hw := h.HWRules()
	if !moved && !hw.EveryFollowerFetch {
		return // 2.4+ (KAFKA-8841): the follower's LEO did not move, the HW is not recomputed
	}
	rm.followerFetchHW(h, pid, r, follower, &hw)
}

// followerFetchHW is the HW's recompute after a follower's fetch (Partition.maybeIncrementLeaderHW
// at the fetch's time). Before 2.4 every follower fetch recomputes it, so the HW rises at the
// first fetch after a caught-up follower outside the ISR stops counting as caught up: the
// sessions caching r read it at every fetch meanwhile (FetchSession.clean keeps it dirty).
func (rm *ReplicaManager) followerFetchHW(h Host, pid int32, r *Partition, follower int32, hw *HWRules) {
	if rm.MaybeIncrementLeaderHW(h, pid, r, follower) {
		rm.tryCompleteDelayedRequests(h, pid, r)
	}
	if hw.EveryFollowerFetch && r.outsiderCaughtUp(h.Now(), hw.LagTimeMaxMs) {
		r.SessionsChanged()
	}
}

// followerReadFailed is a follower's read of leader r that failed, before 2.4: ReplicaManager
// .updateFollowerLogReadResults (0.10.2.2 l.913, 2.1.1 l.1362) records every read, a failed one
// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, OFFSET_OUT_OF_RANGE: readFromLocalLog's
// LogReadResult with LogOffsetMetadata.UnknownOffsetMetadata, leaderLogEndOffset and fetchTimeMs
// -1) included, so the leader forgets where the follower is (Replica.ReadFailed) until its next
// good read, and recomputes the HW (maybeExpandIsr). From 2.4 (KAFKA-8400) a failed read
// changes nothing.
func (rm *ReplicaManager) followerReadFailed(h Host, pid int32, r *Partition, follower int32) {
	if r == nil || !r.IsLeader() || r.offline {
		return // no partition to record it in (nonOfflinePartition)
	}
	rr := r.Remote(follower)
	if rr == nil {
		return
	}
	rr.ReadFailed()
	hw := h.HWRules()
	rm.followerFetchHW(h, pid, r, follower, &hw)
}

// takeDirty hands out the session's dirty partitions' indices, sorted: partition order (Kafka's
// order is the session's; here the answer is in partition order); the session's list starts
// anew in the spare buffer. No partition is added or removed while they are out.
func (rm *ReplicaManager) takeDirty(s *FetchSession) []int32 {
	work := s.dirty
	s.dirty, rm.dirtySpare = rm.dirtySpare[:0], nil
	if len(work) > 1 { // a steady round's one dirty partition needs no sort call
		s.inOrder(work) // read in the session's order (IncrementalFetchContext.foreachPartition)
	}
	return work
}

// doneWithDirty gives back the buffer takeDirty handed out.
func (rm *ReplicaManager) doneWithDirty(work []int32) { rm.dirtySpare = work[:0] }

// removeSession takes a session out of the cache (FetchSessionCache.remove). Its clean
// partitions' follower times are written down; a session whose fetch still waits in purgatory
// stays on its partitions' lists, every partition dirty, until the fetch is answered.
func (rm *ReplicaManager) removeSession(s *FetchSession) {
	rm.sessions.Remove(s)
	s.markAllDirty()
	if s.parked != nil && !s.parked.done {
		s.removed = true
		return
	}
	s.unlinkAll()
}

// LoseFetchSessions drops the broker's FetchSessionCache: its process stopped or restarted. The
// follower times of clean partitions are written down first (a dead broker's replicas still read
// as it left them).
func (rm *ReplicaManager) LoseFetchSessions(h Host) {
	for _, s := range rm.sessions.Sessions() {
		s.markAllDirty()
	}
	for _, pid := range h.Hosted() {
		if r := h.Replica(pid); r.lead != nil {
			r.lead.fetchSessions = nil
			r.releaseIdle()
		}
	}
	rm.sessions.Clear()
}
