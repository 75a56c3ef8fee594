package broker

import (
	"testing"
	"unsafe"
)

// TestPartitionLayout holds the Partition's cache-line layout (see Partition): what a follower's
// fetch answer without records, the checker and the HW checkpoint read, and the pointer to the
// leader's state, are in line 0; the log's chunks and epoch cache, which an append reads, with
// its recovery point and durable end, in line 1; the struct is two lines. logHotBytes is how many bytes the Log's
// HW, LEO and log start take at its head (commitlog's TestLogLayout holds it).
const logHotBytes = 24

func TestPartitionLayout(t *testing.T) {
	var p Partition
	line := func(off uintptr) uintptr { return off / 64 }
	if s := unsafe.Sizeof(p); s != 128 {
		t.Errorf("Partition is %d bytes, want 128", s)
	}
	log := unsafe.Offsetof(p.log)
	for name, end := range map[string]uintptr{
		"broker": unsafe.Offsetof(p.broker) + 4, "leader": unsafe.Offsetof(p.leader) + 4,
		"leaderEpoch": unsafe.Offsetof(p.leaderEpoch) + 4, "pid": unsafe.Offsetof(p.pid) + 4,
		"partitionEpoch": unsafe.Offsetof(p.partitionEpoch) + 4, "known": unsafe.Offsetof(p.known) + 1,
		"offline": unsafe.Offsetof(p.offline) + 1, "hwConfirmed": unsafe.Offsetof(p.hwConfirmed) + 1,
		"hwNoted": unsafe.Offsetof(p.hwNoted) + 1, "lead": unsafe.Offsetof(p.lead) + 8,
		"hwCheckpoint":     unsafe.Offsetof(p.hwCheckpoint) + 8,
		"log.hw+leo+start": log + logHotBytes,
	} {
		if line(end-1) != 0 {
			t.Errorf("%s ends at byte %d, past line 0", name, end)
		}
	}
	from, to := log+logHotBytes, log+unsafe.Sizeof(p.log)
	if line(from) != 1 || line(to-1) != 1 {
		t.Errorf("the log's chunks, epoch cache and recovery point are at bytes %d to %d, not in line 1", from, to)
	}
}

// TestLeaderStateLayout holds the leader's state's layout (see leaderState): two lines, the
// epoch start, the followers and the ISR state in line 0, the purgatories and the fetch sessions
// in line 1, so that a StartArena's array of them keeps each on two lines of its own.
func TestLeaderStateLayout(t *testing.T) {
	var l leaderState
	line := func(off uintptr) uintptr { return off / 64 }
	if s := unsafe.Sizeof(l); s != 128 {
		t.Errorf("leaderState is %d bytes, want 128", s)
	}
	for name, f := range map[string]struct{ off, size, line uintptr }{
		"epochStartOffset": {unsafe.Offsetof(l.epochStartOffset), 8, 0},
		"remotes":          {unsafe.Offsetof(l.remotes), unsafe.Sizeof(l.remotes), 0},
		"state":            {unsafe.Offsetof(l.state), unsafe.Sizeof(l.state), 0},
		"produces":         {unsafe.Offsetof(l.produces), unsafe.Sizeof(l.produces), 1},
		"watchers":         {unsafe.Offsetof(l.watchers), 8, 1},
		"fetchSessions":    {unsafe.Offsetof(l.fetchSessions), unsafe.Sizeof(l.fetchSessions), 1},
	} {
		if line(f.off) != f.line || line(f.off+f.size-1) != f.line {
			t.Errorf("%s is at bytes %d to %d, not in line %d", name, f.off, f.off+f.size, f.line)
		}
	}
}
