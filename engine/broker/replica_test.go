package broker

import "testing"

// TestReplicaFetchState follows Kafka's ReplicaTest: a fetch at the leader's LEO catches the
// follower up now; one below it but at or past the leader's LEO at the previous fetch catches it
// up as of that fetch; a new leader forgets the follower, a leader staying on keeps its offsets.
func TestReplicaFetchState(t *testing.T) {
	rr := NewReplica(2)
	if rr.Broker() != 2 || rr.LogEndOffset() != -1 || rr.LastCaughtUpTime() != Never || rr.IsCaughtUp(5, 0, 100) {
		t.Fatalf("a new follower: %+v", rr)
	}
	if moved := rr.UpdateFetchState(1000, 5, 0, 5, 7); !moved || rr.LastCaughtUpTime() != 1000 || rr.BrokerEpoch() != 7 {
		t.Fatalf("a fetch at the LEO: moved %v, %+v", moved, rr)
	}
	// The leader appends to 8; the follower fetches at 5 (the leader's LEO at its last fetch).
	if moved := rr.UpdateFetchState(2000, 5, 0, 8, 7); moved || rr.LastCaughtUpTime() != 1000 || rr.LastFetchTime() != 2000 {
		t.Fatalf("a fetch at the last fetch's leader LEO: moved %v, %+v", moved, rr)
	}
	if !rr.IsCaughtUp(8, 1050, 100) || rr.IsCaughtUp(8, 1200, 100) {
		t.Error("isCaughtUp does not follow replica.lag.time.max.ms")
	}
	// At 3000 it fetches at 8 but the leader is at 9: caught up as of the previous fetch (2000).
	rr.UpdateFetchState(3000, 8, 0, 9, 7)
	if rr.LastCaughtUpTime() != 2000 || rr.LogEndOffset() != 8 || rr.LastFetchLeaderLogEndOffset() != 9 {
		t.Fatalf("a fetch past the last fetch's leader LEO: %+v", rr)
	}
	kept := rr
	kept.ResetReplicaState(4000, 9, false, true)
	if kept.LogEndOffset() != 8 || kept.LastFetchLeaderLogEndOffset() != 9 || kept.LastFetchTime() != 4000 || kept.LastCaughtUpTime() != 4000 {
		t.Errorf("a leader staying on, follower in sync: %+v", kept)
	}
	fresh := rr
	fresh.ResetReplicaState(4000, 9, true, false)
	if fresh != NewReplica(2) {
		t.Errorf("a new leader, follower out of sync: %+v, want %+v", fresh, NewReplica(2))
	}
	rr.SawFetchesUntil(3500)
	if rr.LastFetchTime() != 3500 || rr.LastCaughtUpTime() != 3500 {
		t.Errorf("times written down from a session's reads: %+v", rr)
	}
}
