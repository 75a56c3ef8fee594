package engine

import (
	"encoding/json"
	"fmt"
	"github.com/highwater-sim/highwater/engine/protocol"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The sweep's convergence and end-of-seed checks, its report and its scenario file.

// awaitConvergence runs until the cluster has converged, at most sweepLivenessMs after from. With
// staleHW a follower's HW may still wait for the HW's next move (sessionSentHW); the check after
// the final produce, which moves every HW, allows none.
func (s *sweepRun) awaitConvergence(from int64, when string, staleHW bool) bool {
	var why string
	for {
		if s.violated() {
			return false
		}
		if why = s.converged(staleHW); why == "" {
			return true
		}
		if s.e.Now() >= from+sweepLivenessMs {
			break
		}
		s.runTo(s.e.Now() + sweepProbeMs)
	}
	if stuck := s.staleEpochLoop(); stuck != "" {
		// Kafka's own liveness failure, not the engine's: counted, and the seed ends here.
		s.stuck = stuck
		s.t.Logf("seed %d: no convergence %s, as Kafka %s does not converge: %s", s.seed, when, s.mode.eraName(), stuck)
		return false
	}
	s.livenessFailed = true
	s.fail(fmt.Sprintf("no convergence within %d ms %s: %s", sweepLivenessMs, when, why))
	return false
}

// staleEpochLoop names a follower out of the ISR caught in KAFKA-10706's loop, or "". Before 2.7
// a truncation at or past the log's end leaves the leader-epoch cache as it is
// (Log.truncateTo returns early: era.endTruncationTrimsEpochCache false), so a follower whose
// latest cached epoch starts at or past its LEO (an epoch it began as a leader but never wrote)
// asks the leader about that epoch, is answered an end offset at or past its LEO, truncates
// nothing and asks again, for ever, without fetching: it never rejoins the ISR (grader e01).
// Kafka 2.1 does the same; a restart (which trims the cache at the log's load) or a new leader
// epoch ends it, and the sweep's fault phase is over.
func (s *sweepRun) staleEpochLoop() string {
	if s.e.era.endTruncationTrimsEpochCache {
		return ""
	}
	for pid := range int32(s.e.PartitionCount()) {
		p := s.e.Partition(pid)
		for _, r := range p.Replicas() {
			if r.Broker() == p.Leader() || slices.Contains(p.ISR(), r.Broker()) {
				continue
			}
			cache := r.EpochCache()
			if n := len(cache); n > 0 && cache[n-1].StartOffset >= r.LogEndOffset() {
				return fmt.Sprintf("%s: follower %d at LEO %d holds epoch %d from offset %d in its cache (KAFKA-10706, fixed in 2.7)",
					p.Name(), r.Broker(), r.LogEndOffset(), cache[n-1].Epoch, cache[n-1].StartOffset)
			}
		}
	}
	return ""
}

// converged checks, through the engine's read API, that every broker is up and every partition
// has a leader, a full ISR (the controller's and the leader's own, nothing pending) and replicas
// whose LEO and HW equal the leader's, with HW = LEO (with staleHW, or a HW the leader's fetch
// session believes it sent: sessionSentHW). It returns what is missing, or "".
func (s *sweepRun) converged(staleHW bool) string {
	for id := range int32(s.e.BrokerCount()) {
		b := s.e.Broker(id)
		if b.State != "running" || b.Isolated || !b.Registered {
			return fmt.Sprintf("broker %d is %s (isolated %v, registered %v)", b.ID, b.State, b.Isolated, b.Registered)
		}
	}
	for pid := range int32(s.e.PartitionCount()) {
		p := s.e.Partition(pid)
		name, isr := p.Name(), p.ISR()
		if p.Leader() < 0 {
			return name + " has no leader"
		}
		if !slices.Equal(isr, protocol.SortedCopy(p.Assignment())) {
			return fmt.Sprintf("%s: ISR %v, replicas %v", name, isr, p.Assignment())
		}
		lead, ok := p.ReplicaOn(p.Leader())
		if !ok || lead.Down() || lead.Offline() || !lead.Known() || !lead.IsLeader() {
			return fmt.Sprintf("%s: broker %d does not act as leader yet", name, p.Leader())
		}
		if !slices.Equal(lead.ISR(), isr) || lead.PendingISRChange() != "" {
			return fmt.Sprintf("%s: the leader's ISR %v (pending %q) differs from the controller's %v", name, lead.ISR(), lead.PendingISRChange(), isr)
		}
		if lead.HighWatermark() != lead.LogEndOffset() {
			return fmt.Sprintf("%s: leader HW %d < LEO %d", name, lead.HighWatermark(), lead.LogEndOffset())
		}
		for _, r := range p.Replicas() {
			if r.LogEndOffset() != lead.LogEndOffset() || r.HighWatermark() != lead.HighWatermark() {
				if staleHW && r.LogEndOffset() == lead.LogEndOffset() && s.sessionSentHW(pid, p.Leader(), r.Broker(), lead.HighWatermark()) {
					continue
				}
				return fmt.Sprintf("%s: replica %d LEO %d HW %d, leader LEO %d HW %d", name, r.Broker(),
					r.LogEndOffset(), r.HighWatermark(), lead.LogEndOffset(), lead.HighWatermark())
			}
		}
	}
	return ""
}

// sessionSentHW reports whether the fetch session of follower f on leader broker leader caches hw
// as the HW it last answered for pid. Kafka's leader then leaves the partition out of its
// incremental answers until the HW moves again (CachedPartition.maybeUpdateResponseData; a
// request's changed fetch data does not reset it: updateRequestParams, 2.1.1 and 3.7.0), even
// when the follower did not apply that answer's HW: a diverging answer (truncate on fetch), or
// one that arrived after a new leader epoch restarted its fetch state. Its HW then waits for the
// next produce, as Kafka's does; the sweep's last check, after the final produce, requires it.
func (s *sweepRun) sessionSentHW(pid, leader, f int32, hw int64) bool {
	lr := s.e.brokers[leader].Replica(pid)
	if lr == nil {
		return false
	}
	return lr.SessionSentHW(f, hw)
}

// finalProduce sends one acks=all record to every partition of the converged cluster and
// requires every one to be acknowledged.
func (s *sweepRun) finalProduce() bool {
	first := s.e.clients.ProduceCount()
	for _, pt := range s.parts {
		s.apply(Action{Do: "produce", Topic: pt.topic, Partition: ptr(pt.index)})
	}
	deadline := s.e.Now() + sweepFinalProduceMs
	for {
		ops := s.e.Produces()[first:]
		if !slices.ContainsFunc(ops, func(op ProduceOp) bool { return !op.Done }) {
			for _, op := range ops {
				if op.Result != "acked" {
					s.livenessFailed = true
					s.fail(fmt.Sprintf("after convergence, a produce to %s-%d got %s", op.Topic, op.Partition, op.Result))
					return false
				}
			}
			return true
		}
		if s.e.Now() >= deadline || !s.runTo(s.e.Now()+sweepProbeMs) {
			break
		}
	}
	if !s.violated() {
		s.livenessFailed = true
		s.fail(fmt.Sprintf("after convergence, produces were not answered within %d ms", sweepFinalProduceMs))
	}
	return false
}

// checkLogs compares every replica's records with the leader's and looks up every record
// acknowledged with acks=all in the leader's log.
func (s *sweepRun) checkLogs() {
	for pid := range int32(s.e.PartitionCount()) {
		p := s.e.Partition(pid)
		var lead []commitlogRecord
		var leadStart int64
		if r, ok := p.ReplicaOn(p.Leader()); ok {
			lead, leadStart = r.Records(), r.LogStartOffset()
		}
		for _, r := range p.Replicas() {
			if !slices.Equal(r.Records(), lead) {
				s.fail(fmt.Sprintf("%s: broker %d's records differ from leader %d's", p.Name(), r.Broker(), p.Leader()))
				return
			}
		}
		for _, op := range s.e.Produces() {
			if op.Topic != p.Topic() || op.Partition != p.Index() || op.Acks != -1 || op.Result != "acked" {
				continue
			}
			for i, id := range op.RecordIDs {
				o := op.BaseOffset + int64(i) - leadStart
				if o < 0 || o >= int64(len(lead)) || lead[o].ID != id {
					s.fail(fmt.Sprintf("%s: acked record %d (offset %d) is not in leader %d's log", p.Name(), id, op.BaseOffset+int64(i), p.Leader()))
					return
				}
			}
		}
	}
}

func (s *sweepRun) count() {
	for _, op := range s.e.Produces() {
		if op.Result == "acked" {
			s.acked++
		}
	}
}

// apply applies an action now and records it as a step of the seed's scenario.
func (s *sweepRun) apply(a Action) {
	if err := s.e.Apply(a); err != nil {
		s.t.Fatalf("seed %d: the generator made an invalid action at %d ms: %v (%s)", s.seed, s.e.Now(), err, jsonString(a))
	}
	s.steps = append(s.steps, Step{At: s.e.Now(), Action: a})
	s.drain()
}

// runTo moves time to t; it reports false if an invariant broke.
func (s *sweepRun) runTo(t int64) bool {
	// A compound fault (kip101) may have moved time a few ms past a scheduled recovery.
	t = max(t, s.e.Now())
	if err := s.e.RunUntil(t); err != nil {
		s.t.Fatalf("seed %d: %v", s.seed, err)
	}
	s.drain()
	return !s.violated()
}

// drain keeps the last event texts, and freezes them at the first violation.
func (s *sweepRun) drain() {
	evs := s.e.Drain()
	if s.sink != nil && len(evs) > 0 {
		s.sink(evs)
	}
	for _, ev := range evs {
		if len(s.tail) == sweepTailEvents {
			copy(s.tail, s.tail[1:])
			s.tail = s.tail[:sweepTailEvents-1]
		}
		line := fmt.Sprintf("%8d ms  %s", ev.T, ev.Text)
		s.tail = append(s.tail, line)
		if s.textLog != nil {
			fmt.Fprintln(s.textLog, line)
		}
		if ev.Type == EvViolation && s.violationTail == nil {
			s.violationTail = slices.Clone(s.tail)
		}
	}
}

// violated reports an invariant violation, failing the seed the first time.
func (s *sweepRun) violated() bool {
	vs := s.e.Violations()
	if len(vs) == 0 {
		return false
	}
	if !s.failed {
		var texts []string
		for _, v := range vs {
			texts = append(texts, fmt.Sprintf("%s at %d ms: %s", v.Name, v.T, v.Text))
		}
		s.fail("invariant violated: " + strings.Join(texts, "; "))
	}
	return true
}

// fail reports the seed's failure with everything needed to replay and read it.
func (s *sweepRun) fail(why string) {
	if s.mode.measure {
		// A measured era: the anomaly is counted (and logged with -v), not a failure.
		if s.anomaly == "" {
			s.anomaly = why
			s.t.Log(s.report(why))
		}
		return
	}
	s.failed = true
	s.t.Error(s.report(why))
}

// report is a failure's text: the seed, how to replay it, the run as a scenario file and the
// events up to the first violation.
func (s *sweepRun) report(why string) string {
	tail := s.violationTail
	if tail == nil {
		tail = s.tail
	}
	replay := fmt.Sprintf("go test ./engine -run '^TestSweep$/^seed=%d$'", s.seed)
	if s.mode.name != sweepDefault.name {
		replay = fmt.Sprintf("go test ./engine -run '^TestSweepEras$/^%s$/^seed=%d$' -v", regexp.QuoteMeta(s.mode.name), s.seed)
	}
	if s.seed > uint64(s.mode.defaultSeeds) {
		replay = fmt.Sprintf("HIGHWATER_SWEEP_SEEDS=%d %s", s.seed, replay)
	}
	verb := "failed"
	if s.mode.measure {
		verb = "shows an anomaly (measured, not a failure)"
	}
	msg := fmt.Sprintf("seed %d %s at %d ms: %s\nreplay: %s\n", s.seed, verb, s.e.Now(), why, replay)
	if path, err := s.writeScenario(); err == nil {
		msg += fmt.Sprintf("the run as a scenario: highwater run %s\n", path)
	}
	msg += fmt.Sprintf("last %d events:\n  %s", len(tail), strings.Join(tail, "\n  "))
	return msg
}

// scenario returns the seed's run as a scenario file: the cluster and every action applied,
// ending at the current time with an expectation of no violation.
func (s *sweepRun) scenario() *Scenario {
	sc := *s.sc
	sc.Steps = slices.Clone(s.steps)
	sc.Duration = s.e.Now()
	return &sc
}

func (s *sweepRun) writeScenario() (string, error) {
	data, err := json.MarshalIndent(s.scenario(), "", "  ")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("highwater-sweep-seed-%d.json", s.seed)
	if s.mode.name != sweepDefault.name {
		name = fmt.Sprintf("highwater-sweep-%s-seed-%d.json", s.mode.name, s.seed)
	}
	path := filepath.Join(os.TempDir(), name)
	return path, os.WriteFile(path, data, 0o644)
}

func ptr[T any](v T) *T { return &v }
