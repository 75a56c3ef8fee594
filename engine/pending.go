package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// Pending deadlines: what the cluster is waiting for, so a page can say "ZooKeeper session of
// broker 0 expires in 12.4 s" while nothing is in flight, and fast-forward to it. The engine
// derives them from its agenda (timers) and its state (a lagging follower's ISR deadline); the page
// never computes them. Only what a viewer cares about is listed: routine timers (a parked fetch,
// the HW checkpoint, the controller's imbalance check) give way to the ones that change the story.

// Pending is one deadline: at At (simulated ms) something happens unless the cluster moves first.
type Pending struct {
	At        int64      `json:"at"`
	Kind      string     `json:"kind"`
	Broker    Opt[int32] `json:"broker,omitzero"`
	Topic     string     `json:"topic,omitempty"`
	Partition Opt[int32] `json:"partition,omitzero"`
	Text      string     `json:"text"`
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
func (e *Engine) pendingDeadlines(lod *Detail) []Pending {
	var out []Pending
	add := func(p Pending) { out = append(out, p) }
	shrinkAt := make([]int64, len(e.brokers)) // each broker's next ISR shrink check (0: none)
	for i := range e.agenda.items {
		it := &e.agenda.items[i]
		if it.kind == itIsrShrinkTask && e.brokers[it.broker].incarnation == it.timer().incarnation {
			shrinkAt[it.broker] = it.at
			continue
		}
		if p, ok := e.pendingItem(it, lod); ok {
			add(p)
		}
	}
	if lod == nil {
		for _, p := range e.partitions {
			out = append(out, e.isrLag(p, shrinkAt)...)
		}
	} else {
		for _, pid := range lod.pids {
			out = append(out, e.isrLag(e.partitions[pid], shrinkAt)...)
		}
	}
	out = append(out, e.fetcherBackoffs(lod)...)
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

func optOr(o Opt[int32]) int32 {
	if !o.Set {
		return -1
	}
	return o.V
}

// pendingItem describes an agenda item a viewer cares about.
func (e *Engine) pendingItem(it *item, lod *Detail) (Pending, bool) {
	live := func() bool {
		return it.broker >= 0 && e.brokers[it.broker].state != brokerDead && e.brokers[it.broker].incarnation == it.timer().incarnation
	}
	focusedBroker := func(b int32) bool { return lod == nil || lod.Broker(b) }
	switch it.kind {
	case itSessionExpire:
		if s := e.sessions[it.broker]; s.gen != it.sessionExpire().gen || s.connected || !s.registered {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendZKSessionExpiry, Broker: Some(it.broker),
			Text: fmt.Sprintf("ZooKeeper session of broker %d expires (zookeeper.session.timeout.ms = %d ms); then the controller acts",
				it.broker, e.cfg.ZookeeperSessionTimeoutMs)}, true
	case itAutoRebalance:
		if !e.ctrl.active || e.ctrl.epoch != it.autoRebalance().controllerEpoch || !e.cfg.AutoLeaderRebalanceEnable {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendLeaderRebalance, Broker: Some(e.ctrl.broker),
			Text: fmt.Sprintf("controller (broker %d) checks leader imbalance (leader.imbalance.check.interval.seconds = %d)",
				e.ctrl.broker, e.cfg.LeaderImbalanceCheckIntervalS)}, true
	case itCheckpointTask:
		if !live() || !focusedBroker(it.broker) {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendHWCheckpoint, Broker: Some(it.broker),
			Text: fmt.Sprintf("broker %d writes its high watermarks to disk (replica.high.watermark.checkpoint.interval.ms = %d ms)",
				it.broker, e.cfg.HighWatermarkCheckpointMs)}, true
	case itDelayedFetchDone:
		if it.delayedFetchDone().fetch.done || !live() {
			return Pending{}, false
		}
		return e.parkedFetch(it, lod)
	case itDelayedProduceDone:
		dp := it.delayedProduceDone().produce
		if dp.done || !live() || (lod != nil && !lod.Message(dp.req)) {
			return Pending{}, false
		}
		m := dp.req
		p := e.partitions[e.pidOf(m.Produce.TP)]
		return Pending{At: it.at, Kind: PendProduceParked, Broker: Some(it.broker), Topic: p.topic, Partition: Some(p.index),
			Text: fmt.Sprintf("acks=all produce %s to %s waits for high watermark %d, else times out (request.timeout.ms = %d ms)",
				recordRange(m.Produce.RecordIDs), p.name(), dp.required, m.Produce.TimeoutMs)}, true
	case itRequestFailed:
		f := it.requestFailed()
		m := f.req
		if !f.timedOut || e.pending[m.ID] != m || (lod != nil && !lod.Message(m)) {
			return Pending{}, false // only a held request's timeout (held.go); resets are immediate
		}
		setting := fmt.Sprintf("replica.socket.timeout.ms = %d ms", e.cfg.ReplicaSocketTimeoutMs)
		if m.From == ClientNode {
			setting = fmt.Sprintf("request.timeout.ms = %d ms", e.cfg.RequestTimeoutMs)
		}
		return Pending{At: it.at, Kind: PendRequestTimeout, Broker: Some(m.From),
			Text: fmt.Sprintf("%s's %s #%d to %s times out: the link is cut (%s)", nodeName(m.From), m.Type, m.ID, nodeName(m.To), setting)}, true
	case itProducerRetry:
		op := e.clients.produces[it.producerRetry().op-1]
		p := e.partitions[op.pid]
		if op.Done || (lod != nil && !lod.Partition(p.tp())) {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendRetry, Topic: p.topic, Partition: Some(p.index),
			Text: fmt.Sprintf("producer sends %s to %s again (retry.backoff.ms = %d ms)", recordRange(op.RecordIDs), p.name(), e.cfg.RetryBackoffMs)}, true
	case itControllerRetry:
		if e.ctrl.epoch != it.controllerRetry().controllerEpoch || e.ctrl.channels == nil {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendRetry, Broker: Some(it.broker),
			Text: fmt.Sprintf("controller sends its LeaderAndIsr to broker %d again (it got no answer)", it.broker)}, true
	case itResend:
		p := e.partitions[it.alterPartitionResend().pid]
		r := p.replicaOn(it.broker)
		if !live() || r == nil || !r.pending.active || (lod != nil && !lod.Partition(p.tp())) {
			return Pending{}, false
		}
		return Pending{At: it.at, Kind: PendRetry, Broker: Some(it.broker), Topic: p.topic, Partition: Some(p.index),
			Text: fmt.Sprintf("leader %d asks the controller again to change the ISR of %s (AlterPartition)", it.broker, p.name())}, true
	}
	return Pending{}, false
}

// parkedFetch describes a Fetch parked in a leader's purgatory.
func (e *Engine) parkedFetch(it *item, lod *Detail) (Pending, bool) {
	m := it.delayedFetchDone().fetch.req
	if lod != nil && !lod.Message(m) {
		return Pending{}, false
	}
	pk := Pending{At: it.at, Kind: PendFetchParked, Broker: Some(it.broker)}
	all := len(m.Fetch.Partitions)
	what := fmt.Sprintf("%d partitions", all)
	// Name the partition when the fetch carries one (or, in an overview, one focused one).
	var shown []int32
	for _, fp := range m.Fetch.Partitions {
		if lod == nil || lod.Partition(fp.TP) {
			shown = append(shown, e.pidOf(fp.TP))
		}
	}
	if len(shown) == 1 {
		p := e.partitions[shown[0]]
		pk.Topic, pk.Partition, what = p.topic, Some(p.index), p.name()
		if all > 1 {
			what += fmt.Sprintf(" and %d more", all-1)
		}
	}
	pk.Text = fmt.Sprintf("broker %d's Fetch of %s waits on leader %d for new records (replica.fetch.wait.max.ms = %d ms)",
		m.From, what, it.broker, m.Fetch.MaxWaitMs)
	return pk, true
}

// isrLag lists the followers of p's leader that will leave the ISR: behind the leader's log end
// and not caught up for longer than a healthy follower ever is. The leader's shrink check
// (every replica.lag.time.max.ms / 2) removes one once it has not caught up for
// replica.lag.time.max.ms.
func (e *Engine) isrLag(p *partition, shrinkAt []int64) []Pending {
	if p.leader < 0 || e.brokers[p.leader].state == brokerDead {
		return nil
	}
	r := p.replicaOn(p.leader)
	next := shrinkAt[p.leader]
	if r == nil || !r.isLeader() || r.offline || r.pending.active || next == 0 {
		return nil
	}
	lagMax := e.cfg.ReplicaLagTimeMaxMs
	period := max(1, lagMax/2)
	// A follower that fetches keeps catching up within a fetch round; one quiet for longer is
	// stuck, dead or cut off.
	quiet := min(period, e.cfg.ReplicaFetchWaitMaxMs+1000)
	var out []Pending
	for _, id := range r.isr {
		rr := r.remote(id)
		if rr == nil || rr.leo >= r.log.LogEndOffset() || e.now-rr.lastCaughtUpTime <= quiet {
			continue
		}
		due := rr.lastCaughtUpTime + lagMax + 1 // the first instant it is no longer caught up
		at := next
		if at < due {
			at += (due - at + period - 1) / period * period
		}
		out = append(out, Pending{At: at, Kind: PendISRLag, Broker: Some(id), Topic: p.topic, Partition: Some(p.index),
			Text: fmt.Sprintf("follower %d leaves the ISR of %s: behind leader %d for replica.lag.time.max.ms (%d ms)",
				id, p.name(), p.leader, lagMax)})
	}
	return out
}

// fetcherBackoffs lists fetchers backing off after an error, one line per fetcher thread.
func (e *Engine) fetcherBackoffs(lod *Detail) []Pending {
	var out []Pending
	for _, b := range e.brokers {
		if b.state == brokerDead {
			continue
		}
		for _, f := range b.fetchers {
			var until int64
			var n int
			var only *partition
			parts := f.parts
			if lod != nil && !lod.Broker(b.id) {
				parts = focusedParts(f.parts, lod.pids) // not thousands of partitions per view
			}
			for i := range parts {
				st := &parts[i]
				p := e.partitions[st.pid]
				if st.delayUntil <= e.now {
					continue
				}
				if n == 0 || st.delayUntil < until {
					until = st.delayUntil
				}
				n++
				only = p
			}
			if n == 0 {
				continue
			}
			pk := Pending{At: until, Kind: PendBackoff, Broker: Some(b.id)}
			what := fmt.Sprintf("%d partitions", n)
			if n == 1 {
				pk.Topic, pk.Partition, what = only.topic, Some(only.index), only.name()
			}
			pk.Text = fmt.Sprintf("broker %d fetches %s from leader %d again after an error (replica.fetch.backoff.ms = %d ms)",
				b.id, what, f.leader, e.cfg.ReplicaFetchBackoffMs)
			out = append(out, pk)
		}
	}
	return out
}

// focusedParts returns the fetch states (sorted by pid) of the focused partitions pids (sorted).
func focusedParts(parts []fetchState, pids []int32) []fetchState {
	var out []fetchState
	for _, pid := range pids {
		if i, ok := slices.BinarySearchFunc(parts, pid, func(st fetchState, pid int32) int { return cmp.Compare(st.pid, pid) }); ok {
			out = append(out, parts[i])
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
