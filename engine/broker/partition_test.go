package broker

import (
	"reflect"
	"testing"
)

// TestPartitionLife: a Partition created by a LeaderAndIsr (leading, then following), confirmed once, its epochs cached,
// its appends counted toward a flush, its HW checkpointed, then a crash forgetting what is in
// memory and keeping what is on disk.
func TestPartitionLife(t *testing.T) {
	p := NewPartition(2, 0)
	if p.Broker() != 2 || p.Leader() != -1 || p.LeaderEpoch() != -1 || p.IsLeader() || p.Known() || p.Offline() || p.HWConfirmed() || p.PartitionEpoch() != -1 || p.EpochStartOffset() != -1 {
		t.Fatalf("reset partition: known %v offline %v confirmed %v epoch %d start %d", p.Known(), p.Offline(),
			p.HWConfirmed(), p.PartitionEpoch(), p.EpochStartOffset())
	}
	p.SetLeader(2)
	if p.IsLeader() {
		t.Fatal("a replica leads before a LeaderAndIsr created it")
	}
	p.Create()
	p.SetLeaderEpoch(4)
	if !p.IsLeader() || p.LeaderEpoch() != 4 {
		t.Fatalf("created with itself as leader at epoch 4: leads %v, epoch %d", p.IsLeader(), p.LeaderEpoch())
	}
	p.SetLeader(1)
	if p.IsLeader() {
		t.Fatal("a follower leads")
	}
	p.SetPartitionEpoch(3)
	p.SetEpochStartOffset(7)
	if !p.ConfirmHW() || p.ConfirmHW() {
		t.Fatal("ConfirmHW reports a change only the first time")
	}
	p.UnconfirmHW()
	if p.HWConfirmed() || !p.ConfirmHW() {
		t.Fatal("an unconfirmed HW confirms again")
	}
	// The flush count is LEO − recovery point (Log.append's unflushedMessages).
	p.log.AppendAsLeader(0, []int64{1, 2})
	if p.Appended(3) {
		t.Fatal("2 records against an interval of 3 flush")
	}
	p.log.AppendAsLeader(0, []int64{3})
	if !p.Appended(3) {
		t.Fatal("3 records against an interval of 3 do not flush")
	}
	p.log.Flush()
	p.log.AppendAsLeader(0, []int64{4, 5})
	if p.Appended(3) || p.Unflushed() != 2 {
		t.Fatalf("unflushed %d, want 2", p.Unflushed())
	}
	p.CheckpointHW(5)
	p.SetOffline()
	if !p.Known() || !p.Offline() || p.PartitionEpoch() != 3 || p.EpochStartOffset() != 7 {
		t.Fatal("state lost before the crash")
	}
	p.ResetMemory()
	if p.Known() || p.Offline() || p.HWConfirmed() || p.Leader() != -1 || p.LeaderEpoch() != -1 || p.PartitionEpoch() != -1 || p.EpochStartOffset() != -1 {
		t.Fatal("a crash keeps what is in memory")
	}
	if p.HWCheckpoint() != 5 || p.Unflushed() != 2 || p.Log() != &p.log {
		t.Fatalf("a crash lost what is on disk: checkpoint %d unflushed %d", p.HWCheckpoint(), p.Unflushed())
	}
}

// TestPartitionRemotes: makeLeader's followers' state, one Replica per other host in assignment
// order; a leader staying on keeps what it knew of them, a new leader starts them over; a crash
// forgets them.
func TestPartitionRemotes(t *testing.T) {
	p := NewPartition(1, 0)
	p.ResetRemotes(100, []int32{2, 1, 0}, []int32{1, 2}, false, 5)
	if rs := p.Remotes(); len(rs) != 2 || rs[0].Broker() != 2 || rs[1].Broker() != 0 || p.Remote(1) != nil {
		t.Fatalf("followers %+v, want 2 and 0", rs)
	}
	if !p.Remote(2).IsCaughtUp(5, 100, 10) || p.Remote(0).IsCaughtUp(5, 100, 10) {
		t.Fatal("a new leader counts the ISR's followers caught up, and only them")
	}
	p.Remote(0).UpdateFetchState(200, 5, 0, 5, 3)
	p.ResetRemotes(300, []int32{2, 1, 0}, []int32{1, 2}, true, 7)
	if p.Remote(0).LogEndOffset() != 5 {
		t.Fatalf("a leader staying on forgot a follower's LEO: %d", p.Remote(0).LogEndOffset())
	}
	p.ResetRemotes(400, []int32{2, 1, 0}, []int32{1}, false, 7)
	if p.Remote(0).LogEndOffset() != -1 {
		t.Fatalf("a new leader kept a follower's LEO: %d", p.Remote(0).LogEndOffset())
	}
	if p.Produces().Len() != 0 {
		t.Fatal("produces parked on a new partition")
	}
	p.ClearRemotes()
	if len(p.Remotes()) != 0 {
		t.Fatal("ClearRemotes kept followers")
	}
	p.ResetRemotes(500, []int32{2, 1, 0}, []int32{1}, false, 7)
	p.State().Commit([]int32{1, 2})
	if !p.State().InISR(2) {
		t.Fatal("the committed ISR lost a member")
	}
	p.ResetMemory()
	if len(p.Remotes()) != 0 || len(p.State().ISR()) != 0 {
		t.Fatal("a crash kept the followers' state or the ISR")
	}
}

// TestPartitionInit: Init on a zero Partition is NewPartition.
func TestPartitionInit(t *testing.T) {
	var p Partition
	p.Init(3, 4)
	if q := NewPartition(3, 4); !reflect.DeepEqual(p, q) {
		t.Fatalf("Init gives %+v, NewPartition %+v", p, q)
	}
}
