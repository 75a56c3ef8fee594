package broker

import "github.com/highwater-sim/highwater/engine/commitlog"

// Partition is a broker's Partition object (Partition.scala, with its log's checkpointed HW and
// flush count): the broker holding it, the leader and leader epoch it knows, its pid, the
// partition epoch (the zkVersion before KIP-497's AlterPartition), whether a LeaderAndIsr
// created it since the broker started (known), whether its log directory failed (offline),
// whether its HW comes from the current leadership (HWConfirmed), the leader's state if it
// holds one (leaderState: the followers, the ISR, the purgatories, the fetch sessions), the HW
// checkpoint (replication-offset-checkpoint), then the log (with its recovery point, from which
// the records appended since the last flush count, and how far it is on stable storage). The
// engine's replicas are these.
//
// The struct is 128 bytes, two cache lines (in the broker's slab every Partition starts one),
// laid out by what is read together (TestPartitionLayout holds it): with 100,000 partitions
// every one is cold when touched, and each line read is a miss; every byte of the slab is also
// first touched, page by page, when the cluster is built.
//   - Line 0: the ids and flags, the leader's state's pointer, the HW checkpoint and the log's
//     HW, LEO and start: all that a follower's fetch answer without records, the checker (each
//     replica at every HW move), the HW checkpoint and a leader's check of a request read.
//   - Line 1: the log's chunks and epoch cache, the recovery point and durable end: an append
//     (which counts its records from the recovery point against log.flush.interval.messages),
//     and a leader's read of a follower's fetch (OffsetsForLeaderEpoch's check).
//
// The leader's state (two more lines) is a struct of its own that a replica gets when it
// becomes leader (or a fetch, a produce or a fetch session parks on it) and gives back when a
// crash or makeFollower leaves it empty: it is 120 bytes that two replicas of every three, the
// followers, would hold empty. Nor is the replica's slot among the broker's kept: the HW
// checkpoint's list names pids (ReplicaManager.hwMoved), and its four bytes make room for the
// pointer in 128.
type Partition struct {
	broker      int32 // the broker holding this replica (localBrokerId)
	leader      int32 // -1: none known
	leaderEpoch int32
	// pid is the partition's dense id (the engine's names: protocol.TP on the wire): a
	// session's, a watch list's or the HW checkpoint's list's partition is named by it, without
	// a pointer back into the engine.
	pid            int32
	partitionEpoch int32
	known          bool // a LeaderAndIsr created the Partition object since the broker started
	// offline: the log directory failed.
	offline bool
	// hwConfirmed: the local HW comes from the current leadership (this replica leads, or it
	// has applied a fetch response in its current leader epoch, or, before KIP-101, it has
	// truncated to it on becoming follower: FollowerRestarts). A HW recovered from the
	// checkpoint after a restart is only a claim until then.
	hwConfirmed bool
	// hwNoted: it is on its replica manager's list of HWs moved since the last checkpoint
	// (ReplicaManager.noteHW), which compares the HW with hwCheckpoint: all three in line 0.
	hwNoted bool
	// lead is the leader's state, nil while the replica holds none: then every part of it reads
	// empty (leaderState). In line 0: a follower's every append and HW move asks whether fetch
	// sessions cache its replica (SessionsChanged), and on a follower the nil pointer answers.
	lead *leaderState
	// On disk: survive a crash.
	hwCheckpoint int64 // replication-offset-checkpoint
	// log is its UnifiedLog (on disk: it keeps unflushed records unless the page cache is lost).
	// Its unflushed count is Kafka's unflushedMessages, LEO − recovery point, kept by the log.
	log commitlog.Log
}

// NewPartition is broker b's replica of partition pid, before any LeaderAndIsr (ResetMemory).
func NewPartition(b, pid int32) Partition {
	p := Partition{broker: b, pid: pid}
	p.ResetMemory()
	return p
}

// Init makes the zero Partition p broker b's replica of pid before any LeaderAndIsr, in place:
// what NewPartition returns, without copying a struct (a cluster's build makes millions).
func (p *Partition) Init(b, pid int32) {
	p.broker, p.pid = b, pid
	p.leader, p.leaderEpoch = -1, -1
	p.partitionEpoch = -1
}

func (p *Partition) Broker() int32      { return p.broker }
func (p *Partition) Pid() int32         { return p.pid }
func (p *Partition) Leader() int32      { return p.leader }
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// IsLeader reports whether this replica leads (a LeaderAndIsr created it with itself as leader).
func (p *Partition) IsLeader() bool { return p.known && p.leader == p.broker }

// SetLeader and SetLeaderEpoch record the leader and leader epoch a LeaderAndIsr carried
// (makeLeader, makeFollower).
func (p *Partition) SetLeader(b int32)      { p.leader = b }
func (p *Partition) SetLeaderEpoch(e int32) { p.leaderEpoch = e }

func (p *Partition) Known() bool           { return p.known }
func (p *Partition) Offline() bool         { return p.offline }
func (p *Partition) HWConfirmed() bool     { return p.hwConfirmed }
func (p *Partition) PartitionEpoch() int32 { return p.partitionEpoch }
func (p *Partition) HWCheckpoint() int64   { return p.hwCheckpoint }
func (p *Partition) Unflushed() int64      { return p.log.UnflushedCount() }

// ResetMemory forgets what a crash forgets: it is no longer known, online, confirmed, and has no
// leader, leader epoch, partition epoch or epoch start offset, no followers' state, no parked
// produces or fetches, no fetch sessions caching it, and an empty ISR: no leader's state at all.
// The log (with its recovery point) and the HW checkpoint are on disk.
func (p *Partition) ResetMemory() {
	p.known, p.hwConfirmed, p.offline = false, false, false
	p.leader, p.leaderEpoch = -1, -1
	p.lead = nil
	p.partitionEpoch = -1
}

// DropParked drops the produces and full fetches parked on it unanswered: the process stopped
// (its sessions go with the FetchSessionCache: ReplicaManager.LoseFetchSessions).
func (p *Partition) DropParked() {
	if l := p.lead; l != nil {
		l.watchers = nil
		l.produces.Clear()
		p.releaseIdle()
	}
}

// Create marks it created by a LeaderAndIsr (getOrCreatePartition).
func (p *Partition) Create() { p.known = true }

// SetOffline marks its log directory failed.
func (p *Partition) SetOffline() { p.offline = true }

// ConfirmHW marks its HW confirmed, and reports whether it was not before.
func (p *Partition) ConfirmHW() bool {
	if p.hwConfirmed {
		return false
	}
	p.hwConfirmed = true
	return true
}

// UnconfirmHW makes its HW a claim again (a follower at a new leader epoch, or a leader stepping
// down).
func (p *Partition) UnconfirmHW() { p.hwConfirmed = false }

// SetPartitionEpoch caches the partition epoch (or zkVersion) a LeaderAndIsr or an ISR write
// carried.
func (p *Partition) SetPartitionEpoch(e int32) { p.partitionEpoch = e }

// CheckpointHW writes hw to the HW checkpoint.
func (p *Partition) CheckpointHW(hw int64) { p.hwCheckpoint = hw }

// Appended follows the append of records to its log, and reports whether its unflushed count
// reached flushInterval (log.flush.interval.messages): the log flushes then (Log.append: `if
// (unflushedMessages >= config.flushInterval) flush()`, 0.10.2.2 to 3.7.0). The count is LEO −
// recovery point, so after a restart that set the recovery point from its checkpoint it includes
// the records recovered above it.
func (p *Partition) Appended(flushInterval int64) bool {
	return p.log.UnflushedCount() >= flushInterval
}

// Log is its log (UnifiedLog, with its leader-epoch cache).
func (p *Partition) Log() *commitlog.Log { return &p.log }
