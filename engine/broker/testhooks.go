package broker

// SetForTest puts the handler's next metadata at (sessionID, epoch), as Kafka's
// FetchSessionHandlerTest builds a handler mid-session, and as a test puts a wrong epoch on a
// thread's next Fetch. Only tests call it (TestBrokerOwnsItsState).
func (h *FetchSessionHandler) SetForTest(sessionID, epoch int32) {
	h.sessionID, h.epoch = sessionID, epoch
}

// SetLogEndOffsetForTest puts the follower's LEO as the leader knows it at leo, as Kafka's
// tests build a Partition whose follower state pins the HW.
func (rr *Replica) SetLogEndOffsetForTest(leo int64) { rr.leo = leo }
