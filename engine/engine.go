// Package engine is Kafka's partition replication as a deterministic, single-threaded simulation:
// ZooKeeper-mode controller, brokers' replica managers and fetcher threads, leaders' ISR and high
// watermark rules, purgatory, clients and a simulated network. It does no I/O, starts no
// goroutines and reads no clock: time is simulated milliseconds, handed in by the driver, and the
// only randomness is one PRNG seeded from the scenario.
//
// Every driver (the CLI, the page's WebAssembly worker, the websocket server) uses the same API:
// New builds a cluster from a scenario, Apply runs an action at the current time, RunUntil and
// Step move time, the read API (read.go) reads the state and Drain takes the new trace events. The
// page's view of it is engine/view's.
package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"

	brk "github.com/highwater-sim/highwater/engine/broker" // the package; broker here is the process
	"github.com/highwater-sim/highwater/engine/check"
	"github.com/highwater-sim/highwater/engine/clients"
	"github.com/highwater-sim/highwater/engine/controller"
	"github.com/highwater-sim/highwater/engine/netsim"
)

// Engine is one simulated cluster. It is not safe for concurrent use (like raft's RawNode).
type Engine struct {
	cfg  Config
	era  era
	seed uint64
	// rng is the only source of randomness (network jitter).
	rng *rand.Rand
	now int64
	// stepAt is the time of the last scenario step RunToStep brought the engine to (-1: none).
	stepAt int64

	agenda  agenda
	nextMsg uint64
	// pending holds requests awaiting an answer, by message id.
	pending inFlight

	// names is the topics: each one's partitions and their pids, the table the brokers read too
	// (brk.TopicNames: PidOf, TP, Partitions).
	names      brk.TopicNames
	partitions []*partition
	// hosts is every partition's replica list, packed in pid order; pid's begins at
	// hostStart[pid], or at pid·hostsRF when every partition has hostsRF replicas (else 0).
	// hostsOf reads it: a partition object of a large cluster is a cache miss behind another
	// (its pointer), and the replication factor alone reads no memory (issue 12).
	hosts     []int32
	hostStart []int32
	hostsRF   int32
	// index finds each host's replica among its broker's (the brokers' one brk.HostIndex): the
	// checker reads a partition's replicas through it (checker.go).
	index   *brk.HostIndex
	brokers []*broker
	// ctrl is the controller and the ZooKeeper it keeps its state in (controller.go).
	ctrl    *controller.Controller
	net     netsim.Network
	clients clients.Clients
	// conns are the producer's connections, by broker (producer_conn.go), made at the first
	// produce request counted.
	conns []producerConn

	trace bool
	// keep, when set, chooses the events the trace records (event_filter.go).
	keep       EventFilter
	events     []Event
	eventCount uint64
	processed  uint64
	// The observers (observe.go): the invariant checker (checks hands it the facts) and the
	// overview's run-wide counters.
	checker *check.Checker
	checks  checkObserver
	tally   tallies
	// out holds the running agenda item's sends, timers and events (outbox.go).
	out outbox
	// The shortcuts broker code takes to the cluster's state (shortcuts.go).
	metadata metadataAtOnce
	zk       zookeeperAtOnce
	// spareFetch is Fetch storage built into but not sent (broker_cluster.go: NewFetch, KeepFetch).
	spareFetch *brk.FetchMessage
	// delayedProduces hands out the parked produces (broker_cluster.go: NewDelayedProduce; the produce path is package broker's).
	delayedProduces brk.DelayedProduces
	// rules are the brokers' rules (brk.Rules), built from the era and the config and rebuilt
	// when the config changes (setRules lists every write of their inputs), read in place by every
	// broker (brk.Cluster.RuleBook). The tests' switches are fields of them, set in place: the session
	// and change-list checks and reference paths (LeaderFetch.Check, LeaderFetch.ReadAll,
	// Fetcher.Check, Fetcher.WalkAll: package broker's fetch_session_check.go, fetcher_check.go,
	// the engine's fetcher_changes.go), the checkpoint check (Replica.CheckpointCheck), and the
	// safety rules turned off to show what they prevent (HW.CommittedISROnly,
	// Isr.NoEpochStartRule). Never set in a run.
	rules brk.Rules
	// generalStart (tests only) starts the cluster through the general path, the reference the
	// bulk path of time 0 must match (start.go).
	generalStart bool
	// bulkStarts counts the brokers whose first LeaderAndIsr took the bulk path (tests read it);
	// startPlan is the plan of the one being applied (start.go).
	bulkStarts int
	startPlan  startPlan
}

// New builds the cluster a scenario describes, at time 0: every partition led by its first
// replica at leader epoch 0 with every replica in the ISR, broker 0 the controller. The
// scenario's steps are not applied; the driver applies them (see Run).
func New(sc *Scenario) (*Engine, error) { return newEngine(sc, true, nil) }

// newEngine is New, recording trace events from time 0 (those keep accepts, when set) or not at
// all.
func newEngine(sc *Scenario, trace bool, keep EventFilter) (*Engine, error) {
	return buildEngine(sc, trace, false, keep)
}

// buildEngine is newEngine, starting the cluster through the general path if general (tests
// only: start.go).
func buildEngine(sc *Scenario, trace, general bool, keep EventFilter) (*Engine, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	cfg, err := NewConfig(sc.Config)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:    cfg,
		era:    eraFor(cfg.InterBrokerProtocolVersion),
		seed:   sc.Seed,
		rng:    rand.New(rand.NewPCG(sc.Seed, 0x68696768_77617465)),
		trace:  trace,
		keep:   keep,
		stepAt: -1,

		generalStart: general,
	}
	e.setRules()
	e.checker = newChecker(e)
	e.metadata, e.zk = zookeeper{e}, zookeeper{e}
	e.checks = checkObserver{k: e.checker, e: e}
	e.net.Init()
	e.buildTopics(sc)
	e.start()
	return e, nil
}

// buildTopics builds the partitions and every broker's replicas. A million-partition cluster has
// three million replicas, so the state is cut from a few slabs sized from the known counts (the
// replica lists, the partitions, each broker's replicas) rather than
// allocated piece by piece: setup is a large part of a short run.
func (e *Engine) buildTopics(sc *Scenario) {
	for i := range sc.Brokers {
		e.brokers = append(e.brokers, &broker{id: int32(i)})
	}
	total := 0
	for _, t := range sc.Topics {
		if t.Assignment == nil {
			total += t.Partitions * t.ReplicationFactor
			continue
		}
		for _, reps := range t.Assignment {
			total += len(reps)
		}
	}
	// hosts holds every partition's replica list, in pid order: each partition's hosts and each
	// topic's assignment are windows of it (capped, so an append copies). The controller copies
	// what it keeps.
	start := make([]int32, 1, sc.PartitionCount()+1)
	hosts := make([]int32, 0, total)
	assigns := make([][][]int32, len(sc.Topics))
	names := make([]string, len(sc.Topics))
	hosted := make([]int32, sc.Brokers)
	for ti, t := range sc.Topics {
		n := t.Partitions
		if t.Assignment != nil {
			n = len(t.Assignment)
		}
		assign := make([][]int32, n)
		for p := range n {
			at := len(hosts)
			if t.Assignment == nil {
				// Replica i is on broker (p+i) mod the broker count, counted on from p's.
				b := p % sc.Brokers
				for range t.ReplicationFactor {
					hosts = append(hosts, int32(b))
					hosted[b]++
					if b++; b == sc.Brokers {
						b = 0
					}
				}
			} else {
				hosts = append(hosts, t.Assignment[p]...)
				for _, b := range t.Assignment[p] {
					hosted[b]++
				}
			}
			assign[p] = hosts[at:len(hosts):len(hosts)]
			start = append(start, int32(len(hosts)))
		}
		assigns[ti], names[ti] = assign, t.Name
	}
	e.hosts, e.hostStart, e.hostsRF = hosts, start, brk.UniformRF(start)
	x := brk.NewHostIndex(start)
	e.index = x
	// Each broker's replicas lie side by side in pid order (memory layout only): a fetcher walks
	// its partitions in pid order on both brokers.
	for i, n := range hosted {
		b := e.brokers[i]
		b.Broker = brk.NewBroker(b.id, &cluster{e: e, b: b}, x, &e.names, int(n)) // e.names is filled below
		b.rm, b.fetchers = b.ReplicaManager(), b.Fetchers()
	}
	parts := make([]partition, len(start)-1)
	e.partitions = make([]*partition, len(parts))
	first := int32(0)
	for ti, t := range sc.Topics {
		assign := assigns[ti]
		e.names.Add(t.Name, int32(len(assign)))
		for idx, reps := range assign {
			pid := first + int32(idx)
			p := &parts[pid]
			*p = partition{pid: pid, topic: t.Name, index: int32(idx), hosts: reps}
			for i, b := range reps {
				x.Place(pid, i, b, e.brokers[b].AddReplica(pid))
			}
			e.partitions[pid] = p
		}
		first += int32(len(assign))
	}
	e.ctrl = newController(e, names, assigns)
	e.clients.Init(len(e.partitions))
}

// start brings the cluster up at time 0: brokers register, broker 0 becomes controller, and
// every broker applies the initial LeaderAndIsr at once (no network round trip at time 0).
func (e *Engine) start() {
	if e.trace && e.keep == nil {
		// The start records an event per replica (its role) and a few per broker (registration,
		// fetcher threads, first Fetches) in one batch: room made at once, not grown by doubling
		// from nothing (at 100,000 partitions 86 MB, allocated, copied and faulted in about
		// twice over).
		n := 8 * len(e.brokers)
		for _, p := range e.partitions {
			n += len(p.hosts)
		}
		e.events = slices.Grow(e.events, n)
	}
	for _, b := range e.brokers {
		e.startBroker(b, false)
	}
	// The first controller's UpdateMetadata, applied at once as its LeaderAndIsrs are: every
	// broker's metadata cache has every broker alive (brk.MetadataCache).
	ids := make([]int32, len(e.brokers))
	for i := range ids {
		ids[i] = int32(i)
	}
	for _, b := range e.brokers {
		b.rm.Metadata().SetAliveBrokers(ids)
	}
	// Broker 0 becoming controller at time 0 is a controller failover like any other: its first
	// leader-imbalance check comes 5 s later.
	e.startController()
	e.startPlan = startPlan{} // the bulk path's scratch (start.go), done with
}

// Config returns the settings in force.
func (e *Engine) Config() Config { return e.cfg }

// Now returns the simulated time in ms.
func (e *Engine) Now() int64 { return e.now }

// Seed returns the seed of the run.
func (e *Engine) Seed() uint64 { return e.seed }

// SetTrace turns the recording of trace events on or off (benchmarks run without it). Invariants
// are checked either way.
func (e *Engine) SetTrace(on bool) { e.trace = on }

// Drain returns the events recorded since the last call.
func (e *Engine) Drain() []Event {
	return Narrate(e.DrainUnnarrated())
}

// DrainUnnarrated is Drain without the text of the events Narrate fills in: a driver that shows only some of
// the events (a session's focus, its latest few thousand) gives those to Narrate, and the rest
// cost no formatting. A message's text is a function of the message, which never changes once
// sent, so it reads the same whenever it is made.
func (e *Engine) DrainUnnarrated() []Event {
	ev := e.events
	e.events = nil
	return ev
}

// Narrate fills in the text of the events among evs whose text is made when read (messages, and
// the events a run emits by the thousand: high watermarks, appends, role changes) and returns evs.
func Narrate(evs []Event) []Event {
	for i := range evs {
		ev := &evs[i]
		switch {
		case ev.Text != "":
		case ev.Message != nil:
			ev.Text = DescribeMessage(ev.Message)
		case ev.render != nil:
			ev.Text = ev.render(ev)
		}
	}
	return evs
}

// Stats counts the work done so far.
type Stats struct {
	Now       int64  `json:"now"`
	Processed uint64 `json:"processed"` // agenda items handled
	Events    uint64 `json:"events"`    // trace events emitted (or that would have been)
	InFlight  int    `json:"inFlight"`  // agenda items waiting
}

// Stats returns counters of the work done.
func (e *Engine) Stats() Stats {
	return Stats{Now: e.now, Processed: e.processed, Events: e.eventCount, InFlight: e.agenda.len()}
}

// NextAt returns the time of the next internal happening, or -1 when nothing is scheduled.
func (e *Engine) NextAt() int64 {
	if e.agenda.len() == 0 {
		return -1
	}
	return e.agenda.peekAt()
}

// RunUntil processes everything due at or before t, then sets the clock to t. Times before now
// are an error.
func (e *Engine) RunUntil(t int64) error {
	if t < e.now {
		return fmt.Errorf("time %d is before the current time %d", t, e.now)
	}
	for e.agenda.len() > 0 && e.agenda.peekAt() <= t {
		e.processNext()
	}
	e.now = t
	return nil
}

// RunToStep brings the clock to a scenario step at time at, as the contract times steps: the
// events due at or before at are processed once, before the first step at at, and every further
// step at the same ms is applied with nothing processed between them (a message or timer that an
// earlier step at at made due at at waits until the steps at at are done). engine.Run and the
// page's replay (package session) both call it.
func (e *Engine) RunToStep(at int64) error {
	if at == e.stepAt && at == e.now {
		return nil
	}
	if err := e.RunUntil(at); err != nil {
		return err
	}
	e.stepAt = at
	return nil
}

// Step processes agenda items until at least one trace event is emitted or nothing is left, and
// reports whether anything happened. It is the page's "next event" button.
func (e *Engine) Step() bool {
	before := e.eventCount
	for e.agenda.len() > 0 {
		e.processNext()
		if e.eventCount != before {
			return true
		}
	}
	return false
}

func (e *Engine) processNext() {
	var it item
	e.agenda.pop(&it)
	e.now = it.at
	e.processed++
	e.out.active = true
	e.handle(&it)
	e.drainOutbox()
}

// emit records a trace event (when tracing) and counts it either way.
func (e *Engine) emit(ev Event) {
	e.eventCount++
	e.hearCause(&ev) // checker.go: with or without the trace
	if !e.trace {
		return
	}
	ev.T = e.now
	// The event is appended first and the filter shown it in place: handing keep &ev would move
	// every event to the heap (a 288-byte allocation per event of a recorded run).
	dst := &e.events
	if e.out.active {
		dst = &e.out.events
	}
	*dst = append(*dst, ev)
	if n := len(*dst) - 1; e.keep != nil && !e.keep(e, &(*dst)[n]) {
		(*dst)[n] = Event{} // nothing kept alive by a dropped event
		*dst = (*dst)[:n]
		return
	}
	if e.out.active {
		e.out.effs = append(e.out.effs, effect{kind: effEvent, ev: int32(len(e.out.events) - 1)})
	}
}

// tracing reports whether events are recorded; when not, it counts the event the caller skips
// building (its text costs more than the simulation step it describes).
func (e *Engine) tracing() bool {
	if !e.trace {
		e.eventCount++
	}
	return e.trace
}

// retryBackoff is retry.backoff.ms, at least 1 ms: simulated time must move between retries,
// or a zero setting would loop forever at one instant.
func (e *Engine) retryBackoff() int64 { return max(1, e.cfg.RetryBackoffMs) }

// timer is the owner of a timer set now by broker b: b and its current incarnation.
func (e *Engine) timer(b *broker) brokerTimer { return brokerTimer{b.id, b.incarnation} }

// handle runs one agenda item.
func (e *Engine) handle(it *item) {
	switch it.kind {
	case itDeliver:
		p := it.deliverMsg()
		e.deliver(p.msg, p.incarnation)
		return
	case itRequestFailed:
		p := it.requestFailed()
		e.requestFailed(p.req, p.timedOut)
		return
	case itProducerRetry:
		e.producerRetry(it.producerRetry().op)
		return
	case itProduceTimeout:
		e.produceTimedOut(it.produceTimeout().id)
		return
	case itAutoRebalance:
		e.autoRebalance(it.autoRebalance().controllerEpoch)
		return
	case itSessionExpire:
		p := it.sessionExpire()
		e.sessionExpire(p.broker, p.gen)
		return
	case itControllerRetry:
		p := it.controllerRetry()
		e.controllerRetry(p.broker, p.controllerEpoch)
		return
	case itReassignWatch:
		e.reassignWatch(it.reassignWatch().pid)
		return
	case itIsrChangeWatch:
		e.isrChangeWatch()
		return
	}
	t := it.timer()
	b := e.brokers[t.broker]
	if b.Dead() || b.incarnation != t.incarnation {
		return // a timer of a former incarnation
	}
	switch it.kind {
	// The broker's timers go to its brk.Broker (kafka_apis.go; the controlled shutdown's retry:
	// kafka_server.go).
	case itFetcherWake:
		key := it.fetcherWake().fetcher
		b.FetcherWake(int32(key>>32), int32(uint32(key)))
	case itDelayedFetchDone:
		p := it.delayedFetchDone()
		b.DelayedFetchExpired(p.fetch, p.seq)
	case itDelayedProduceDone:
		b.DelayedProduceExpired(it.delayedProduceDone().produce)
	case itIsrShrinkTask:
		b.IsrExpiration()
	case itIsrChangePropagation:
		b.IsrChangePropagation()
	case itCheckpointTask:
		b.HighWatermarkCheckpoint()
	case itRecoveryPointTask:
		b.RecoveryPointCheckpoint()
	case itResend:
		b.AlterPartitionResend(it.alterPartitionResend().pid)
	case itShutdownRetry:
		b.ControlledShutdownRetry()
	}
}

// partitionOf returns the partition with this topic and index, or nil.
func (e *Engine) partitionOf(topic string, index int32) *partition {
	if pid := e.pidOf(TP{Topic: topic, Partition: index}); pid >= 0 {
		return e.partitions[pid]
	}
	return nil
}

// hostsOf is partition pid's replica list (its partition's hosts), capped as they are.
func (e *Engine) hostsOf(pid int32) []int32 {
	if rf := e.hostsRF; rf > 0 {
		lo := pid * rf
		return e.hosts[lo : lo+rf : lo+rf]
	}
	lo, hi := e.hostStart[pid], e.hostStart[pid+1]
	return e.hosts[lo:hi:hi]
}

// tpOf is partition pid's names, from the topic table (brk.TopicNames, the brokers' too): the
// partition object of a large cluster is a cache miss where the topics are not (issue 12).
func (e *Engine) tpOf(pid int32) TP { return e.names.TP(pid) }

// pidOf is the dense index of the partition tp names, or -1 if there is none (brk.TopicNames,
// the brokers' table too).
func (e *Engine) pidOf(tp TP) int32 { return e.names.PidOf(tp) }

// replicaOn is broker b's replica of partition pid, or nil (no such broker, or b holds none),
// read through its broker (brk.Broker.Replica). The read API, the checker's adapter and
// CheckExpect read replicas so; a broker's handlers reach only their own broker's
// (TestBrokerReachesOnlyItself).
func (e *Engine) replicaOn(pid, b int32) *replica {
	if b < 0 || int(b) >= len(e.brokers) {
		return nil
	}
	return e.brokers[b].Replica(pid)
}

func (p *partition) tp() TP { return TP{Topic: p.topic, Partition: p.index} }

func (p *partition) name() string { return fmt.Sprintf("%s-%d", p.topic, p.index) }

// PartitionCount returns the number of partitions in the cluster.
func (e *Engine) PartitionCount() int { return len(e.partitions) }
