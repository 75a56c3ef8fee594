package engine

import (
	"encoding/json"
	"fmt"
	"github.com/highwater-sim/highwater/engine/protocol"
	"slices"
	"strings"
)

// ExpectFailure is one failed check of an expect step, or an unexpected violation (Field
// "violations", Step -1).
type ExpectFailure struct {
	Step     int    `json:"step"`
	At       int64  `json:"at"`
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

func (f ExpectFailure) String() string {
	if f.Step < 0 {
		return fmt.Sprintf("end of run (at %d): %s: expected %s, actual %s", f.At, f.Field, f.Expected, f.Actual)
	}
	return fmt.Sprintf("steps[%d] (at %d): %s: expected %s, actual %s", f.Step, f.At, f.Field, f.Expected, f.Actual)
}

// Result is the outcome of a scenario run.
type Result struct {
	Failures []ExpectFailure `json:"failures"`
	End      int64           `json:"end"`
}

// OK reports whether every expectation held and no unexpected violation happened.
func (r Result) OK() bool { return len(r.Failures) == 0 }

// Run plays a scenario from start to end. sink, if given, gets the events as they are drained
// (after each step and at the end). Without a sink nobody reads the events, so the run records
// none and formats no narration (Stats still counts them). An action that cannot be applied (a
// broker in the wrong state) is an error naming the step.
func Run(sc *Scenario, sink func([]Event)) (*Engine, Result, error) {
	e, err := newEngine(sc, sink != nil, nil)
	if err != nil {
		return nil, Result{}, err
	}
	res, err := e.RunSteps(sc, sink)
	return e, res, err
}

// RunUnnarrated is Run whose sink gets the events as DrainUnnarrated gives them, without the
// text Narrate fills in: a driver that writes the trace on another goroutine narrates there, off
// the engine's. The engine keeps no reference to a batch it hands over, and the messages the
// events point to never change once sent, so the sink may keep the batch and read it (Narrate
// included) while the engine runs on.
func RunUnnarrated(sc *Scenario, sink func([]Event)) (*Engine, Result, error) {
	e, err := NewRun(sc, sink != nil)
	if err != nil {
		return nil, Result{}, err
	}
	res, err := e.RunStepsUnnarrated(sc, sink)
	return e, res, err
}

// NewRun builds the engine RunUnnarrated runs sc on, recording events if record (a sink will read
// them). It needs none of sc's steps: a driver may build it from ParseScenarioHead's scenario
// while the steps are parsed, then run them with RunStepsUnnarrated.
func NewRun(sc *Scenario, record bool) (*Engine, error) { return newEngine(sc, record, nil) }

// RunStepsUnnarrated is RunSteps whose sink gets the events as RunUnnarrated's does.
func (e *Engine) RunStepsUnnarrated(sc *Scenario, sink func([]Event)) (Result, error) {
	return e.runSteps(sc, sink, e.DrainUnnarrated)
}

// RunSteps applies a scenario's steps to an engine built from it, then runs to its end.
func (e *Engine) RunSteps(sc *Scenario, sink func([]Event)) (Result, error) {
	return e.runSteps(sc, sink, e.Drain)
}

// runSteps is RunSteps with the drain that gives sink its events (Drain or DrainUnnarrated).
func (e *Engine) runSteps(sc *Scenario, sink func([]Event), drainEvents func() []Event) (Result, error) {
	var res Result
	drain := func() {
		if ev := drainEvents(); sink != nil && len(ev) > 0 {
			sink(ev)
		}
	}
	for i := range sc.Steps {
		st := &sc.Steps[i] // not a copy: a step is some 140 bytes, and a large run has 100,000
		if err := e.RunToStep(st.At); err != nil {
			return res, fmt.Errorf("steps[%d].at: %v", i, err)
		}
		if st.Action.Expect != nil {
			for _, f := range e.CheckExpect(st.Action.Expect) {
				f.Step, f.At = i, st.At
				res.Failures = append(res.Failures, f)
			}
			continue
		}
		if err := e.Apply(st.Action); err != nil {
			return res, fmt.Errorf("steps[%d] (at %d, %s): %v", i, st.At, st.Action.Do, err)
		}
		drain()
	}
	end := sc.Duration
	if n := len(sc.Steps); end == 0 && n > 0 {
		end = sc.Steps[n-1].At
	}
	end = max(end, e.now)
	_ = e.RunUntil(end)
	drain()
	res.End = end
	var unexpected []string
	names := e.ViolationNames()
	// The violations the expect steps list, read only when there are violations: a pass over
	// every step misses the cache once or more per step in a large run (issue 12).
	expected := map[string]bool{}
	for i := 0; len(names) > 0 && i < len(sc.Steps); i++ {
		if ex := sc.Steps[i].Action.Expect; ex != nil {
			for _, v := range ex.Violations {
				expected[v] = true
			}
		}
	}
	for _, name := range names {
		if !expected[name] {
			unexpected = append(unexpected, name)
		}
	}
	if len(unexpected) > 0 {
		var texts []string
		for _, v := range e.Violations() {
			if slices.Contains(unexpected, v.Name) {
				texts = append(texts, fmt.Sprintf("at %d: %s", v.T, v.Text))
			}
		}
		// The actual value starts with the invariants' names, the contract's values of the field.
		res.Failures = append(res.Failures, ExpectFailure{Step: -1, At: end, Field: "violations",
			Expected: "no violation that no expect step lists", Actual: jsonString(unexpected) + " (" + strings.Join(texts, "; ") + ")"})
	}
	return res, nil
}

// CheckExpect checks an expect step against the current state.
func (e *Engine) CheckExpect(ex *Expect) []ExpectFailure {
	var out []ExpectFailure
	fail := func(field string, want, got any) {
		out = append(out, ExpectFailure{Field: field, Expected: jsonString(want), Actual: jsonString(got)})
	}
	if ex.Topic != "" {
		p := e.partitionOf(ex.Topic, *ex.Partition)
		if leader := e.ctrl.Leader(p.pid); ex.Leader != nil && *ex.Leader != leader {
			fail("leader", *ex.Leader, leader)
		}
		if epoch := e.ctrl.LeaderEpoch(p.pid); ex.LeaderEpoch != nil && *ex.LeaderEpoch != epoch {
			fail("leaderEpoch", *ex.LeaderEpoch, epoch)
		}
		if _, given := ex.raw["isr"]; given {
			// As a set (the contract): order and repeats do not count.
			if want, isr := slices.Compact(protocol.SortedCopy(ex.ISR)), e.ctrl.ISR(p.pid); !slices.Equal(want, isr) {
				fail("isr", want, isr)
			}
		}
		if ex.Acked != nil && *ex.Acked != e.client(p).Acked() {
			fail("acked", *ex.Acked, e.client(p).Acked())
		}
		for _, id := range sortedKeys(ex.Replicas) {
			var b int32
			fmt.Sscan(id, &b)
			re := ex.Replicas[id]
			r := e.replicaOn(p.pid, b)
			if r == nil {
				fail("replicas."+id, "a replica on broker "+id, "none")
				continue
			}
			if re.LEO != nil && *re.LEO != r.Log().LogEndOffset() {
				fail("replicas."+id+".leo", *re.LEO, r.Log().LogEndOffset())
			}
			if re.HW != nil && *re.HW != r.Log().HighWatermark() {
				fail("replicas."+id+".hw", *re.HW, r.Log().HighWatermark())
			}
			if re.given["epochs"] {
				got := []int32{}
				for _, rec := range r.Log().Records() {
					if !rec.Gap { // an offset a truncation inside a batch left without a record
						got = append(got, rec.Epoch)
					}
				}
				want := re.Epochs
				if want == nil {
					want = []int32{}
				}
				if !slices.Equal(want, got) {
					fail("replicas."+id+".epochs", want, got)
				}
			}
		}
	}
	if _, given := ex.raw["violations"]; given {
		want := slices.Clone(ex.Violations)
		if want == nil {
			want = []string{}
		}
		slices.Sort(want)
		want = slices.Compact(want) // the exact set: a name listed twice is listed once
		got := e.ViolationNames()
		if got == nil {
			got = []string{}
		}
		if !slices.Equal(want, got) {
			fail("violations", want, got)
		}
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
