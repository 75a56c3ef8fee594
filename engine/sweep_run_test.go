package engine

import "slices"

// The sweep's run of one seed (sweep_test.go has the modes, the fault kinds and the totals).

// run is the whole seed: fault phase, heal, liveness phase, final checks.
func (s *sweepRun) run() {
	defer func() {
		if s.t.Failed() {
			s.failed = true
		}
	}()
	s.t.Logf("seed %d: %d brokers, topics %s, config %s, engine seed %d", s.seed, s.sc.Brokers,
		jsonString(s.sc.Topics), jsonString(s.sc.Config), s.sc.Seed)
	if !s.faultPhase() {
		return
	}
	healAt := s.e.Now()
	s.healAll()
	if !s.awaitConvergence(healAt, "after the heal", true) {
		return
	}
	s.convergedMs = s.e.Now() - healAt
	// A request lost to a cut link before the heal fails only at its timeout (a silent network
	// partition), and its fetcher waits for that (an AlterPartition, controller.socket.timeout.ms);
	// the final produce starts once those are over.
	cfg := s.e.Config()
	quiet := healAt + max(cfg.ReplicaSocketTimeoutMs, cfg.RequestTimeoutMs, cfg.ControllerSocketTimeoutMs)
	if s.e.Now() < quiet && !s.runTo(quiet) {
		return
	}
	if !s.awaitConvergence(s.e.Now(), "after the request timeouts", true) {
		return
	}
	if !s.finalProduce() {
		return
	}
	if !s.awaitConvergence(s.e.Now(), "after the final produce", false) {
		return
	}
	s.checkLogs()
	s.count()
}

// faultPhase interleaves load and faults for sweepFaultPhaseMs. It reports false on a violation.
func (s *sweepRun) faultPhase() bool {
	now := int64(0)
	for now < sweepFaultPhaseMs {
		now += 1 + s.rng.Int64N(1500)
		now = min(now, sweepFaultPhaseMs)
		for len(s.recoveries) > 0 && s.recoveries[0].at <= now {
			rc := s.recoveries[0]
			s.recoveries = s.recoveries[1:]
			if !s.runTo(rc.at) {
				return false
			}
			s.recover(rc)
		}
		if !s.runTo(now) {
			return false
		}
		s.act()
		if s.violated() {
			return false
		}
	}
	return true
}

// act draws one action: load, a fault, an election, or nothing.
func (s *sweepRun) act() {
	switch w := s.rng.IntN(100); {
	case w < 42:
		pt := s.parts[s.rng.IntN(len(s.parts))]
		count := 1 + s.rng.Int64N(5)
		a := Action{Do: "produce", Topic: pt.topic, Partition: ptr(pt.index), Count: &count}
		if s.mode.harsh && s.rng.IntN(5) == 0 {
			a.Acks = ptr(Acks(1))
		}
		s.apply(a)
		s.produced++
	case w < 56:
		pt := s.parts[s.rng.IntN(len(s.parts))]
		a := Action{Do: "consume", Topic: pt.topic, Partition: ptr(pt.index)}
		if s.rng.IntN(2) == 0 {
			a.Count = ptr(1 + s.rng.Int64N(20))
		}
		s.apply(a)
		s.consumes++
	case w < 84:
		s.tryFault()
	case w < 90:
		s.slowLink()
	case w < 95:
		pt := s.parts[s.rng.IntN(len(s.parts))]
		if s.mode.oneLeaderChange && !s.healthy(s.e.partitionOf(pt.topic, pt.index)) {
			return
		}
		s.apply(Action{Do: "elect", Topic: pt.topic, Partition: ptr(pt.index)})
	case w < 98:
		// An operator's choice of leader: a clean election (the engine refuses a replica outside
		// the ISR), which also reorders the assignment.
		pt := s.parts[s.rng.IntN(len(s.parts))]
		p := s.e.partitionOf(pt.topic, pt.index)
		target := p.hosts[s.rng.IntN(len(p.hosts))]
		if s.mode.oneLeaderChange && !s.healthy(p) {
			return
		}
		s.apply(Action{Do: "elect", Topic: pt.topic, Partition: ptr(pt.index), Broker: &target})
	}
}

// tryFault draws a fault kind and a broker, and injects the fault if the model allows it now.
func (s *sweepRun) tryFault() {
	total := 0
	for _, k := range s.mode.faultKinds {
		total += k.weight
	}
	w := s.rng.IntN(total)
	var kind sweepFaultKind
	for _, k := range s.mode.faultKinds {
		if w < k.weight {
			kind = k
			break
		}
		w -= k.weight
	}
	b := int32(s.rng.IntN(s.sc.Brokers))
	if s.mode.harsh && s.rng.IntN(2) == 0 {
		// Aimed at a partition's current leader.
		pt := s.parts[s.rng.IntN(len(s.parts))]
		if l := s.e.ctrl.Leader(s.e.partitionOf(pt.topic, pt.index).pid); l >= 0 {
			b = l
		}
	}
	delay := kind.recoverMinMs + s.rng.Int64N(kind.recoverMaxMs-kind.recoverMinMs+1)
	switch kind.name {
	case "kip101", "kip101-3":
		s.kip101(delay, kind.name == "kip101-3")
		return
	case "power-loss-2":
		s.powerLoss2(delay)
		return
	}
	if kind.name == "bounce" {
		// A bounce restarts before the session expires, so the controller sees a new broker epoch.
		delay = min(delay, s.e.Config().ZookeeperSessionTimeoutMs-1)
	}
	if !s.mayFault(b) {
		return
	}
	switch kind.name {
	case "kill", "bounce":
		s.apply(Action{Do: "kill", Broker: &b})
	case "power-loss":
		s.apply(Action{Do: "kill", Broker: &b, LoseUnflushed: true})
	case "isolate":
		s.apply(Action{Do: "isolate", Broker: &b})
	case "shutdown":
		s.apply(Action{Do: "shutdown", Broker: &b})
	}
	s.faults[kind.name]++
	s.schedule(sweepRecovery{at: s.e.Now() + delay, broker: b, heal: kind.name == "isolate"})
}

// kip101 is the KIP-101 trigger (see sweepKip101): produce, elect another ISR member within a
// fetch round, kill the new leader. The partition must be healthy and every broker involved
// settled.
func (s *sweepRun) kip101(delay int64, third bool) {
	pt := s.parts[s.rng.IntN(len(s.parts))]
	p := s.e.partitionOf(pt.topic, pt.index)
	kind := "kip101"
	if third {
		kind = "kip101-3"
	}
	flip := s.rng.IntN(2)
	d1, d2 := s.rng.Int64N(4), s.rng.Int64N(11)
	var d3 int64
	if third {
		d3 = s.rng.Int64N(51)
	}
	assignment, leader := s.e.ctrl.Assignment(p.pid), s.e.ctrl.Leader(p.pid)
	if leader < 0 || !s.healthy(p) {
		return
	}
	// The target is a follower whose fellow follower comes before the leader in the assignment:
	// after the target's death the clean election then picks that fellow, which truncated (before
	// KIP-101) to its lagging HW. If neither does, the old leader is elected and nothing is lost.
	var followers []int32
	for _, x := range assignment {
		if x != leader {
			followers = append(followers, x)
		}
	}
	target := followers[flip]
	before := func(a, b int32) bool { return slices.Index(assignment, a) < slices.Index(assignment, b) }
	if other := followers[1-flip]; !before(other, leader) {
		target = followers[0]
	}
	if !s.mayFault(target) {
		return
	}
	count := 1 + s.rng.Int64N(3)
	op := s.e.clients.ProduceCount()
	s.apply(Action{Do: "produce", Topic: pt.topic, Partition: ptr(pt.index), Count: &count})
	s.produced++
	// Until the produce is acknowledged (at most 200 ms), then 0–3 ms more.
	for end := s.e.Now() + 200; !s.e.Produces()[op].Done; {
		if s.e.Now() >= end || !s.runTo(s.e.Now()+1) {
			return
		}
	}
	if s.e.Produces()[op].Result != "acked" || !s.runTo(s.e.Now()+d1) {
		return
	}
	if !s.healthy(p) || !s.mayFault(target) {
		return
	}
	s.apply(Action{Do: "elect", Topic: pt.topic, Partition: ptr(pt.index), Broker: &target})
	if !s.runTo(s.e.Now()+d2) || !s.up(target) {
		return
	}
	s.apply(Action{Do: "kill", Broker: &target})
	s.faults[kind]++
	s.schedule(sweepRecovery{at: s.e.Now() + delay, broker: target})
	if !third || !s.runTo(s.e.Now()+d3) {
		return
	}
	// kip101-3: the operator elects the fellow follower (clean: it is in the ISR, the dead
	// target not yet noticed) while it has truncated to its lagging HW, before KIP-101.
	fellow := followers[0]
	if fellow == target {
		fellow = followers[1]
	}
	if s.up(fellow) {
		s.apply(Action{Do: "elect", Topic: pt.topic, Partition: ptr(pt.index), Broker: &fellow})
	}
}

// powerLoss2 makes two replicas of one partition lose power together and restart apart, in
// either order (KIP-101 scenario 2). Beyond Kafka's guarantees: 0.10.2's measurement only.
func (s *sweepRun) powerLoss2(delay int64) {
	pt := s.parts[s.rng.IntN(len(s.parts))]
	p := s.e.partitionOf(pt.topic, pt.index)
	perm := s.rng.Perm(len(p.hosts))
	a, b := p.hosts[perm[0]], p.hosts[perm[1]]
	apart := s.rng.Int64N(5_001)
	if !s.mayFault(a) || !s.mayFault(b) {
		return
	}
	s.apply(Action{Do: "kill", Broker: &a, LoseUnflushed: true})
	s.apply(Action{Do: "kill", Broker: &b, LoseUnflushed: true})
	s.faults["power-loss-2"]++
	s.schedule(sweepRecovery{at: s.e.Now() + delay, broker: a})
	s.schedule(sweepRecovery{at: s.e.Now() + delay + apart, broker: b})
}

// slowLink raises the latency of one direction of one link to 20–1500 ms for 1–30 s. Messages
// stay in order and arrive well within every timeout, so this is not a replica fault: it only
// moves the timing of fetches, ISR changes and LeaderAndIsr.
func (s *sweepRun) slowLink() {
	from := int32(s.rng.IntN(s.sc.Brokers))
	to := (from + 1 + int32(s.rng.IntN(s.sc.Brokers-1))) % int32(s.sc.Brokers)
	latency := 20 + s.rng.Int64N(1481)
	delay := 1_000 + s.rng.Int64N(29_001)
	s.apply(Action{Do: "link", From: &from, To: &to, LatencyMs: &latency})
	s.faults["slow-link"]++
	s.schedule(sweepRecovery{at: s.e.Now() + delay, broker: from, link: true, to: to})
}

func (s *sweepRun) schedule(rc sweepRecovery) {
	i := len(s.recoveries)
	for i > 0 && s.recoveries[i-1].at > rc.at {
		i--
	}
	s.recoveries = slices.Insert(s.recoveries, i, rc)
}

// recover restarts or heals a broker. A controlled shutdown still waiting for the controller's
// answer is given another second.
func (s *sweepRun) recover(rc sweepRecovery) {
	b := rc.broker
	switch {
	case rc.link:
		latency := s.e.Config().NetworkLatencyMs
		s.apply(Action{Do: "link", From: &b, To: &rc.to, LatencyMs: &latency})
	case rc.heal:
		s.apply(Action{Do: "heal", Broker: &b})
	case s.e.brokers[b].Dead():
		s.apply(Action{Do: "restart", Broker: &b})
	default:
		rc.at = s.e.Now() + 1000
		s.schedule(rc)
	}
}

// mayFault is the fault model's rule (see the file comment): every partition b hosts must be
// healthy; every partition at all when b is the controller's broker, since a controller that
// cannot act leaves ZooKeeper's ISRs stale for every partition.
func (s *sweepRun) mayFault(b int32) bool {
	e := s.e
	if !s.settled(b) || (s.mode.spareController && b == e.ctrl.Broker()) {
		return false
	}
	for _, p := range e.partitions {
		if (b == e.ctrl.Broker() || slices.Contains(p.hosts, b)) && !s.healthy(p) {
			return false
		}
	}
	return true
}

// up reports whether broker b runs, is not isolated and holds its ZooKeeper registration: the
// new leader of a kip101 trigger is killed only then (it was settled before the election).
func (s *sweepRun) up(b int32) bool {
	br, ss := s.e.brokers[b], s.e.ctrl.Session(b)
	return br.Running() && !br.isolated && ss.Registered && ss.Connected
}

// healthy reports whether a partition has a leader and every replica is settled and in the
// controller's ISR.
func (s *sweepRun) healthy(p *partition) bool {
	e := s.e
	if e.ctrl.Leader(p.pid) < 0 {
		return false
	}
	for _, x := range p.hosts {
		if !s.settled(x) || !e.ctrl.InISR(p.pid, x) {
			return false
		}
		// Before 2.3 a new controller leaves dead followers in the ISR, and before 2.2 a broker
		// restarts only once its old session expired: a replica can be in the ISR with a log it
		// lost part of (power loss) and not yet fetched back. It counts as healthy only once it
		// follows the current epoch and its HW is confirmed in it: a fetch response applied, or
		// in 0.10.2 its truncation to its own HW on becoming follower, after which nothing
		// truncates it (FollowerRestarts).
		stale := !s.e.era.failoverOfflinesDeadReplicas
		if r := e.replicaOn(p.pid, x); (s.mode.oneLeaderChange || stale) && (!r.Known() || r.LeaderEpoch() != e.ctrl.LeaderEpoch(p.pid) || !r.HWConfirmed()) {
			return false
		}
	}
	return true
}

// settled reports whether broker x runs normally and a usable controller knows its current
// registration.
func (s *sweepRun) settled(x int32) bool {
	e := s.e
	for _, rc := range s.recoveries {
		if rc.broker == x && !rc.link {
			return false
		}
	}
	br, ss := e.brokers[x], e.ctrl.Session(x)
	return br.Running() && !br.isolated && ss.Registered && ss.Connected &&
		e.ctrl.Usable() && e.ctrl.LiveBrokerEpoch(x) == ss.Epoch
}

// healAll ends the fault phase: every link healed, every stopped broker restarted, in broker
// order. A controlled shutdown still in progress is waited for.
func (s *sweepRun) healAll() {
	s.recoveries = nil
	s.apply(Action{Do: "heal"})
	for i := range s.sc.Brokers {
		b := int32(i)
		for s.e.brokers[b].ShuttingDown() {
			if !s.runTo(s.e.Now() + 1000) {
				return
			}
		}
		if s.e.brokers[b].Dead() {
			s.apply(Action{Do: "restart", Broker: &b})
		}
	}
}
