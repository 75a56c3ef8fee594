package broker

import (
	"testing"
	"unsafe"
)

// TestPartitionLayout holds the Partition's cache-line layout (see Partition): what a follower's
// fetch answer without records, the checker and the HW checkpoint read is in line 0; the log's
// chunks and epoch cache, which an append reads, in line 1; the struct is four lines.
// logHotBytes is how many bytes the Log's HW, LEO and log start take at its head
// (commitlog's TestLogLayout holds it).
const logHotBytes = 24

func TestPartitionLayout(t *testing.T) {
	var p Partition
	line := func(off uintptr) uintptr { return off / 64 }
	if s := unsafe.Sizeof(p); s != 256 {
		t.Errorf("Partition is %d bytes, want 256", s)
	}
	log := unsafe.Offsetof(p.log)
	for name, end := range map[string]uintptr{
		"broker": unsafe.Offsetof(p.broker) + 4, "leader": unsafe.Offsetof(p.leader) + 4,
		"leaderEpoch": unsafe.Offsetof(p.leaderEpoch) + 4, "pid": unsafe.Offsetof(p.pid) + 4,
		"slot": unsafe.Offsetof(p.slot) + 4, "known": unsafe.Offsetof(p.known) + 1,
		"offline": unsafe.Offsetof(p.offline) + 1, "hwConfirmed": unsafe.Offsetof(p.hwConfirmed) + 1,
		"hwNoted": unsafe.Offsetof(p.hwNoted) + 1, "cached": unsafe.Offsetof(p.cached) + 1,
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
	if u := unsafe.Offsetof(p.unflushed); line(u) != 1 || line(u+7) != 1 {
		t.Errorf("unflushed is at byte %d, not in line 1", u)
	}
}
