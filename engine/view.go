package engine

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// View is the whole state at one instant, as the page draws it. It shares nothing with the
// engine's state (messages aside, which are immutable).
type View struct {
	T    int64  `json:"t"`
	Seed uint64 `json:"seed"`
	Era  string `json:"era"`
	// Config is every setting in force (Kafka names and sim.*).
	Config map[string]any `json:"config"`
	// EraDefaults names the settings in force at their era's own default where that differs from
	// 3.7's (EraDefaults), with 3.7's value, so the page can say what the era changed.
	EraDefaults map[string]any  `json:"eraDefaults,omitempty"`
	Controller  ControllerView  `json:"controller"`
	Brokers     []BrokerView    `json:"brokers"`
	Summary     Summary         `json:"summary"`
	Partitions  []PartitionView `json:"partitions"`
	// States has one letter per partition (in topic order) when the view is an overview:
	// h healthy, u under-replicated, m under min.insync.replicas, o offline (no leader).
	States string `json:"states,omitempty"`
	// Leaders, in an overview asked for it (ViewOptions.Leaders), has each partition's leader as
	// two base-36 digits ("0h" is broker 17; "--" no leader), in topic order.
	Leaders    string      `json:"leaders,omitempty"`
	Messages   []*Message  `json:"messages"`
	Violations []Violation `json:"violations"`
	Produces   []ProduceOp `json:"produces"` // the latest 200
	// Clients counts every client operation so far (the lists hold only the latest).
	Clients  ClientCounts `json:"clients"`
	Consumes []ConsumeOp  `json:"consumes"` // the latest 200
	Stats    Stats        `json:"stats"`
	// Traffic is the replica fetch traffic between brokers since time 0.
	Traffic Traffic `json:"traffic"`
	// MessagesOmitted counts the messages in flight an overview leaves out: those that neither
	// carry a focused partition nor go to or from a focused broker.
	MessagesOmitted int `json:"messagesOmitted,omitempty"`
	// Pending lists the nearest deadlines the cluster waits on (pending.go), by time.
	Pending []Pending `json:"pending"`
}

// ClientCounts counts producer and consumer operations.
type ClientCounts struct {
	Produces int `json:"produces"`
	Open     int `json:"open"`
	Acked    int `json:"acked"`
	Failed   int `json:"failed"`
	Consumes int `json:"consumes"`
}

func (e *Engine) clientCounts() ClientCounts {
	c := ClientCounts{Produces: len(e.clients.produces), Consumes: len(e.clients.consumes)}
	for _, op := range e.clients.produces {
		switch {
		case !op.Done:
			c.Open++
		case op.Result == ResultAcked:
			c.Acked++
		case op.Result != ResultSent:
			c.Failed++
		}
	}
	return c
}

// ControllerView is the active controller.
type ControllerView struct {
	Broker int32 `json:"broker"`
	Epoch  int32 `json:"epoch"`
	Active bool  `json:"active"`
}

// BrokerView is one broker.
type BrokerView struct {
	ID         int32  `json:"id"`
	State      string `json:"state"`
	Isolated   bool   `json:"isolated"`
	DiskFailed bool   `json:"diskFailed"`
	Registered bool   `json:"registered"`
	// StartsOnExpiry: restarted before its old ZooKeeper session expired, in an era without
	// broker epochs (before 2.2): it starts when that session expires.
	StartsOnExpiry  bool  `json:"startsOnExpiry,omitempty"`
	BrokerEpoch     int64 `json:"brokerEpoch"`
	ControllerEpoch int32 `json:"controllerEpoch"`
	Leaders         int   `json:"leaders"`
	// UnderReplicated counts the partitions it leads that are under-replicated (or under min ISR).
	UnderReplicated int           `json:"underReplicated"`
	Fetchers        []FetcherView `json:"fetchers"`
	// An overview lists parked requests only for focused brokers, and those carrying a focused
	// partition; the counts are of all of them.
	ParkedFetches      []Parked `json:"parkedFetches"`
	ParkedProduces     []Parked `json:"parkedProduces"`
	ParkedFetchCount   int      `json:"parkedFetchCount"`
	ParkedProduceCount int      `json:"parkedProduceCount"`
}

// FetcherView is one replica fetcher thread.
type FetcherView struct {
	Leader     int32            `json:"leader"`
	ID         int32            `json:"id"`
	InFlight   uint64           `json:"inFlight"` // the Fetch in flight (an overview: focused ones only)
	Count      int              `json:"count"`    // partitions carried (an overview lists only focused ones)
	Partitions []FetchStateView `json:"partitions"`
}

// FetchStateView is one partition of a fetcher.
type FetchStateView struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	FetchOffset      int64  `json:"fetchOffset"`
	LeaderEpoch      int32  `json:"leaderEpoch"`
	LastFetchedEpoch int32  `json:"lastFetchedEpoch"`
	State            string `json:"state"` // fetching, truncating or delayed
	DelayedUntil     int64  `json:"delayedUntil,omitempty"`
}

// Parked is a request waiting in purgatory.
type Parked struct {
	Message  uint64 `json:"message"`
	From     int32  `json:"from"`
	Deadline int64  `json:"deadline"`
	Topics   []TP   `json:"partitions"`
	Count    int    `json:"count"` // partitions in the request (an overview omits the list)
	// RequiredOffset is the HW an acks=all produce waits for.
	RequiredOffset int64 `json:"requiredOffset,omitempty"`
}

// Summary counts partition states across the cluster.
type Summary struct {
	Partitions      int   `json:"partitions"`
	UnderReplicated int   `json:"underReplicated"`
	UnderMinIsr     int   `json:"underMinIsr"`
	Offline         int   `json:"offline"`
	Acked           int64 `json:"acked"`
	// HWLag sums, over partitions with a live leader, the leader's log end minus its high
	// watermark: records written but not yet committed. MaxHWLag is the largest, Lagging how many
	// partitions have any.
	HWLag    int64 `json:"hwLag"`
	MaxHWLag int64 `json:"maxHwLag"`
	Lagging  int   `json:"lagging"`
	// Run-wide counts of committed ISR changes and leader changes.
	ISRShrinks    int64 `json:"isrShrinks"`
	ISRExpands    int64 `json:"isrExpands"`
	LeaderChanges int64 `json:"leaderChanges"`
}

// PartitionView is one partition: the controller's state and every replica.
type PartitionView struct {
	Topic          string        `json:"topic"`
	Partition      int32         `json:"partition"`
	Assignment     []int32       `json:"assignment"`
	Leader         int32         `json:"leader"`
	LeaderEpoch    int32         `json:"leaderEpoch"`
	PartitionEpoch int32         `json:"partitionEpoch"`
	ISR            []int32       `json:"isr"`
	Recovering     bool          `json:"recovering"`
	Acked          int64         `json:"acked"`
	State          string        `json:"state"`
	Replicas       []ReplicaView `json:"replicas"`
	// Verdicts judge the latest 200 acknowledged records (verdicts.go); left out with NoRecords
	// and in views listing more than maxVerdictPartitions partitions.
	Verdicts []Verdict `json:"verdicts,omitempty"`
}

// ReplicaView is one broker's replica.
type ReplicaView struct {
	Broker           int32                  `json:"broker"`
	Role             string                 `json:"role"` // leader, follower, unknown (not yet told), offline, down
	LeaderEpoch      int32                  `json:"leaderEpoch"`
	LogStartOffset   int64                  `json:"logStartOffset"`
	LogEndOffset     int64                  `json:"logEndOffset"`
	HighWatermark    int64                  `json:"highWatermark"`
	RecoveryPoint    int64                  `json:"recoveryPoint"`
	HWCheckpoint     int64                  `json:"hwCheckpoint"`
	EpochStartOffset int64                  `json:"epochStartOffset"`
	EpochCache       []commitlog.EpochEntry `json:"epochCache"`
	Records          []commitlog.Record     `json:"records,omitempty"`
	ISR              []int32                `json:"isr,omitempty"`
	MaximalISR       []int32                `json:"maximalIsr,omitempty"`
	Pending          string                 `json:"pending,omitempty"` // expand or shrink in flight
	Followers        []FollowerView         `json:"followers,omitempty"`
}

// FollowerView is what a leader knows of a follower.
type FollowerView struct {
	Broker           int32 `json:"broker"`
	LogEndOffset     int64 `json:"logEndOffset"`
	LastCaughtUpTime int64 `json:"lastCaughtUpTime"` // -1: never
	LastFetchTime    int64 `json:"lastFetchTime"`
	CaughtUp         bool  `json:"caughtUp"`
}

// trimPartitions is how many partitions of one message an overview keeps.
const trimPartitions = 20

// maxOps bounds the produce and consume operations a view lists (the latest ones).
const maxOps = 200

// ViewOptions chooses how much a view holds.
type ViewOptions struct {
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

// CheckViewOptions names the first thing a view's options ask for that this cluster does not
// have: a focused partition or broker out of range, or too many of them.
func (e *Engine) CheckViewOptions(opt ViewOptions) error {
	if len(opt.Focus) > MaxFocus {
		return fmt.Errorf("focus: %d partitions; at most %d", len(opt.Focus), MaxFocus)
	}
	for i, tp := range opt.Focus {
		n := e.topicPartitions(tp.Topic)
		switch {
		case n < 0:
			return fmt.Errorf("focus[%d]: no topic %q in this cluster", i, tp.Topic)
		case tp.Partition < 0 || int(tp.Partition) >= n:
			return fmt.Errorf("focus[%d]: topic %q has partitions 0 to %d, not %d", i, tp.Topic, n-1, tp.Partition)
		}
	}
	if len(opt.FocusBrokers) > len(e.brokers) {
		return fmt.Errorf("focusBrokers: %d brokers; the cluster has %d", len(opt.FocusBrokers), len(e.brokers))
	}
	for i, b := range opt.FocusBrokers {
		if b < 0 || int(b) >= len(e.brokers) {
			return fmt.Errorf("focusBrokers[%d]: no broker %d (brokers are 0 to %d)", i, b, len(e.brokers)-1)
		}
	}
	if opt.DetailLimit < 0 || opt.MaxMessages < 0 {
		return fmt.Errorf("detailLimit and maxMessages: must not be negative (0: the default)")
	}
	return nil
}

// defaultDetailLimit is how many partitions a view details when the page does not say.
const defaultDetailLimit = 64

// Overview reports whether a view with these options is an overview: the cluster has more
// partitions than it details.
func (e *Engine) Overview(opt ViewOptions) bool {
	if opt.DetailLimit == 0 {
		opt.DetailLimit = defaultDetailLimit
	}
	return len(e.partitions) > opt.DetailLimit
}

// View returns the whole state.
func (e *Engine) View(opt ViewOptions) View {
	if opt.MaxMessages == 0 {
		opt.MaxMessages = 500
	}
	v := View{T: e.now, Seed: e.seed, Era: e.era.version, Stats: e.Stats(), Config: e.cfg.Values(),
		EraDefaults: eraChangedDefaults(e.cfg),
		Partitions:  []PartitionView{}, Consumes: []ConsumeOp{},
		Controller: ControllerView{Broker: e.ctrl.broker, Epoch: e.ctrl.epoch, Active: e.ctrl.active},
		Violations: e.Violations(), Produces: e.Produces()}
	for _, c := range e.clients.consumes[max(0, len(e.clients.consumes)-maxOps):] {
		v.Consumes = append(v.Consumes, *c)
	}
	v.Produces = v.Produces[max(0, len(v.Produces)-maxOps):]
	v.Clients = e.clientCounts()
	overview := e.Overview(opt)
	focus := e.Detail(opt.FocusBrokers, opt.Focus)
	v.Summary.ISRShrinks, v.Summary.ISRExpands, v.Summary.LeaderChanges = e.tally.isrShrinks, e.tally.isrExpands, e.tally.leaderChanges
	v.Traffic = e.Traffic()
	for _, b := range e.brokers {
		var only []int32 // nil: every partition
		if overview && !focus.Broker(b.id) {
			only = focus.pids
		}
		v.Brokers = append(v.Brokers, e.brokerView(b, only))
	}
	// Verdicts come with records, in views that list few enough partitions (judge).
	listed := len(e.partitions)
	if overview {
		listed = len(focus.pids)
	}
	judge := !opt.NoRecords && listed <= maxVerdictPartitions
	states := make([]byte, 0, len(e.partitions))
	next := 0 // focus.pids[next] is the next focused partition (partitions go in pid order)
	for _, p := range e.partitions {
		focused := next < len(focus.pids) && focus.pids[next] == p.pid
		if focused {
			next++
		}
		st := e.partitionState(p)
		v.Summary.Partitions++
		v.Summary.Acked += e.client(p).acked
		switch st {
		case "under-replicated":
			v.Summary.UnderReplicated++
		case "under-min-isr":
			v.Summary.UnderReplicated++
			v.Summary.UnderMinIsr++
		case "offline":
			v.Summary.Offline++
		}
		if p.leader >= 0 {
			v.Brokers[p.leader].Leaders++
			if st != "healthy" {
				v.Brokers[p.leader].UnderReplicated++
			}
		}
		if lag := e.hwLag(p); lag > 0 {
			v.Summary.HWLag += lag
			v.Summary.MaxHWLag = max(v.Summary.MaxHWLag, lag)
			v.Summary.Lagging++
		}
		if st == "under-min-isr" {
			states = append(states, 'm')
		} else {
			states = append(states, st[0])
		}
		if !overview || focused {
			v.Partitions = append(v.Partitions, e.partitionView(p, st, opt, judge))
		}
	}
	if overview {
		v.States = string(states)
		if opt.Leaders {
			v.Leaders = e.leaderDigits()
		}
	}
	var lod *Detail
	if overview {
		lod = focus
	}
	e.collectAgenda(&v, opt.MaxMessages, lod)
	v.Pending = e.pendingDeadlines(lod)
	return v
}

func (e *Engine) partitionState(p *partition) string {
	switch {
	case p.leader < 0:
		return "offline"
	case len(p.isr) < e.effectiveMinIsr(p):
		return "under-min-isr"
	case len(p.isr) < len(p.hosts):
		return "under-replicated"
	}
	return "healthy"
}

func (e *Engine) partitionView(p *partition, st string, opt ViewOptions, judge bool) PartitionView {
	pv := PartitionView{Topic: p.topic, Partition: p.index, Assignment: slices.Clone(p.assignment), Leader: p.leader,
		LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch, ISR: slices.Clone(p.isr),
		Recovering: p.recovering, Acked: e.client(p).acked, State: st}
	for _, r := range p.replicas {
		pv.Replicas = append(pv.Replicas, e.replicaView(r, opt))
	}
	if judge {
		pv.Verdicts = e.verdicts(p)
	}
	return pv
}

func (e *Engine) replicaView(r *replica, opt ViewOptions) ReplicaView {
	rv := ReplicaView{Broker: r.broker, LeaderEpoch: r.leaderEpoch, LogStartOffset: r.log.LogStartOffset(),
		LogEndOffset: r.log.LogEndOffset(), HighWatermark: r.log.HighWatermark(), RecoveryPoint: r.log.RecoveryPoint(),
		HWCheckpoint: r.hwCheckpoint, EpochStartOffset: r.epochStartOffset,
		EpochCache: slices.Clone(r.log.Cache().Entries())}
	if !opt.NoRecords {
		rv.Records = slices.Clone(r.log.Records())
	}
	switch {
	case e.brokers[r.broker].state == brokerDead:
		rv.Role = "down"
	case r.offline:
		rv.Role = "offline"
	case !r.known:
		rv.Role = "unknown"
	case r.isLeader():
		rv.Role = "leader"
		rv.ISR = slices.Clone(r.isr)
		rv.MaximalISR = slices.Clone(r.maximalISR())
		if r.pending.active {
			rv.Pending = "shrink"
			if r.pending.expand {
				rv.Pending = "expand"
			}
		}
		for i := range r.remotes {
			rr := &r.remotes[i]
			rv.Followers = append(rv.Followers, FollowerView{Broker: rr.broker, LogEndOffset: rr.leo,
				LastCaughtUpTime: max(rr.lastCaughtUpTime, -1), LastFetchTime: max(rr.lastFetchTime, -1), CaughtUp: e.caughtUp(r, rr)})
		}
	default:
		rv.Role = "follower"
	}
	return rv
}

// brokerView describes a broker. In an overview (only != nil: the broker itself is not focused)
// a fetcher lists only the focused partitions (only, sorted pids) and counts the rest, and shows
// its request in flight only when it carries one of them, so a view of a large cluster stays
// small and steady.
func (e *Engine) brokerView(b *broker, only []int32) BrokerView {
	s := e.sessions[b.id]
	bv := BrokerView{ID: b.id, State: b.state.String(), Isolated: b.isolated, DiskFailed: b.diskFailed, StartsOnExpiry: b.startsOnExpiry,
		Registered: s.registered, BrokerEpoch: b.brokerEpoch, ControllerEpoch: b.controllerEpoch,
		Fetchers: []FetcherView{}, ParkedFetches: []Parked{}, ParkedProduces: []Parked{}}
	for _, f := range b.fetchers {
		fv := FetcherView{Leader: f.leader, ID: f.id, InFlight: f.inflight, Count: len(f.parts), Partitions: []FetchStateView{}}
		parts := f.parts
		if only != nil {
			// f.parts is sorted by pid: find the focused ones instead of walking thousands.
			parts = nil
			for _, pid := range only {
				if i, ok := slices.BinarySearchFunc(f.parts, pid, func(st fetchState, pid int32) int { return cmp.Compare(st.pid, pid) }); ok {
					parts = append(parts, f.parts[i])
				}
			}
		}
		for _, st := range parts {
			p := e.partitions[st.pid]
			state := "fetching"
			switch {
			case st.delayUntil > e.now:
				state = "delayed"
			case st.truncating:
				state = "truncating"
			}
			fv.Partitions = append(fv.Partitions, FetchStateView{Topic: p.topic, Partition: p.index,
				FetchOffset: st.fetchOffset, LeaderEpoch: st.epoch, LastFetchedEpoch: st.lastFetchedEpoch,
				State: state, DelayedUntil: st.delayUntil})
		}
		if only != nil && len(fv.Partitions) == 0 {
			fv.InFlight = 0
		}
		bv.Fetchers = append(bv.Fetchers, fv)
	}
	return bv
}

// collectAgenda lists the messages in flight and the parked requests, in id order. An overview
// (lod != nil) keeps only what concerns a focused broker or partition, cut to the focused
// partitions, and counts the rest.
func (e *Engine) collectAgenda(v *View, maxMessages int, lod *Detail) {
	v.Messages = []*Message{}
	for i := range e.agenda.items {
		it := &e.agenda.items[i]
		switch it.kind {
		case itDeliver:
			m := it.deliverMsg().msg
			if lod != nil && !lod.Message(m) {
				v.MessagesOmitted++
				continue
			}
			v.Messages = append(v.Messages, m)
		case itDelayedFetchDone:
			p := it.delayedFetchDone()
			if p.fetch.done || e.brokers[p.broker].incarnation != p.incarnation {
				continue
			}
			m := p.fetch.req
			bv := &v.Brokers[it.broker]
			bv.ParkedFetchCount++
			if lod != nil && !lod.Message(m) {
				continue
			}
			pk := Parked{Message: m.ID, From: m.From, Deadline: it.at, Count: len(m.Fetch.Partitions)}
			for _, fp := range m.Fetch.Partitions {
				if lod == nil || lod.Partition(fp.TP) {
					pk.Topics = append(pk.Topics, fp.TP)
				}
			}
			bv.ParkedFetches = append(bv.ParkedFetches, pk)
		case itDelayedProduceDone:
			p := it.delayedProduceDone()
			if p.produce.done || e.brokers[p.broker].incarnation != p.incarnation {
				continue
			}
			m := p.produce.req
			bv := &v.Brokers[it.broker]
			bv.ParkedProduceCount++
			if lod != nil && !lod.Message(m) {
				continue
			}
			bv.ParkedProduces = append(bv.ParkedProduces, Parked{Message: m.ID, From: m.From, Deadline: it.at,
				Topics: []TP{m.Produce.TP}, Count: 1, RequiredOffset: p.produce.required})
		}
	}
	slices.SortFunc(v.Messages, func(a, b *Message) int { return int(a.ID) - int(b.ID) })
	if len(v.Messages) > maxMessages {
		v.MessagesOmitted += len(v.Messages) - maxMessages
		v.Messages = v.Messages[:maxMessages]
	}
	if lod != nil {
		for i, m := range v.Messages {
			v.Messages[i] = m.Focused(lod.Partition, trimPartitions)
		}
	}
	for i := range v.Brokers {
		slices.SortFunc(v.Brokers[i].ParkedFetches, func(a, b Parked) int { return int(a.Message) - int(b.Message) })
		slices.SortFunc(v.Brokers[i].ParkedProduces, func(a, b Parked) int { return int(a.Message) - int(b.Message) })
	}
}

// eraChangedDefaults lists the settings that are at their era's default where that default is not
// 3.7's, each with 3.7's default.
func eraChangedDefaults(c Config) map[string]any {
	now, era, latest := c.Values(), EraDefaults(c.InterBrokerProtocolVersion).Values(), DefaultConfig().Values()
	var out map[string]any
	for _, name := range sortedKeys(era) {
		if name != ibpName && era[name] != latest[name] && now[name] == era[name] {
			if out == nil {
				out = map[string]any{}
			}
			out[name] = latest[name]
		}
	}
	return out
}
