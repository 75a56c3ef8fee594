package broker

import (
	"slices"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Partition is a broker's Partition object (Partition.scala, with its log's checkpointed HW and
// flush count): the broker holding it, the leader and leader epoch it knows, its pid and slot,
// the partition epoch (the zkVersion before KIP-497's AlterPartition), whether a LeaderAndIsr
// created it since the broker started (known), whether its log directory failed (offline),
// whether its HW comes from the current leadership (HWConfirmed), the HW checkpoint
// (replication-offset-checkpoint), then the log, the records appended since the last flush, the
// leader's epoch start offset, the followers, the ISR state, the parked produces and full
// fetches, and the fetch sessions caching it. The engine's replicas are these.
//
// The struct is 256 bytes, four cache lines (in the broker's slab every Partition starts one),
// laid out by what is read together (TestPartitionLayout holds it): with 100,000 partitions
// every one is cold when touched, and each line read is a miss.
//   - Line 0: the ids and flags, the HW checkpoint and the log's HW, LEO and start: all that a
//     follower's fetch answer without records, the checker (each replica at every HW move), the
//     HW checkpoint and a leader's check of a request read.
//   - Line 1: the log's chunks and epoch cache, the recovery point and the unflushed count: an
//     append, and a leader's read of a follower's fetch (OffsetsForLeaderEpoch's check).
//   - Lines 2 and 3: the leader's state (followers, ISR, purgatories, fetch sessions).
type Partition struct {
	broker      int32 // the broker holding this replica (localBrokerId)
	leader      int32 // -1: none known
	leaderEpoch int32
	// pid is the partition's dense id (the engine's names: protocol.TP on the wire): a
	// session's or a watch list's partition is named by it, without a pointer back into the
	// engine.
	pid int32
	// slot is its index among the broker's replicas (Host.ReplicaAt): the checkpoint's list of
	// HWs moved keeps slots, not pointers the collector would scan.
	slot           int32
	partitionEpoch int32
	known          bool // a LeaderAndIsr created the Partition object since the broker started
	// offline: the log directory failed.
	offline bool
	// hwConfirmed: the local HW comes from the current leadership (this replica leads, or it
	// has applied a fetch response in its current leader epoch). A HW recovered from the
	// checkpoint after a restart is only a claim until then.
	hwConfirmed bool
	// hwNoted: it is on its replica manager's list of HWs moved since the last checkpoint
	// (ReplicaManager.noteHW), which compares the HW with hwCheckpoint: all three in line 0.
	hwNoted bool
	// cached: fetchSessions is not empty. In the first cache line, where the fetchSessions
	// header is in the last: a follower's every append and HW move tells the sessions caching
	// its replica (SessionsChanged), and on a follower there are none.
	cached bool
	// On disk: survive a crash.
	hwCheckpoint int64 // replication-offset-checkpoint
	// log is its UnifiedLog (on disk: it keeps unflushed records unless the page cache is lost).
	log       commitlog.Log
	unflushed int64 // records appended since the last flush (on disk)

	// In memory (continued).
	epochStartOffset int64     // only while leader; -1 otherwise
	remotes          []Replica // the followers' state, leader only, in assignment order without self
	// state is the committed ISR (leader only) and the change in flight (KIP-497).
	state    PartitionState
	produces ProducePurgatory
	// watchers are the full fetches parked on this leader replica, nil before the first (an
	// incremental fetch waits through its session: fetchSessions); fetchSessions are the
	// broker's fetch sessions caching the partition, each with where the partition was last
	// found among its partitions. watchers is behind a pointer: with fetch sessions only a
	// follower's first Fetch is full, and the 16 bytes a slice header would take more make room
	// within the 256 bytes.
	watchers      *watchList
	fetchSessions []sessionRef
	// The struct is 256 bytes: 8 are free.
	_ [8]byte
}

// NewPartition is broker b's replica of partition pid, before any LeaderAndIsr (ResetMemory),
// in slot pid (a broker's tests keep their replicas by pid).
func NewPartition(b, pid int32) Partition {
	p := Partition{broker: b, pid: pid, slot: pid}
	p.ResetMemory()
	return p
}

// Init makes the zero Partition p broker b's replica of pid in slot before any LeaderAndIsr, in
// place: what NewPartition returns, without copying a large struct (a cluster's build makes
// millions).
func (p *Partition) Init(b, pid, slot int32) {
	p.broker, p.pid, p.slot = b, pid, slot
	p.leader, p.leaderEpoch = -1, -1
	p.partitionEpoch, p.epochStartOffset = -1, -1
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

func (p *Partition) Known() bool             { return p.known }
func (p *Partition) Offline() bool           { return p.offline }
func (p *Partition) HWConfirmed() bool       { return p.hwConfirmed }
func (p *Partition) PartitionEpoch() int32   { return p.partitionEpoch }
func (p *Partition) EpochStartOffset() int64 { return p.epochStartOffset }
func (p *Partition) HWCheckpoint() int64     { return p.hwCheckpoint }
func (p *Partition) Unflushed() int64        { return p.unflushed }

// ResetMemory forgets what a crash forgets: it is no longer known, online, confirmed, and has no
// leader, leader epoch, partition epoch or epoch start offset, no followers' state, no parked
// produces or fetches, no fetch sessions caching it, and an empty ISR. The log, the HW
// checkpoint and the unflushed count are on disk.
func (p *Partition) ResetMemory() {
	p.known, p.hwConfirmed, p.offline = false, false, false
	p.leader, p.leaderEpoch = -1, -1
	p.state.Commit(nil)
	p.remotes = nil
	p.produces.Clear()
	p.watchers, p.fetchSessions, p.cached = nil, nil, false
	p.partitionEpoch, p.epochStartOffset = -1, -1
}

// DropParked drops the produces and full fetches parked on it unanswered: the process stopped
// (its sessions go with the FetchSessionCache: ReplicaManager.LoseFetchSessions).
func (p *Partition) DropParked() {
	p.watchers = nil
	p.produces.Clear()
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

// SetEpochStartOffset sets the leader's epoch start offset (-1: not leader).
func (p *Partition) SetEpochStartOffset(o int64) { p.epochStartOffset = o }

// CheckpointHW writes hw to the HW checkpoint.
func (p *Partition) CheckpointHW(hw int64) { p.hwCheckpoint = hw }

// SetUnflushed sets the count of records not yet flushed (at recovery, or 0 after a flush).
func (p *Partition) SetUnflushed(n int64) { p.unflushed = n }

// Appended counts n records appended, and reports whether the count reached flushInterval
// (log.flush.interval.messages): the log flushes then, and the count starts over.
func (p *Partition) Appended(n, flushInterval int64) bool {
	p.unflushed += n
	if p.unflushed < flushInterval {
		return false
	}
	p.unflushed = 0
	return true
}

// Remotes are the followers' state (leader only), in assignment order without this broker.
func (p *Partition) Remotes() []Replica { return p.remotes }

// Remote is follower b's state, nil if b is not a follower of this leader
// (getReplicaOrException).
func (p *Partition) Remote(b int32) *Replica {
	for i := range p.remotes {
		if p.remotes[i].broker == b {
			return &p.remotes[i]
		}
	}
	return nil
}

// ClearRemotes forgets the followers' state (a follower keeps none).
func (p *Partition) ClearRemotes() { p.remotes = nil }

// ResetRemotes is makeLeader's reset of the followers' state on a new leader epoch: one Replica
// for each of hosts but this broker, in their order, kept from the previous epoch if this broker
// led it (wasLeader), reset at now with the epoch starting at start (ResetReplicaState; a
// follower in isr counts as caught up when this broker did not lead before).
func (p *Partition) ResetRemotes(now int64, hosts, isr []int32, wasLeader bool, start int64) {
	p.ResetRemotesIn(nil, now, hosts, isr, wasLeader, start)
}

// ResetRemotesIn is ResetRemotes building the followers' state in buf, an empty array with room
// for them that nothing else uses (a cluster's start cuts every leader's from one array); with
// buf nil it allocates one.
func (p *Partition) ResetRemotesIn(buf []Replica, now int64, hosts, isr []int32, wasLeader bool, start int64) {
	old := p.remotes
	p.remotes = p.remotes[:0:0]
	if n := len(hosts) - 1; n > 0 {
		if buf == nil {
			buf = make([]Replica, 0, n) // one allocation, not one per growth
		}
		p.remotes = buf
	}
	for _, h := range hosts {
		if h == p.broker {
			continue
		}
		inISR := slices.Contains(isr, h)
		rr := NewReplica(h)
		if wasLeader {
			for _, o := range old {
				if o.broker == h {
					rr = o
				}
			}
		}
		rr.ResetReplicaState(now, start, !wasLeader, inISR)
		p.remotes = append(p.remotes, rr)
	}
}

// Produces is its purgatory of produces waiting for acks=all (leader only).
func (p *Partition) Produces() *ProducePurgatory { return &p.produces }

// State is its PartitionState: the committed ISR (leader only) and the change in flight.
func (p *Partition) State() *PartitionState { return &p.state }

// Log is its log (UnifiedLog, with its leader-epoch cache).
func (p *Partition) Log() *commitlog.Log { return &p.log }
