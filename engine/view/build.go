package view

import (
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// trimPartitions is how many partitions of one message an overview keeps.
const trimPartitions = 20

// maxOps bounds the produce and consume operations a view lists (the latest ones).
const maxOps = 200

// Options chooses how much a view holds.
type Options struct {
	// Focus lists partitions ("topic", index) drawn in full even in an overview.
	Focus []TP
	// FocusBrokers lists brokers drawn in full in an overview: their fetchers' requests in flight,
	// their parked requests, and the messages to and from them.
	FocusBrokers []int32
	// DetailLimit: clusters with more partitions than this get an overview (States) and full
	// detail only for Focus. 0 means 64.
	DetailLimit int
	// NoRecords leaves the records out of replica views, and the verdicts out of partition views.
	NoRecords bool
	// MaxMessages bounds the messages in flight listed (0: 500).
	MaxMessages int
	// Leaders adds View.Leaders to an overview.
	Leaders bool
}

// MaxFocus bounds the partitions one view may focus on.
const MaxFocus = 10_000

// Check names the first thing a view's options ask for that this cluster does not have: a
// focused partition or broker out of range, or too many of them.
func Check(e *engine.Engine, opt Options) error {
	if len(opt.Focus) > MaxFocus {
		return fmt.Errorf("focus: %d partitions; at most %d", len(opt.Focus), MaxFocus)
	}
	for i, tp := range opt.Focus {
		n := e.TopicPartitions(tp.Topic)
		switch {
		case n < 0:
			return fmt.Errorf("focus[%d]: no topic %q in this cluster", i, tp.Topic)
		case tp.Partition < 0 || int(tp.Partition) >= n:
			return fmt.Errorf("focus[%d]: topic %q has partitions 0 to %d, not %d", i, tp.Topic, n-1, tp.Partition)
		}
	}
	brokers := e.BrokerCount()
	if len(opt.FocusBrokers) > brokers {
		return fmt.Errorf("focusBrokers: %d brokers; the cluster has %d", len(opt.FocusBrokers), brokers)
	}
	for i, b := range opt.FocusBrokers {
		if b < 0 || int(b) >= brokers {
			return fmt.Errorf("focusBrokers[%d]: no broker %d (brokers are 0 to %d)", i, b, brokers-1)
		}
	}
	if opt.DetailLimit < 0 || opt.MaxMessages < 0 {
		return fmt.Errorf("detailLimit and maxMessages: must not be negative (0: the default)")
	}
	return nil
}

// defaultDetailLimit is how many partitions a view details when the page does not say.
const defaultDetailLimit = 64

// IsOverview reports whether a view with these options is an overview: the cluster has more
// partitions than it details.
func IsOverview(e *engine.Engine, opt Options) bool {
	if opt.DetailLimit == 0 {
		opt.DetailLimit = defaultDetailLimit
	}
	return e.PartitionCount() > opt.DetailLimit
}

// Build returns the whole state, as much of it as opt asks for.
func Build(e *engine.Engine, opt Options) View { return build(e, opt, nil) }

// Build returns the same view as the package's Build, reading in an overview only the partitions
// the events observed since the last view name.
func (o *Overview) Build(e *engine.Engine, opt Options) View { return build(e, opt, o) }

func build(e *engine.Engine, opt Options, o *Overview) View {
	if opt.MaxMessages == 0 {
		opt.MaxMessages = 500
	}
	c := e.Controller()
	v := View{T: e.Now(), Seed: e.Seed(), Era: e.Era(), Stats: e.Stats(), Config: e.Config().Values(),
		EraDefaults: engine.EraChangedDefaults(e.Config()),
		Partitions:  []PartitionView{}, Consumes: append([]engine.ConsumeOp{}, e.Consumes(maxOps)...),
		Controller: ControllerView{Broker: c.Broker, Epoch: c.Epoch, Active: c.Active},
		Violations: e.Violations(), Produces: e.Produces()}
	v.Clients = clientCounts(v.Produces, e.ConsumeCount())
	v.Produces = v.Produces[max(0, len(v.Produces)-maxOps):]
	overview := IsOverview(e, opt)
	focus := NewDetail(e, opt.FocusBrokers, opt.Focus)
	for b := range int32(e.BrokerCount()) {
		var only []int32 // nil: every partition
		if overview && !focus.Broker(b) {
			// Only the focused partitions, none when nothing is focused: a nil focus here listed
			// every fetcher partition of every broker (a million-partition overview was 212 MB).
			only = focus.pids
			if only == nil {
				only = []int32{}
			}
		}
		v.Brokers = append(v.Brokers, brokerView(e, b, only))
	}
	// Verdicts come with records, in views that list few enough partitions (judge).
	n := e.PartitionCount()
	listed := n
	if overview {
		listed = len(focus.pids)
	}
	judge := !opt.NoRecords && listed <= maxVerdictPartitions
	// The summary's counts and each broker's leaderships: kept between views, or read now.
	if o == nil {
		o = &Overview{}
		o.walk(e, false)
	} else {
		o.refresh(e)
	}
	v.Summary = o.tally.sum
	v.Summary.MaxHWLag = o.maxLag
	for b := range v.Brokers {
		v.Brokers[b].Leaders, v.Brokers[b].UnderReplicated = o.tally.leaders[b], o.tally.unwell[b]
	}
	if overview {
		v.States = string(o.states)
		if opt.Leaders {
			v.Leaders = string(o.digits)
		}
		for _, pid := range focus.pids {
			p := e.Partition(pid)
			v.Partitions = append(v.Partitions, partitionView(p, partitionState(p), opt, judge))
		}
	} else {
		for pid := range int32(n) {
			p := e.Partition(pid)
			v.Partitions = append(v.Partitions, partitionView(p, partitionState(p), opt, judge))
		}
	}
	tally := e.Tallies()
	v.Summary.ISRShrinks, v.Summary.ISRExpands, v.Summary.LeaderChanges = tally.ISRShrinks, tally.ISRExpands, tally.LeaderChanges
	v.Traffic = traffic(tally.Flows)
	var lod *Detail
	if overview {
		lod = focus
	}
	collectAgenda(e, &v, opt.MaxMessages, lod)
	v.Pending = pendingDeadlines(e, lod)
	return v
}

// clientCounts counts the produce operations (all of them) and the consumes.
func clientCounts(produces []engine.ProduceOp, consumes int) ClientCounts {
	c := ClientCounts{Produces: len(produces), Consumes: consumes}
	for _, op := range produces {
		switch {
		case !op.Done:
			c.Open++
		case op.Result == engine.ResultAcked:
			c.Acked++
		case op.Result != engine.ResultSent:
			c.Failed++
		}
	}
	return c
}

func partitionState(p engine.PartitionInfo) string {
	switch {
	case p.Leader() < 0:
		return "offline"
	case p.ISRSize() < p.MinISR():
		return "under-min-isr"
	case p.ISRSize() < p.ReplicationFactor():
		return "under-replicated"
	}
	return "healthy"
}

func partitionView(p engine.PartitionInfo, st string, opt Options, judge bool) PartitionView {
	pv := PartitionView{Topic: p.Topic(), Partition: p.Index(), Assignment: p.Assignment(), Leader: p.Leader(),
		LeaderEpoch: p.LeaderEpoch(), PartitionEpoch: p.PartitionEpoch(), ISR: p.ISR(),
		Recovering: p.Recovering(), Acked: p.Acked(), State: st}
	for _, r := range p.Replicas() {
		pv.Replicas = append(pv.Replicas, replicaView(r, opt))
	}
	if judge {
		pv.Verdicts = verdicts(p)
	}
	return pv
}

func replicaView(r engine.ReplicaInfo, opt Options) ReplicaView {
	rv := ReplicaView{Broker: r.Broker(), LeaderEpoch: r.LeaderEpoch(), LogStartOffset: r.LogStartOffset(),
		LogEndOffset: r.LogEndOffset(), HighWatermark: r.HighWatermark(), RecoveryPoint: r.RecoveryPoint(),
		HWCheckpoint: r.HWCheckpoint(), EpochStartOffset: r.EpochStartOffset(), EpochCache: r.EpochCache()}
	if !opt.NoRecords {
		rv.Records = r.Records()
	}
	switch {
	case r.Down():
		rv.Role = "down"
	case r.Offline():
		rv.Role = "offline"
	case !r.Known():
		rv.Role = "unknown"
	case r.IsLeader():
		rv.Role = "leader"
		rv.ISR = r.ISR()
		rv.MaximalISR = r.MaximalISR()
		rv.Pending = r.PendingISRChange()
		for _, f := range r.Followers() {
			rv.Followers = append(rv.Followers, FollowerView{Broker: f.Broker, LogEndOffset: f.LogEndOffset,
				LastCaughtUpTime: max(f.LastCaughtUpTime, -1), LastFetchTime: max(f.LastFetchTime, -1), CaughtUp: f.CaughtUp})
		}
	default:
		rv.Role = "follower"
	}
	return rv
}

// brokerView describes a broker. In an overview (only != nil: the broker itself is not focused)
// a fetcher lists only the focused partitions (only, sorted ids) and counts the rest, and shows
// its request in flight only when it carries one of them, so a view of a large cluster stays
// small and steady.
func brokerView(e *engine.Engine, id int32, only []int32) BrokerView {
	b := e.Broker(id)
	bv := BrokerView{ID: b.ID, State: b.State, Isolated: b.Isolated, DiskFailed: b.DiskFailed, StartsOnExpiry: b.StartsOnExpiry,
		Registered: b.Registered, BrokerEpoch: b.BrokerEpoch, ControllerEpoch: b.ControllerEpoch,
		Fetchers: []FetcherView{}, ParkedFetches: []Parked{}, ParkedProduces: []Parked{}}
	now := e.Now()
	for _, f := range e.Fetchers(id) {
		fv := FetcherView{Leader: f.Leader(), ID: f.ID(), InFlight: f.InFlight(), Count: f.Len(), Dead: f.Dead(), Partitions: []FetchStateView{}}
		add := func(st engine.FetchState) {
			p := e.Partition(st.Partition)
			state := "fetching"
			switch {
			case fv.Dead:
				state = "stopped"
			case st.DelayUntil > now:
				state = "delayed"
			case st.Truncating:
				state = "truncating"
			}
			fv.Partitions = append(fv.Partitions, FetchStateView{Topic: p.Topic(), Partition: p.Index(),
				FetchOffset: st.FetchOffset, LeaderEpoch: st.LeaderEpoch, LastFetchedEpoch: st.LastFetchedEpoch,
				State: state, DelayedUntil: st.DelayUntil})
		}
		if only == nil {
			for i := range f.Len() {
				add(f.At(i))
			}
		} else {
			// The fetcher's partitions are sorted: find the focused ones instead of walking thousands.
			for _, pid := range only {
				if st, ok := f.Find(pid); ok {
					add(st)
				}
			}
			if len(fv.Partitions) == 0 {
				fv.InFlight = 0
			}
		}
		bv.Fetchers = append(bv.Fetchers, fv)
	}
	return bv
}

// collectAgenda lists the messages in flight and the parked requests, in id order. An overview
// (lod != nil) keeps only what concerns a focused broker or partition, cut to the focused
// partitions, and counts the rest.
func collectAgenda(e *engine.Engine, v *View, maxMessages int, lod *Detail) {
	v.Messages = []*protocol.Message{}
	for _, m := range e.InFlight() {
		if lod != nil && !lod.Message(m) {
			v.MessagesOmitted++
			continue
		}
		v.Messages = append(v.Messages, m)
	}
	fetches, produces := e.Purgatory()
	for _, pk := range fetches {
		m := pk.Request
		bv := &v.Brokers[pk.Broker]
		bv.ParkedFetchCount++
		if lod != nil && !lod.Message(m) {
			continue
		}
		p := Parked{Message: m.ID, From: m.From, Deadline: pk.Deadline, Count: len(m.Fetch.Partitions)}
		if m.Fetch.SessionEpoch > 0 {
			p.Session, p.Count = m.Fetch.SessionID, pk.SessionPartitions
		} else {
			for _, fp := range m.Fetch.Partitions {
				if lod == nil || lod.Partition(fp.TP) {
					p.Topics = append(p.Topics, fp.TP)
				}
			}
		}
		bv.ParkedFetches = append(bv.ParkedFetches, p)
	}
	for _, pk := range produces {
		m := pk.Request
		bv := &v.Brokers[pk.Broker]
		bv.ParkedProduceCount++
		if lod != nil && !lod.Message(m) {
			continue
		}
		bv.ParkedProduces = append(bv.ParkedProduces, Parked{Message: m.ID, From: m.From, Deadline: pk.Deadline,
			Topics: []TP{m.Produce.TP}, Count: 1, RequiredOffset: pk.RequiredOffset})
	}
	slices.SortFunc(v.Messages, func(a, b *protocol.Message) int { return int(a.ID) - int(b.ID) })
	if len(v.Messages) > maxMessages {
		v.MessagesOmitted += len(v.Messages) - maxMessages
		v.Messages = v.Messages[:maxMessages]
	}
	if lod != nil {
		for i, m := range v.Messages {
			v.Messages[i] = focused(m, lod.Partition, trimPartitions)
		}
	}
	for i := range v.Brokers {
		slices.SortFunc(v.Brokers[i].ParkedFetches, func(a, b Parked) int { return int(a.Message) - int(b.Message) })
		slices.SortFunc(v.Brokers[i].ParkedProduces, func(a, b Parked) int { return int(a.Message) - int(b.Message) })
	}
}
