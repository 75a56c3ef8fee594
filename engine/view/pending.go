package view

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/plural"
)

// Pending deadlines: what the cluster is waiting for, so a page can say "ZooKeeper session of
// broker 0 expires in 12.4 s" while nothing is in flight, and fast-forward to it. They come from
// the engine's timers, its purgatory and its state (a lagging follower's ISR deadline); the page
// never computes them. Only what a viewer cares about is listed: routine timers (a parked fetch,
// the HW checkpoint, the controller's imbalance check) give way to the ones that change the story.

// Pending is one deadline: at At (simulated ms) something happens unless the cluster moves first.
type Pending struct {
	At        int64             `json:"at"`
	Kind      string            `json:"kind"`
	Broker    engine.Opt[int32] `json:"broker,omitzero"`
	Topic     string            `json:"topic,omitempty"`
	Partition engine.Opt[int32] `json:"partition,omitzero"`
	Text      string            `json:"text"`
}

// Pending kinds, in the order ties sort. The first six change the story; the last three are
// routine and fill the list only when there is room.
const (
	PendZKSessionExpiry = "zk-session-expiry" // a dead or isolated broker's session expires
	PendISRLag          = "isr-lag"           // a lagging follower leaves the ISR
	PendRequestTimeout  = "request-timeout"   // a request held on a cut link times out
	PendRetry           = "retry"             // a producer, controller or AlterPartition retry
	PendBackoff         = "backoff"           // a fetcher backing off after an error
	PendProduceParked   = "produce-parked"    // an acks=all produce waiting for the HW
	PendFetchParked     = "fetch-parked"      // a Fetch waiting in purgatory for new records
	PendLeaderRebalance = "leader-rebalance"  // the controller's next leader-imbalance check
	PendHWCheckpoint    = "hw-checkpoint"     // a broker writes its high watermarks to disk
)

var pendingKinds = []string{PendZKSessionExpiry, PendISRLag, PendRequestTimeout, PendRetry, PendBackoff,
	PendProduceParked, PendFetchParked, PendLeaderRebalance, PendHWCheckpoint}

// firstRoutine is the index in pendingKinds of the first routine kind.
const firstRoutine = 6

// maxPending bounds the deadlines a view lists.
const maxPending = 12

// pendingDeadlines lists the nearest deadlines a viewer cares about, at most maxPending, sorted by
// time. An overview (lod != nil) keeps cluster-wide ones and those of focused partitions and
// brokers.
func pendingDeadlines(e *engine.Engine, lod *Detail) []Pending {
	var out []Pending
	cfg := e.Config()
	shrinkAt := make([]int64, e.BrokerCount()) // each broker's next ISR shrink check (0: none)
	for _, t := range e.Timers() {
		if t.Kind == engine.TimerISRShrink {
			shrinkAt[t.Broker] = t.At
			continue
		}
		if p, ok := pendingTimer(e, &cfg, t, lod); ok {
			out = append(out, p)
		}
	}
	fetches, produces := e.Purgatory()
	for _, pk := range fetches {
		if !e.Broker(pk.Broker).Dead && (lod == nil || lod.Message(pk.Request)) {
			out = append(out, parkedFetch(e, pk, lod))
		}
	}
	for _, pk := range produces {
		if !e.Broker(pk.Broker).Dead && (lod == nil || lod.Message(pk.Request)) {
			out = append(out, parkedProduce(e, pk))
		}
	}
	if lod == nil {
		for pid := range int32(e.PartitionCount()) {
			out = append(out, isrLag(e, &cfg, e.Partition(pid), shrinkAt)...)
		}
	} else {
		for _, pid := range lod.pids {
			out = append(out, isrLag(e, &cfg, e.Partition(pid), shrinkAt)...)
		}
	}
	out = append(out, fetcherBackoffs(e, &cfg, lod)...)
	rank := func(p Pending) int { return slices.Index(pendingKinds, p.Kind) }
	slices.SortFunc(out, func(a, b Pending) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(rank(a), rank(b)), cmp.Compare(optOr(a.Broker), optOr(b.Broker)),
			cmp.Compare(a.Topic, b.Topic), cmp.Compare(optOr(a.Partition), optOr(b.Partition)), cmp.Compare(a.Text, b.Text))
	})
	// Keep the nearest of the kinds that change the story first, then routine ones if there is
	// room; the result stays in time order.
	var keep []Pending
	for _, routine := range []bool{false, true} {
		for _, p := range out {
			if len(keep) < maxPending && (rank(p) >= firstRoutine) == routine {
				keep = append(keep, p)
			}
		}
	}
	slices.SortStableFunc(keep, func(a, b Pending) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(rank(a), rank(b)))
	})
	if keep == nil {
		keep = []Pending{}
	}
	return keep
}

func optOr(o engine.Opt[int32]) int32 {
	if !o.Set {
		return -1
	}
	return o.V
}

// pendingTimer describes a timer a viewer cares about.
func pendingTimer(e *engine.Engine, cfg *engine.Config, t engine.Timer, lod *Detail) (Pending, bool) {
	focusedBroker := func(b int32) bool { return lod == nil || lod.Broker(b) }
	switch t.Kind {
	case engine.TimerSessionExpiry:
		return Pending{At: t.At, Kind: PendZKSessionExpiry, Broker: engine.Some(t.Broker),
			Text: fmt.Sprintf("ZooKeeper session of broker %d expires (zookeeper.session.timeout.ms = %d ms); then the controller acts",
				t.Broker, cfg.ZookeeperSessionTimeoutMs)}, true
	case engine.TimerLeaderRebalance:
		return Pending{At: t.At, Kind: PendLeaderRebalance, Broker: engine.Some(t.Broker),
			Text: fmt.Sprintf("controller (broker %d) checks leader imbalance (leader.imbalance.check.interval.seconds = %d)",
				t.Broker, cfg.LeaderImbalanceCheckIntervalS)}, true
	case engine.TimerHWCheckpoint:
		if !focusedBroker(t.Broker) {
			return Pending{}, false
		}
		return Pending{At: t.At, Kind: PendHWCheckpoint, Broker: engine.Some(t.Broker),
			Text: fmt.Sprintf("broker %d writes its high watermarks to disk (replica.high.watermark.checkpoint.interval.ms = %d ms)",
				t.Broker, cfg.HighWatermarkCheckpointMs)}, true
	case engine.TimerRequestTimeout:
		m := t.Request
		if lod != nil && !lod.Message(m) {
			return Pending{}, false
		}
		setting := fmt.Sprintf("request.timeout.ms = %d ms", cfg.RequestTimeoutMs)
		if m.Type == engine.MsgAlterPartition {
			setting = fmt.Sprintf("controller.socket.timeout.ms = %d ms", cfg.ControllerSocketTimeoutMs)
		}
		return Pending{At: t.At, Kind: PendRequestTimeout, Broker: engine.Some(m.From),
			Text: fmt.Sprintf("%s's %s #%d to %s times out: the link is cut (%s)", engine.NodeName(m.From), m.Type, m.ID, engine.NodeName(m.To), setting)}, true
	case engine.TimerProducerRetry:
		p := e.Partition(t.Partition)
		if lod != nil && !lod.Partition(p.TP()) {
			return Pending{}, false
		}
		text := fmt.Sprintf("producer sends %s to %s again (after retry.backoff.ms = %d ms, doubled per failure in 3.7 up to retry.backoff.max.ms; at once in 3.7 when the leader changed)",
			recordRange(t.RecordIDs), p.Name(), cfg.RetryBackoffMs)
		if t.Failures == 0 {
			// Never sent: the head of its partition's deque waits for a live leader or a
			// connection with fewer than 5 requests in flight, and looks again then.
			text = fmt.Sprintf("producer looks again at sending %s to %s: it waits for a live leader or a free connection (every retry.backoff.ms = %d ms)",
				recordRange(t.RecordIDs), p.Name(), cfg.RetryBackoffMs)
		}
		return Pending{At: t.At, Kind: PendRetry, Topic: p.Topic(), Partition: engine.Some(p.Index()), Text: text}, true
	case engine.TimerControllerRetry:
		return Pending{At: t.At, Kind: PendRetry, Broker: engine.Some(t.Broker),
			Text: fmt.Sprintf("controller sends the request at the head of broker %d's queue (LeaderAndIsr, UpdateMetadata or StopReplica) again: it got no answer, and retries every 100 ms", t.Broker)}, true
	case engine.TimerAlterPartitionResend:
		p := e.Partition(t.Partition)
		if lod != nil && !lod.Partition(p.TP()) {
			return Pending{}, false
		}
		return Pending{At: t.At, Kind: PendRetry, Broker: engine.Some(t.Broker), Topic: p.Topic(), Partition: engine.Some(p.Index()),
			Text: fmt.Sprintf("leader %d asks the controller again to change the ISR of %s (AlterPartition)", t.Broker, p.Name())}, true
	}
	return Pending{}, false
}

// parkedProduce describes an acks=all produce parked in a leader's purgatory.
func parkedProduce(e *engine.Engine, pk engine.ParkedRequest) Pending {
	m := pk.Request
	pid, _ := e.PartitionID(m.Produce.TP)
	p := e.Partition(pid)
	return Pending{At: pk.Deadline, Kind: PendProduceParked, Broker: engine.Some(pk.Broker), Topic: p.Topic(), Partition: engine.Some(p.Index()),
		Text: fmt.Sprintf("acks=all produce %s to %s waits for high watermark %d, else times out (request.timeout.ms = %d ms)",
			recordRange(m.Produce.RecordIDs), p.Name(), pk.RequiredOffset, m.Produce.TimeoutMs)}
}

// parkedFetch describes a Fetch parked in a leader's purgatory.
func parkedFetch(e *engine.Engine, pk engine.ParkedRequest, lod *Detail) Pending {
	m := pk.Request
	out := Pending{At: pk.Deadline, Kind: PendFetchParked, Broker: engine.Some(pk.Broker)}
	if f := m.Fetch; f.SessionEpoch > 0 {
		// An incremental Fetch waits on its whole session; it lists only what changed.
		out.Text = fmt.Sprintf("broker %d's Fetch (session %d, %s) waits on leader %d for new records (replica.fetch.wait.max.ms = %d ms)",
			m.From, f.SessionID, plural.Of(pk.SessionPartitions, "partition"), pk.Broker, f.MaxWaitMs)
		return out
	}
	all := len(m.Fetch.Partitions)
	what := plural.Of(all, "partition")
	// Name the partition when the fetch carries one (or, in an overview, one focused one).
	var shown []int32
	for _, fp := range m.Fetch.Partitions {
		if lod == nil || lod.Partition(fp.TP) {
			pid, _ := e.PartitionID(fp.TP)
			shown = append(shown, pid)
		}
	}
	if len(shown) == 1 {
		p := e.Partition(shown[0])
		out.Topic, out.Partition, what = p.Topic(), engine.Some(p.Index()), p.Name()
		if all > 1 {
			what += fmt.Sprintf(" and %d more", all-1)
		}
	}
	if m.From == engine.ClientNode {
		// A consumer's Fetch waits for records below the HW (DelayedFetch, FetchIsolation.HIGH_WATERMARK).
		out.Text = fmt.Sprintf("the consumer's Fetch of %s waits on leader %d for records below the high watermark (fetch.max.wait.ms = %d ms)",
			what, pk.Broker, m.Fetch.MaxWaitMs)
		return out
	}
	out.Text = fmt.Sprintf("broker %d's Fetch of %s waits on leader %d for new records (replica.fetch.wait.max.ms = %d ms)",
		m.From, what, pk.Broker, m.Fetch.MaxWaitMs)
	return out
}

// isrLag lists the followers of p's leader that will leave the ISR: not caught up for longer than
// a healthy follower ever is, and, from 2.1, behind the leader's log end (before, a follower at
// the log end that stopped fetching leaves too: Engine.FollowerAtLogEndStaysInISR). The leader's shrink check
// (every replica.lag.time.max.ms / 2) removes one once it has not caught up for
// replica.lag.time.max.ms.
func isrLag(e *engine.Engine, cfg *engine.Config, p engine.PartitionInfo, shrinkAt []int64) []Pending {
	leader := p.Leader()
	if leader < 0 {
		return nil
	}
	r, ok := p.ReplicaOn(leader)
	if !ok || r.Down() {
		return nil
	}
	next := shrinkAt[leader]
	if !r.IsLeader() || r.Offline() || r.PendingISRChange() != "" || next == 0 {
		return nil
	}
	lagMax := cfg.ReplicaLagTimeMaxMs
	period := max(1, lagMax/2)
	// A follower that fetches keeps catching up within a fetch round; one quiet for longer is
	// stuck, dead or cut off.
	quiet := min(period, cfg.ReplicaFetchWaitMaxMs+1000)
	now, leo := e.Now(), r.LogEndOffset()
	levelStays := e.FollowerAtLogEndStaysInISR()
	var out []Pending
	for _, id := range r.ISR() {
		f, ok := r.Follower(id)
		if !ok || (levelStays && f.LogEndOffset >= leo) || now-f.LastCaughtUpTime <= quiet {
			continue
		}
		due := f.LastCaughtUpTime + lagMax + 1 // the first instant it is no longer caught up
		at := next
		if at < due {
			at += (due - at + period - 1) / period * period
		}
		why := "behind leader %d"
		if f.LogEndOffset >= leo {
			why = "no Fetch from it read by leader %d" // before 2.1: at the log end, but silent
		}
		out = append(out, Pending{At: at, Kind: PendISRLag, Broker: engine.Some(id), Topic: p.Topic(), Partition: engine.Some(p.Index()),
			Text: fmt.Sprintf("follower %d leaves the ISR of %s: "+why+" for replica.lag.time.max.ms (%d ms)",
				id, p.Name(), leader, lagMax)})
	}
	return out
}

// fetcherBackoffs lists fetchers backing off after an error, one line per fetcher thread.
func fetcherBackoffs(e *engine.Engine, cfg *engine.Config, lod *Detail) []Pending {
	var out []Pending
	now := e.Now()
	for b := range int32(e.BrokerCount()) {
		if e.Broker(b).Dead {
			continue
		}
		for _, f := range e.Fetchers(b) {
			var until int64
			var n int
			var only int32
			see := func(st engine.FetchState) {
				if st.DelayUntil <= now {
					return
				}
				if n == 0 || st.DelayUntil < until {
					until = st.DelayUntil
				}
				n++
				only = st.Partition
			}
			if lod != nil && !lod.Broker(b) {
				for _, pid := range lod.pids { // not thousands of partitions per view
					if st, ok := f.Find(pid); ok {
						see(st)
					}
				}
			} else {
				for i := range f.Len() {
					see(f.At(i))
				}
			}
			if n == 0 {
				continue
			}
			pk := Pending{At: until, Kind: PendBackoff, Broker: engine.Some(b)}
			what := plural.Of(n, "partition")
			if n == 1 {
				p := e.Partition(only)
				pk.Topic, pk.Partition, what = p.Topic(), engine.Some(p.Index()), p.Name()
			}
			pk.Text = fmt.Sprintf("broker %d fetches %s from leader %d again after an error (replica.fetch.backoff.ms = %d ms)",
				b, what, f.Leader(), cfg.ReplicaFetchBackoffMs)
			out = append(out, pk)
		}
	}
	return out
}

// recordRange names a batch's records as the page labels them: "m4", "m4–m6".
func recordRange(ids []int64) string {
	switch len(ids) {
	case 0:
		return "no records"
	case 1:
		return fmt.Sprintf("m%d", ids[0])
	}
	return fmt.Sprintf("m%d–m%d", ids[0], ids[len(ids)-1])
}
