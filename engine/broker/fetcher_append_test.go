package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// batchOf is a batch of n records of epoch, ids from id (Cont on all but the first).
func batchOf(id int64, n int, epoch int32) []commitlog.Record {
	recs := make([]commitlog.Record, n)
	for i := range recs {
		recs[i] = commitlog.Record{ID: id + int64(i), Epoch: epoch, Cont: i > 0}
	}
	return recs
}

// aboveEndAnswer is the answer to the thread's Fetch: partition 0 gets a batch of 5 from offset
// 0 while it fetched at 2 (the leader's LogSegment.read from inside the batch: RecordsBefore 2),
// partition 1 one record at its offset 0.
func aboveEndAnswer(h *fakeFollower, m *protocol.Message) *protocol.Message {
	return &protocol.Message{ReplyTo: m.ID, FetchResponse: &protocol.FetchResponse{Partitions: []protocol.FetchPartitionData{
		{TP: h.TP(0), HighWatermark: 5, LogEndOffset: 5, RecordsBefore: 2, Records: batchOf(10, 5, 0)},
		{TP: h.TP(1), HighWatermark: 1, LogEndOffset: 1, Records: batchOf(20, 1, 0)}}}}
}

// TestFetcherAppendBelowLogEnd: a follower handed a batch that starts below its log end (its
// Fetch was from inside one of the leader's batches) cannot append it: Log.append with
// assignOffsets false throws (0.11.0.2 IllegalArgumentException "Out of order offsets"; 2.1.1
// and 3.7.0 UnexpectedAppendOffsetException). Before 2.3, AbstractFetcherThread
// .processFetchRequest rethrows it as a KafkaException out of doWork, ShutdownableThread.run
// returns, and the thread is dead: the partitions after it in the answer are not processed, and
// nothing is fetched again. From 2.3 (KIP-461, KAFKA-8346) only the partition is marked failed
// and the thread goes on. The engine appended the records at the follower's log end, as if they
// began there.
func TestFetcherAppendBelowLogEnd(t *testing.T) {
	setup := func(kills bool) (*fakeFollower, *FetcherThread) {
		h := newFakeFollower(0, 1)
		h.rules.TruncateOnFetch, h.rules.Sessions, h.rules.ErrorKillsThread = false, false, kills
		h.replicas[0].Log().AppendAsFollower(batchOf(10, 2, 0)) // the leader's batch cut at 2
		th0 := NewFetcherThread(1, 0, 0)
		th := &th0
		th.Add(NewPartitionFetchState(0, 0, 2, 0, false), h.replicas[0])
		th.Add(NewPartitionFetchState(1, 0, 0, -1, false), h.replicas[1])
		h.now = 10
		th.DoWork(h)
		return h, th
	}
	t.Run("before 2.3 the thread dies", func(t *testing.T) {
		h, th := setup(true)
		m, _ := h.last(t, 1)
		h.now = 11
		th.HandleFetchResponse(h, aboveEndAnswer(h, m))
		if !th.Died() {
			t.Fatal("the thread lives on")
		}
		if len(h.events) != 1 || h.events[0].Kind != FetcherDied || h.events[0].Pid != protocol.Some[int32](0) || h.events[0].Arg[2] != 2 {
			t.Fatalf("events %+v, want one FetcherDied on partition 0 of a thread with 2", h.events)
		}
		if leo := h.replicas[0].Log().LogEndOffset(); leo != 2 {
			t.Errorf("partition 0's LEO %d, want 2 (nothing appended)", leo)
		}
		if leo := h.replicas[1].Log().LogEndOffset(); leo != 0 {
			t.Errorf("partition 1, after the failing one in the answer, was processed: LEO %d", leo)
		}
		wakes := len(h.wakes)
		th.WakeUp(h, 20)
		h.now = 20
		th.DoWork(h)
		if len(h.sent) != 1 || len(h.wakes) != wakes {
			t.Errorf("the dead thread sent %d messages and scheduled %d wake-ups, want none", len(h.sent)-1, len(h.wakes)-wakes)
		}
		// addFetcherForPartitions reuses the dead thread in fetcherThreadMap: a partition it is
		// given is not fetched either.
		p2 := NewPartition(1, 2)
		h.replicas[2] = &p2
		th.Add(NewPartitionFetchState(2, 0, 0, -1, false), h.replicas[2])
		th.DoWork(h)
		if len(h.sent) != 1 {
			t.Errorf("the dead thread fetched a partition added to it")
		}
	})
	t.Run("from 2.3 the partition fails", func(t *testing.T) {
		h, th := setup(false)
		m, _ := h.last(t, 1)
		h.now = 11
		th.HandleFetchResponse(h, aboveEndAnswer(h, m))
		if th.Died() || th.State(0) != nil || th.State(1) == nil {
			t.Fatalf("dead %v, partition 0 kept %v, partition 1 kept %v: want partition 0 failed alone", th.Died(), th.State(0) != nil, th.State(1) != nil)
		}
		if len(h.events) != 1 || h.events[0].Kind != PartitionFailed || h.events[0].Pid != protocol.Some[int32](0) {
			t.Fatalf("events %+v, want one PartitionFailed on partition 0", h.events)
		}
		if l0, l1 := h.replicas[0].Log().LogEndOffset(), h.replicas[1].Log().LogEndOffset(); l0 != 2 || l1 != 1 {
			t.Errorf("LEOs %d and %d, want 2 (refused) and 1 (appended)", l0, l1)
		}
		next, _ := h.last(t, 2)
		if next.Type != protocol.MsgFetch || len(next.Fetch.Partitions) != 1 || next.Fetch.Partitions[0].TP != h.TP(1) {
			t.Errorf("the thread's next request %+v, want a Fetch of partition 1", next)
		}
	})
}

// TestFetcherAppendFromLogStart: from 2.1 (KAFKA-6975, 37a4d5ea46b) Partition
// .appendRecordsToFollowerOrFutureReplica catches UnexpectedAppendOffsetException when the log
// is empty at its log start and the batch reaches that start (logEndOffset == logStartOffset,
// firstOffset < logEndOffset <= lastOffset): the log starts at the batch's first offset
// (truncateFullyAndStartAt) and the batch is appended. 0.11.0.2 has no such catch
// (ReplicaFetcherThread.processPartitionData calls Log.appendAsFollower): the thread dies.
func TestFetcherAppendFromLogStart(t *testing.T) {
	for _, c := range []struct {
		name         string
		fromStart    bool
		wantDied     bool
		start, leoTo int64
	}{{"2.1", true, false, 1, 6}, {"0.11.0", false, true, 3, 3}} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeFollower(0)
			h.rules.TruncateOnFetch, h.rules.Sessions = false, false
			h.rules.ErrorKillsThread, h.rules.AppendFromLogStart = true, c.fromStart
			h.replicas[0].Log().TruncateFullyAndStartAt(3)
			th0 := NewFetcherThread(1, 0, 0)
			th := &th0
			th.Add(NewPartitionFetchState(0, 0, 3, -1, false), h.replicas[0])
			h.now = 10
			th.DoWork(h)
			m, _ := h.last(t, 1)
			h.now = 11
			th.HandleFetchResponse(h, &protocol.Message{ReplyTo: m.ID, FetchResponse: &protocol.FetchResponse{Partitions: []protocol.FetchPartitionData{
				{TP: h.TP(0), HighWatermark: 6, LogStartOffset: 3, LogEndOffset: 6, RecordsBefore: 2, Records: batchOf(10, 5, 0)}}}})
			l := h.replicas[0].Log()
			// The follower then takes the leader's log start, 3 (maybeIncrementLogStartOffset).
			if th.Died() != c.wantDied || l.LogEndOffset() != c.leoTo {
				t.Fatalf("dead %v, log [%d, %d); want dead %v, LEO %d", th.Died(), l.LogStartOffset(), l.LogEndOffset(), c.wantDied, c.leoTo)
			}
			if c.fromStart {
				if st := th.State(0); st.FetchOffset() != 6 || l.LogStartOffset() != 3 {
					t.Errorf("fetch offset %d, log start %d; want 6, 3", st.FetchOffset(), l.LogStartOffset())
				}
				if r, _ := l.At(3); r.ID != 12 {
					t.Errorf("offset 3 holds record %d, want 12 (the batch's third)", r.ID)
				}
			}
		})
	}
}

// TestFetcherAppendPastGap: a follower whose fetch offset is in a gap of the leader's log (the
// leader's truncation inside a batch left offsets without records) gets the batch after it,
// which starts past the follower's log end: Log.append takes it (its first offset is not below
// nextOffsetMetadata), and the offsets between hold no record on the follower either.
func TestFetcherAppendPastGap(t *testing.T) {
	h := newFakeFollower(0)
	h.rules.TruncateOnFetch, h.rules.Sessions, h.rules.ErrorKillsThread = false, false, true
	h.replicas[0].Log().AppendAsFollower(batchOf(1, 3, 0))
	th0 := NewFetcherThread(1, 0, 0)
	th := &th0
	th.Add(NewPartitionFetchState(0, 0, 3, 0, false), h.replicas[0])
	h.now = 10
	th.DoWork(h)
	m, _ := h.last(t, 1)
	h.now = 11
	th.HandleFetchResponse(h, &protocol.Message{ReplyTo: m.ID, FetchResponse: &protocol.FetchResponse{Partitions: []protocol.FetchPartitionData{
		{TP: h.TP(0), HighWatermark: 7, LogEndOffset: 7, RecordsBefore: -2, Records: batchOf(10, 2, 3)}}}})
	l := h.replicas[0].Log()
	if th.Died() || l.LogEndOffset() != 7 || th.State(0).FetchOffset() != 7 {
		t.Fatalf("dead %v, LEO %d, fetch offset %d: want the batch appended at 5, LEO 7", th.Died(), l.LogEndOffset(), th.State(0).FetchOffset())
	}
	for o, want := range map[int64]int64{3: 0, 4: 0, 5: 10, 6: 11} {
		if r, _ := l.At(o); r.ID != want || r.Gap != (want == 0) {
			t.Errorf("offset %d holds %+v", o, r)
		}
	}
	if got := l.Cache().Entries(); len(got) != 2 || got[1].Epoch != 3 || got[1].StartOffset != 5 {
		t.Errorf("epoch cache %v, want epoch 3 from 5", got)
	}
}
