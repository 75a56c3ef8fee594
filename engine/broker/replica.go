package broker

// Never is a time long before the run: Kafka resets lastCaughtUpTimeMs to 0, which against a
// wall clock in epoch milliseconds is "never"; simulated time starts at 0, so 0 would mean "just
// now".
const Never int64 = -1 << 50

// Replica is what a leader knows of one follower (Replica.scala; Kafka's Partition keeps one per
// remote replica, the engine's leader replica keeps them in assignment order without itself).
// Its methods are Replica's; the leader's fetch path reads and updates it per partition, so it is
// a concrete type whose small methods inline.
type Replica struct {
	broker             int32
	leo                int64 // -1 unknown
	logStart           int64
	lastFetchLeaderLEO int64
	lastFetchTime      int64
	lastCaughtUpTime   int64
	brokerEpoch        int64
}

// NewReplica is a follower the leader knows nothing of yet: offsets unknown, never fetched.
func NewReplica(broker int32) Replica {
	return Replica{broker: broker, leo: -1, logStart: -1, lastFetchLeaderLEO: -1, lastFetchTime: Never,
		lastCaughtUpTime: Never}
}

// Broker is the follower's broker id.
func (rr *Replica) Broker() int32 { return rr.broker }

// LogEndOffset is the follower's LEO as its last fetch stated it, -1 unknown.
func (rr *Replica) LogEndOffset() int64 { return rr.leo }

// LogStartOffset is the follower's log start as its last fetch stated it, -1 unknown.
func (rr *Replica) LogStartOffset() int64 { return rr.logStart }

// LastFetchLeaderLogEndOffset is the leader's LEO at the follower's last fetch.
func (rr *Replica) LastFetchLeaderLogEndOffset() int64 { return rr.lastFetchLeaderLEO }

// BrokerEpoch is the broker epoch the follower's last fetch carried (KIP-903).
func (rr *Replica) BrokerEpoch() int64 { return rr.brokerEpoch }

// LastFetchTime and LastCaughtUpTime are the stored times; a leader whose fetch sessions read
// the partition without writing them down knows later ones (Partition.FollowerTimes).
func (rr *Replica) LastFetchTime() int64    { return rr.lastFetchTime }
func (rr *Replica) LastCaughtUpTime() int64 { return rr.lastCaughtUpTime }

// IsCaughtUp is Replica.isCaughtUp: the follower is at the leader's LEO, or was caught up within
// replica.lag.time.max.ms.
func (rr *Replica) IsCaughtUp(leaderEndOffset, now, replicaMaxLagMs int64) bool {
	return rr.leo == leaderEndOffset || now-rr.lastCaughtUpTime <= replicaMaxLagMs
}

// UpdateFetchState is Replica.updateFetchStateOrThrow: a fetch at fetchOffset while the leader's
// LEO is leaderEndOffset. It reports whether the follower's LEO moved.
func (rr *Replica) UpdateFetchState(now, fetchOffset, logStart, leaderEndOffset, brokerEpoch int64) bool {
	switch {
	case fetchOffset >= leaderEndOffset:
		rr.lastCaughtUpTime = max(rr.lastCaughtUpTime, now)
	case fetchOffset >= rr.lastFetchLeaderLEO:
		rr.lastCaughtUpTime = max(rr.lastCaughtUpTime, rr.lastFetchTime)
	}
	moved := rr.leo != fetchOffset
	rr.leo = fetchOffset
	rr.logStart = logStart
	rr.lastFetchLeaderLEO = max(leaderEndOffset, rr.lastFetchLeaderLEO)
	rr.lastFetchTime = now
	rr.brokerEpoch = brokerEpoch
	return moved
}

// ReadFailed is Replica.updateLogReadResult with the unknown LogReadResult of a failed read
// (before 2.4, KAFKA-8400): LEO, log start, the leader's LEO at the last fetch and the last fetch
// time unknown; lastCaughtUpTimeMs stays (max with -1).
func (rr *Replica) ReadFailed() {
	rr.leo, rr.logStart, rr.lastFetchLeaderLEO, rr.lastFetchTime = -1, -1, -1, Never
}

// ResetReplicaState is Replica.resetReplicaState on a new leader epoch: a new leader (not leading
// before) starts from what NewReplica knows; a leader staying on keeps the follower's offsets and
// takes its own LEO as the last fetch's. A follower in the ISR counts as caught up (and, for a
// leader staying on, as fetched) now.
func (rr *Replica) ResetReplicaState(now, leaderEndOffset int64, isNewLeader, inSync bool) {
	if isNewLeader {
		*rr = NewReplica(rr.broker)
	} else {
		rr.lastFetchLeaderLEO = leaderEndOffset
		rr.lastFetchTime = Never
		if inSync {
			rr.lastFetchTime = now
		}
	}
	rr.lastCaughtUpTime = Never
	if inSync {
		rr.lastCaughtUpTime = now
	}
}

// SawFetchesUntil writes down the times a leader's fetch session's reads would have set, up to
// at: the engine's fetch sessions read a clean partition without touching this state (a follower
// at the LEO fetching sets both times to the fetch's), and write it down when the partition
// becomes dirty. Kafka has no such step: its sessions read every partition at every fetch.
func (rr *Replica) SawFetchesUntil(at int64) {
	rr.lastFetchTime = max(rr.lastFetchTime, at)
	rr.lastCaughtUpTime = max(rr.lastCaughtUpTime, at)
}
