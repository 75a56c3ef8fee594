package view

import "github.com/highwater-sim/highwater/engine"

// An overview counts every partition: its state letter, its leader, its acked records and its
// high watermark lag. Walking a million partitions for that costs 60–120 ms, every frame. An
// Overview keeps those facts between views and, told the events since the last one (Observe),
// re-reads only the partitions the events name. Every change to a fact comes with an event naming
// its partition (append, high-watermark, truncate, leader-change, isr-change, produce-result,
// become-leader-or-follower), or with a broker-wide event, after which it reads them all.
// TestOverviewCacheMatchesBuild checks it against a full walk after every step of the presets and
// of random fault schedules.

// facts is what an overview counts of one partition.
type facts struct {
	letter byte // the state's letter in View.States
	leader int32
	acked  int64
	lag    int64 // hwLag
}

func factsOf(p engine.PartitionInfo) facts {
	return facts{letter: stateLetter(partitionState(p)), leader: p.Leader(), acked: p.Acked(), lag: hwLag(p)}
}

// stateLetter is a state's letter in View.States: its first, but 'm' for under-min-isr.
func stateLetter(st string) byte {
	if st == "under-min-isr" {
		return 'm'
	}
	return st[0]
}

// tally sums facts: the summary's counts (all but MaxHWLag, which a sum cannot take back) and the
// leaderships and unhealthy leaderships of each broker. sign is +1 to add a partition, -1 to take
// it back.
type tally struct {
	sum             Summary
	leaders, unwell []int
}

func newTally(brokers int) tally {
	return tally{leaders: make([]int, brokers), unwell: make([]int, brokers)}
}

func (t *tally) add(f facts, sign int) {
	s := &t.sum
	s.Partitions += sign
	s.Acked += int64(sign) * f.acked
	switch f.letter {
	case 'u':
		s.UnderReplicated += sign
	case 'm':
		s.UnderReplicated += sign
		s.UnderMinIsr += sign
	case 'o':
		s.Offline += sign
	}
	if f.leader >= 0 {
		t.leaders[f.leader] += sign
		if f.letter != 'h' {
			t.unwell[f.leader] += sign
		}
	}
	if f.lag > 0 {
		s.HWLag += int64(sign) * f.lag
		s.Lagging += sign
	}
}

// Overview is an overview kept between views of one engine. The zero value is ready; it reads
// every partition on its first use, on an engine it has not seen, and whenever the engine emitted
// events it was not shown (its count differs from the engine's).
type Overview struct {
	eng    *engine.Engine
	seen   uint64 // the engine's event count as of the last refresh, plus the events observed since
	all    bool   // read every partition at the next refresh
	dirty  []int32
	marked []bool
	facts  []facts
	tally  tally
	maxLag int64
	stale  bool // maxLag may be too high: the partition that had it changed
	// states and digits are View.States and View.Leaders as bytes.
	states, digits []byte
	// Walks counts the refreshes that read every partition (for tests).
	Walks int
}

// Observe tells the overview the events e emitted since the last call (all of them, before any
// filtering for the page).
func (o *Overview) Observe(e *engine.Engine, evs []engine.Event) {
	for i := range evs {
		o.ObserveEvent(e, &evs[i])
	}
}

// ObserveEvent tells the overview one event e emitted (a session's engine.EventFilter tells it
// each one as it is emitted, recorded or not).
func (o *Overview) ObserveEvent(e *engine.Engine, ev *engine.Event) {
	if o.eng != e || o.all {
		o.all = true
		return
	}
	o.seen++
	switch {
	case ev.Message != nil:
		// A message in flight changes no partition's facts until it is handled.
	case ev.Partition.Set:
		pid, ok := e.PartitionID(engine.TP{Topic: ev.Topic, Partition: ev.Partition.V})
		if ok && !o.marked[pid] {
			o.marked[pid] = true
			o.dirty = append(o.dirty, pid)
		}
	case !brokerWideHarmless[ev.Type]:
		// A broker down or up, a disk failed, a config change, a ZooKeeper session: any of its
		// partitions may have changed. These are rare; read them all.
		o.all = true
	}
}

// brokerWideHarmless lists the events without a partition that change no partition's facts.
var brokerWideHarmless = map[string]bool{
	engine.EvCaption: true, engine.EvFetcher: true, engine.EvCheckpoint: true, engine.EvIsolate: true,
	engine.EvHeal: true, engine.EvLink: true, engine.EvDropped: true, engine.EvHeld: true, engine.EvReleased: true,
}

// refresh brings the facts up to date with e.
func (o *Overview) refresh(e *engine.Engine) {
	n, count := e.PartitionCount(), e.Stats().Events
	if o.eng != e || o.all || o.seen != count || len(o.facts) != n || len(o.tally.leaders) != e.BrokerCount() {
		o.walk(e, true)
		o.eng, o.all, o.seen = e, false, count
		return
	}
	for _, pid := range o.dirty {
		o.marked[pid] = false
		f := factsOf(e.Partition(pid))
		old := o.facts[pid]
		if f == old {
			continue
		}
		o.tally.add(old, -1)
		o.tally.add(f, 1)
		o.facts[pid] = f
		o.states[pid] = f.letter
		putLeaderDigits(o.digits[2*pid:], f.leader)
		if old.lag == o.maxLag && f.lag < old.lag {
			o.stale = true
		}
		o.maxLag = max(o.maxLag, f.lag)
	}
	o.dirty = o.dirty[:0]
	if o.stale {
		o.maxLag = 0
		for i := range o.facts {
			o.maxLag = max(o.maxLag, o.facts[i].lag)
		}
		o.stale = false
	}
}

// walk reads every partition; keep keeps each one's facts for the next refresh (a view built once
// does not need them).
func (o *Overview) walk(e *engine.Engine, keep bool) {
	n := e.PartitionCount()
	o.Walks++
	o.facts = o.facts[:0]
	o.states, o.digits = o.states[:0], o.digits[:0]
	o.dirty = o.dirty[:0]
	if keep {
		o.marked = make([]bool, n)
	}
	o.tally, o.maxLag, o.stale = newTally(e.BrokerCount()), 0, false
	for pid := range int32(n) {
		f := factsOf(e.Partition(pid))
		if keep {
			o.facts = append(o.facts, f)
		}
		o.tally.add(f, 1)
		o.maxLag = max(o.maxLag, f.lag)
		o.states = append(o.states, f.letter)
		o.digits = append(o.digits, 0, 0)
		putLeaderDigits(o.digits[2*pid:], f.leader)
	}
}
