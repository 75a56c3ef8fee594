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

// SetEpochForTest puts the partition's leader epoch at epoch in place, as Kafka's
// FetchSessionHandlerTest builds a partition's next fetch data by hand (the engine gives a
// partition a new epoch through a new state, which Succeeds the old).
func (st *PartitionFetchState) SetEpochForTest(epoch int32) { st.epoch = epoch }

// SetShuttingDownForTest puts the broker's process in a controlled shutdown without its requests,
// as Kafka's PartitionTest marks a follower's broker shutting down in the metadata cache.
func (b *Broker) SetShuttingDownForTest() { b.state = ShuttingDown }
