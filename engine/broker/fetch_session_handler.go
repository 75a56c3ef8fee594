package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// The follower's side of fetch sessions (KIP-227, 1.1): Kafka's FetchSessionHandler, one per
// fetcher thread. The thread's first Fetch is full (session id 0, epoch 0) and the leader's
// answer names the session it created; each next Fetch is incremental (that id, the next epoch).
// A session error or a failed Fetch makes the next Fetch full again. A new thread (a fetcher
// removed and started again) starts with no session. A partition leaves the session when it is
// not ready to fetch (truncating, or backing off after an error) or leaves the thread; it joins
// again, listed, when it is ready. The partitions' entries (sessionPartitions) are kept on the
// thread's fetch states (SessionPartition), and the handler keeps those that left the thread;
// the thread gathers the Fetch (FetcherThread.Build) and makes the request of it (BuildFetch).

// FetchSessionHandler is FetchSessionHandler's nextMetadata: the session id and epoch of the next
// request, and of the request in flight while there is one. Its zero value is a new thread's: no
// session.
type FetchSessionHandler struct {
	sessionID, epoch int32
	// gone are the partitions that left the thread (removed, failed) while in the session, with
	// what the session last sent for them; the next incremental Fetch forgets them, unless they
	// come back to the thread before it is built (then they are still in the session, as in
	// Kafka, whose handler learns of partitions only when it builds).
	gone []gonePartition
}

// SessionPartition is a partition's entry in the handler's sessionPartitions: whether it is in
// the session and the fetch data the session last sent for it. Its zero value is out of the
// session. It is compared whole (PartitionData.equals), so it stays a small comparable value.
type SessionPartition struct {
	in                                   bool
	fetchOffset, logStartOffset          int64
	currentLeaderEpoch, lastFetchedEpoch int32
}

// InSession is the entry of a partition the session sends with this fetch data.
func InSession(fetchOffset, logStartOffset int64, currentLeaderEpoch, lastFetchedEpoch int32) SessionPartition {
	return SessionPartition{in: true, fetchOffset: fetchOffset, logStartOffset: logStartOffset,
		currentLeaderEpoch: currentLeaderEpoch, lastFetchedEpoch: lastFetchedEpoch}
}

// In reports whether the partition is in the session.
func (sp SessionPartition) In() bool { return sp.in }

// Leave takes the partition out of the session (not ready to fetch); the fetch data last sent
// stay, as Kafka's builder keeps no entry and the next one differs by in alone.
func (sp *SessionPartition) Leave() { sp.in = false }

// gonePartition is a partition that left the thread since the last build, with what the session
// last sent for it and the leader epoch the Fetch in flight carried for it (its fetch offset is
// the session entry's: PartitionFetchState).
type gonePartition struct {
	pid       int32
	sentEpoch int32
	sess      SessionPartition
}

// Leave records that partition pid left the thread (removeFetcherForPartitions, a failure), with
// its session entry and the leader epoch the Fetch in flight carried for it; nothing if it was
// not in the session.
func (h *FetchSessionHandler) Leave(pid int32, sess SessionPartition, sentEpoch int32) {
	if sess.in {
		h.gone = append(h.gone, gonePartition{pid: pid, sentEpoch: sentEpoch, sess: sess})
	}
}

// Rejoin gives back, for a partition added to the thread, its session entry and the leader epoch
// the Fetch in flight carried for it, if it left the thread since the last Fetch was built (ok).
func (h *FetchSessionHandler) Rejoin(pid int32) (sess SessionPartition, sentEpoch int32, ok bool) {
	i := slices.IndexFunc(h.gone, func(g gonePartition) bool { return g.pid == pid })
	if i < 0 {
		return sess, 0, false
	}
	g := h.gone[i]
	h.gone = slices.Delete(h.gone, i, i+1)
	return g.sess, g.sentEpoch, true
}

// GoneSent is what the Fetch in flight carried for pid, if pid left the thread since the build.
func (h *FetchSessionHandler) GoneSent(pid int32) (sentEpoch int32, sentOffset int64, ok bool) {
	for i := range h.gone {
		if g := &h.gone[i]; g.pid == pid {
			return g.sentEpoch, g.sess.fetchOffset, true
		}
	}
	return 0, 0, false
}

// HasGone reports whether partitions left the thread since the last build.
func (h *FetchSessionHandler) HasGone() bool { return len(h.gone) > 0 }

// AppendGone appends the partitions that left the thread, named by names, in the order they
// left: an incremental Fetch forgets them.
func (h *FetchSessionHandler) AppendGone(dst []protocol.TP, names PartitionNamer) []protocol.TP {
	for _, g := range h.gone {
		dst = append(dst, names.TP(g.pid))
	}
	return dst
}

// Built forgets the partitions that left: the Fetch just built has dealt with them.
func (h *FetchSessionHandler) Built() { h.gone = h.gone[:0] }

// SessionID is the session the next Fetch names.
func (h *FetchSessionHandler) SessionID() int32 { return h.sessionID }

// Epoch is the session epoch the next Fetch carries.
func (h *FetchSessionHandler) Epoch() int32 { return h.epoch }

// Full reports whether the next Fetch is full (FetchMetadata.isFull).
func (h *FetchSessionHandler) Full() bool {
	return h.epoch == protocol.InitialEpoch || h.epoch == protocol.FinalEpoch
}

// SentFetch is what the Fetch being answered carried, as the handler checks an answer against it
// (verifyFullFetchResponsePartitions, verifyIncrementalFetchResponsePartitions). The fetcher
// thread keeps it (stamped on its fetch states), so the handler asks rather than holds a copy.
type SentFetch interface {
	// Count is how many partitions the Fetch carried.
	Count() int
	// Carried reports whether the Fetch carried tp.
	Carried(tp protocol.TP) bool
}

// HandleResponse is FetchSessionHandler.handleResponse: it moves the session on and reports
// whether the answer's partitions may be processed. A session error (FETCH_SESSION_ID_NOT_FOUND:
// start a new session; else close this one and start anew) or a full answer that does not carry
// every partition sent makes the next Fetch full, and the answer is dropped: the thread fetches
// again at once, with no backoff (RemoteLeaderEndPoint.fetch returns an empty result).
func (h *FetchSessionHandler) HandleResponse(resp *protocol.FetchResponse, sent SentFetch) bool {
	if resp.Error != protocol.ErrNone {
		if resp.Error == protocol.ErrFetchSessionIDNotFound {
			h.sessionID, h.epoch = protocol.InvalidSessionID, protocol.InitialEpoch
		} else {
			h.epoch = protocol.InitialEpoch // nextCloseExistingAttemptNew
		}
		return false
	}
	if h.Full() {
		if len(resp.Partitions) != sent.Count() { // verifyFullFetchResponsePartitions
			h.sessionID, h.epoch = protocol.InvalidSessionID, protocol.InitialEpoch
			return false
		}
		if resp.SessionID == protocol.InvalidSessionID {
			h.sessionID, h.epoch = protocol.InvalidSessionID, protocol.InitialEpoch
		} else {
			h.sessionID, h.epoch = resp.SessionID, protocol.NextSessionEpoch(protocol.InitialEpoch)
		}
		return true
	}
	for i := range resp.Partitions { // verifyIncrementalFetchResponsePartitions
		if !sent.Carried(resp.Partitions[i].TP) {
			h.epoch = protocol.InitialEpoch
			return false
		}
	}
	if resp.SessionID == protocol.InvalidSessionID {
		h.sessionID, h.epoch = protocol.InvalidSessionID, protocol.InitialEpoch // the leader closed the session
	} else {
		h.epoch = protocol.NextSessionEpoch(h.epoch)
	}
	return true
}

// HandleError is FetchSessionHandler.handleError (a Fetch that failed: timeout, disconnect): the
// next Fetch is full, closes the session and asks for a new one.
func (h *FetchSessionHandler) HandleError() { h.epoch = protocol.InitialEpoch }
