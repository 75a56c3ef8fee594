package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestFetcherThreadFailedSideRequestDelaysItsPartitions: an OffsetsForLeaderEpoch or ListOffsets
// that gets no answer (the connection refused or reset, or the request timed out) delays only the
// partitions it asked about, by replica.fetch.backoff.ms, and the thread fetches its other
// partitions at once. Kafka turns the send's exception into an error for each partition of that
// request (0.11.0.2 ReplicaFetcherThread.fetchEpochsFromLeader and maybeTruncate's
// delayPartitions; 2.1.1 fetchEpochEndOffsets and truncateToEpochEndOffsets'
// handlePartitionsWithErrors, in the doWork that runs maybeFetch next; 3.7.0 the same, and
// handleOutOfRangeError's catch for ListOffsets). The engine delayed every partition of the
// thread, so a follower whose truncation round failed stopped fetching the rest for a backoff.
func TestFetcherThreadFailedSideRequestDelaysItsPartitions(t *testing.T) {
	t.Run("OffsetsForLeaderEpoch", func(t *testing.T) {
		h := newFakeFollower(0, 1)
		h.rules.TruncateOnFetch, h.rules.Sessions = false, false
		h.replicas[0].Log().AppendAsFollower([]commitlog.Record{{ID: 1, Epoch: 1}, {ID: 2, Epoch: 2}})
		h.replicas[1].Log().AppendAsFollower([]commitlog.Record{{ID: 3, Epoch: 1}})
		th0 := NewFetcherThread(1, 0, 0)
		th := &th0
		th.Add(NewPartitionFetchState(0, 3, 2, -1, true), h.replicas[0])
		th.Add(NewPartitionFetchState(1, 3, 1, 1, false), h.replicas[1])
		h.now = 10
		th.DoWork(h)
		req, _ := h.last(t, 1)
		if req.Type != protocol.MsgOffsetsForEpoch || len(req.OffsetsForEpoch.Partitions) != 1 {
			t.Fatalf("the truncation round sent %+v", req)
		}
		h.now = 30010
		th.RequestFailed(h, req)
		m, _ := h.last(t, 2)
		if m.Type != protocol.MsgFetch || len(m.Fetch.Partitions) != 1 || m.Fetch.Partitions[0].TP != h.TP(1) {
			t.Fatalf("after the failed OffsetsForLeaderEpoch the thread sent %+v, want a Fetch of t-1 at once", m)
		}
		if st := th.State(0); st.DelayUntil() != 31010 || !st.Truncating() {
			t.Errorf("t-0 after the failure: delayed until %d, truncating %v; want 31010, true", st.DelayUntil(), st.Truncating())
		}
		if st := th.State(1); st.DelayUntil() > h.now {
			t.Errorf("t-1, not in the request, delayed until %d", st.DelayUntil())
		}
	})
	t.Run("ListOffsets", func(t *testing.T) {
		h := newFakeFollower(0, 1)
		h.rules.Sessions = false
		th0 := NewFetcherThread(1, 0, 0)
		th := &th0
		th.Add(NewPartitionFetchState(0, 1, 3, 0, false), h.replicas[0])
		th.Add(NewPartitionFetchState(1, 1, 0, -1, false), h.replicas[1])
		h.now = 1
		th.DoWork(h)
		m, _ := h.last(t, 1)
		h.now = 2
		th.HandleFetchResponse(h, &protocol.Message{ReplyTo: m.ID, FetchResponse: &protocol.FetchResponse{
			Partitions: []protocol.FetchPartitionData{{TP: h.TP(0), Error: protocol.ErrOffsetOutOfRange}, {TP: h.TP(1), HighWatermark: 0}}}})
		req, _ := h.last(t, 2)
		if req.Type != protocol.MsgListOffsets {
			t.Fatalf("out of range: sent %+v, want ListOffsets", req)
		}
		h.now = 3
		th.RequestFailed(h, req)
		m, _ = h.last(t, 3)
		if m.Type != protocol.MsgFetch || len(m.Fetch.Partitions) != 1 || m.Fetch.Partitions[0].TP != h.TP(1) {
			t.Fatalf("after the failed ListOffsets the thread sent %+v, want a Fetch of t-1 at once", m)
		}
		if st := th.State(0); st.DelayUntil() != 1003 {
			t.Errorf("t-0 delayed until %d, want 1003", st.DelayUntil())
		}
	})
}
