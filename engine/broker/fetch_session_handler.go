package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// The follower's side of fetch sessions (KIP-227, 1.1): Kafka's FetchSessionHandler, one per
// fetcher thread. The thread's first Fetch is full (session id 0, epoch 0) and the leader's
// answer names the session it created; each next Fetch is incremental (that id, the next epoch).
// A session error or a failed Fetch makes the next Fetch full again. A new thread (a fetcher
// removed and started again) starts with no session. What the session holds per partition (the
// fetch data it last sent, the partitions that left the thread) is still the engine's fetcher's
// (engine/fetch_session_handler.go); this is the handler's session metadata.

// FetchSessionHandler is FetchSessionHandler's nextMetadata: the session id and epoch of the next
// request, and of the request in flight while there is one. Its zero value is a new thread's: no
// session.
type FetchSessionHandler struct {
	sessionID, epoch int32
}

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
