// Package session is the host side of the page protocol: one Session owns one engine and answers
// the page's requests (load a scenario, apply an action, advance or step time, seek back, fork,
// view, export). The Web Worker (wasm/) and the websocket server (server/) both speak it, so a
// scenario, seed and list of requests give the same replies on either. It is pure: no I/O, no
// goroutines, no clock. The protocol is documented in docs/protocol.md.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/view"
)

// Request is one message from the page.
type Request struct {
	// ID is echoed in the reply so the page can match answers.
	ID int64 `json:"id"`
	// Op is one of: load, apply, advance, step, seek, view, export.
	Op string `json:"op"`
	// Scenario is load's scenario file.
	Scenario json.RawMessage `json:"scenario,omitempty"`
	// Action is apply's action: a step object without `at` ({"do": "kill", "broker": 1}).
	Action json.RawMessage `json:"action,omitempty"`
	// To and By are advance's target (absolute ms, or relative); To is seek's target.
	To *int64 `json:"to,omitempty"`
	By *int64 `json:"by,omitempty"`
	// MaxEvents caps the events in one reply (0: 5000); the rest are counted in Dropped.
	MaxEvents int `json:"maxEvents,omitempty"`
	// View chooses how much of the state the reply's view holds; NoView leaves the view out.
	View   *ViewRequest `json:"view,omitempty"`
	NoView bool         `json:"noView,omitempty"`
}

// ViewRequest is the page's choice of detail.
type ViewRequest struct {
	Focus []engine.TP `json:"focus,omitempty"`
	// FocusBrokers are the brokers an overview shows in full (drill-down into a broker).
	FocusBrokers []int32 `json:"focusBrokers,omitempty"`
	DetailLimit  int     `json:"detailLimit,omitempty"`
	NoRecords    bool    `json:"noRecords,omitempty"`
	MaxMessages  int     `json:"maxMessages,omitempty"`
	// Leaders asks an overview for each partition's leader (view.leaders).
	Leaders bool `json:"leaders,omitempty"`
	// Delta asks for a patch against the last view sent (viewPatch) instead of a whole view,
	// once a whole one has been sent (delta.go).
	Delta bool `json:"delta,omitempty"`
}

// Reply answers one request.
type Reply struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"` // "reply" or "error"
	Error string `json:"error,omitempty"`
	T     int64  `json:"t"`
	// Next is the time of the next internal happening (-1: none).
	Next   int64          `json:"next"`
	Events []engine.Event `json:"events"`
	// Dropped counts events left out by MaxEvents.
	Dropped int `json:"dropped,omitempty"`
	// Reset tells the page to forget its event log: the timeline was rebuilt (seek, load).
	Reset    bool             `json:"reset,omitempty"`
	View     *view.View       `json:"view,omitempty"`
	Timeline *Timeline        `json:"timeline,omitempty"`
	Expects  []ExpectOutcome  `json:"expects,omitempty"`
	Export   *engine.Scenario `json:"export,omitempty"`
	// ViewSeq numbers a whole view; ViewPatch replaces it when the page asked for deltas.
	ViewSeq   int64      `json:"viewSeq,omitempty"`
	ViewPatch *ViewPatch `json:"viewPatch,omitempty"`
	// Aggregated counts, by type, the events an overview left out: those that concern neither a
	// focused partition nor a focused broker (nor the whole cluster).
	Aggregated map[string]int `json:"aggregated,omitempty"`
	// Warnings name timeline actions that could not be replayed (skipped), e.g. a scripted
	// restart of a broker the user already restarted.
	Warnings []string `json:"warnings,omitempty"`
}

// Timeline is what the page's scrubber shows: how far the run has gone and the actions taken.
type Timeline struct {
	End     int64         `json:"end"`
	Actions []TimedAction `json:"actions"`
	Name    string        `json:"name"`
	Seed    uint64        `json:"seed"`
	Desc    string        `json:"description,omitempty"`
}

// TimedAction is one logged action.
type TimedAction struct {
	At     int64         `json:"at"`
	Action engine.Action `json:"action"`
	// order is the step's index in the scenario file (user actions come after every file step),
	// so actions and expects at one instant run in file order.
	order int
}

// ExpectOutcome is the result of a scenario's expect step, reported when time passes it.
type ExpectOutcome struct {
	Step     int                    `json:"step"`
	At       int64                  `json:"at"`
	OK       bool                   `json:"ok"`
	Failures []engine.ExpectFailure `json:"failures,omitempty"`
}

// Limits bound what one session may build (the server sets them per flag).
type Limits struct {
	MaxBrokers    int
	MaxPartitions int
}

// Session owns one engine and the run's record: the scenario and every action with its time.
type Session struct {
	limits  Limits
	sc      *engine.Scenario
	eng     *engine.Engine
	log     []TimedAction // actions, in time order
	expects []expectStep
	applied int // log[:applied] have been applied to eng
	checked int // expects[:checked] have been checked
	end     int64
	pending []engine.Event
	// overview keeps a large cluster's overview between views, told every event (shown.go).
	overview view.Overview
	// The events recorded: what the current request's view shows (shown.go).
	shown shownEvents
	// pendingOutcomes are expect results not yet reported; warnings likewise.
	pendingOutcomes []ExpectOutcome
	warnings        []string
	// sent is the last view sent to a page taking deltas (nil: send a whole one next); viewSeq
	// numbers the views sent.
	sent      *sentView
	viewSeq   int64
	userOrder int
}

type expectStep struct {
	step int
	at   int64
	ex   *engine.Expect
}

// New returns a session with no cluster yet.
func New(limits Limits) *Session { return &Session{limits: limits} }

// HandleJSON decodes one request, handles it and encodes the reply. A request that cannot be
// decoded gets an error reply naming the problem.
func (s *Session) HandleJSON(data []byte) []byte {
	var req Request
	var reply Reply
	if err := strictDecode(data, &req); err != nil {
		// Answer with the request's id when it can be read at all.
		var idOnly struct {
			ID int64 `json:"id"`
		}
		_ = json.Unmarshal(data, &idOnly)
		reply = s.errorReply(Request{ID: idOnly.ID}, fmt.Errorf("bad request: %v", err))
	} else {
		reply = s.Handle(req)
	}
	out, err := json.Marshal(reply)
	if err != nil {
		out, _ = json.Marshal(Reply{ID: req.ID, Type: "error", Error: "encoding the reply: " + err.Error(), Events: []engine.Event{}})
	}
	return out
}

// Handle answers one request. Errors become error replies; the session goes on.
func (s *Session) Handle(req Request) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			// An engine panic is a bug; report it with what replays it, keep the session.
			reply = s.errorReply(req, fmt.Errorf("internal error (please report with the exported run): %v", p))
		}
	}()
	var err error
	if s.eng != nil && req.Op != "load" && !req.NoView {
		// A view asking for what the cluster does not have is refused before anything runs.
		if err := view.Check(s.eng, viewOptions(req)); err != nil {
			return s.errorReply(req, fmt.Errorf("view.%v", err))
		}
	}
	s.shown.choose(viewOptions(req))
	switch req.Op {
	case "load":
		err = s.load(req.Scenario, viewOptions(req), !req.NoView)
		reply.Reset = true
	case "apply":
		err = s.apply(req.Action)
	case "advance":
		err = s.advance(req)
	case "step":
		err = s.step()
	case "seek":
		err = s.seek(req.To)
		reply.Reset = true
	case "view":
		err = s.needEngine()
	case "export":
		if err = s.needEngine(); err == nil {
			reply.Export = s.Export()
		}
	case "":
		err = errors.New("op: required (one of load, apply, advance, step, seek, view, export)")
	default:
		err = fmt.Errorf("op: unknown op %q (known: load, apply, advance, step, seek, view, export)", req.Op)
	}
	if err != nil {
		return s.errorReply(req, err)
	}
	reply.ID = req.ID
	reply.Type = "reply"
	s.fill(&reply, req)
	return reply
}

func (s *Session) errorReply(req Request, err error) Reply {
	r := Reply{ID: req.ID, Type: "error", Error: err.Error(), Events: []engine.Event{}, Next: -1}
	if s.eng != nil {
		r.T = s.eng.Now()
		r.Next = s.eng.NextAt()
	}
	return r
}

func (s *Session) needEngine() error {
	if s.eng == nil {
		return errors.New("no cluster: load a scenario first")
	}
	return nil
}

// fill adds the events, view, timeline and expect outcomes to a reply.
func (s *Session) fill(r *Reply, req Request) {
	r.T = s.eng.Now()
	r.Next = s.eng.NextAt()
	evs := append(s.pending, s.eng.DrainUnnarrated()...)
	s.pending = nil
	opt := viewOptions(req)
	if view.IsOverview(s.eng, opt) {
		evs, r.Aggregated = s.detailOnly(evs, opt)
	}
	r.Aggregated = s.shown.report(r.Aggregated)
	limit := req.MaxEvents
	if limit <= 0 {
		limit = 5000
	}
	if len(evs) > limit {
		r.Dropped = len(evs) - limit
		evs = evs[len(evs)-limit:]
	}
	if evs == nil {
		evs = []engine.Event{}
	}
	r.Events = engine.Narrate(evs) // only the events the page gets
	r.Expects, s.pendingOutcomes = s.pendingOutcomes, nil
	r.Warnings, s.warnings = s.warnings, nil
	if !req.NoView {
		v := s.overview.Build(s.eng, opt)
		s.viewSeq++
		s.sendView(r, &v, req.View != nil && req.View.Delta)
	}
	r.Timeline = &Timeline{End: s.end, Actions: append([]TimedAction{}, s.log...), Name: s.sc.Name, Seed: s.sc.Seed, Desc: s.sc.Description}
}

// detailOnly keeps the events an overview shows in full (view.Detail.Event) and counts the
// others by type.
func (s *Session) detailOnly(evs []engine.Event, opt view.Options) ([]engine.Event, map[string]int) {
	d := view.NewDetail(s.eng, opt.FocusBrokers, opt.Focus)
	var counted map[string]int
	shown := evs[:0]
	for _, ev := range evs {
		if ev, ok := d.Event(ev); ok {
			shown = append(shown, ev)
			continue
		}
		if counted == nil {
			counted = map[string]int{}
		}
		counted[ev.Type]++
	}
	return shown, counted
}

// viewOptions are the view's options for the request.
func viewOptions(req Request) view.Options {
	v := req.View
	if v == nil {
		return view.Options{}
	}
	return view.Options{Focus: v.Focus, FocusBrokers: v.FocusBrokers, DetailLimit: v.DetailLimit, NoRecords: v.NoRecords,
		MaxMessages: v.MaxMessages, Leaders: v.Leaders}
}

// sendView puts the view in the reply: whole, or as a patch against the last one sent when the
// page takes deltas and nothing was reset.
func (s *Session) sendView(r *Reply, v *view.View, delta bool) {
	if !delta {
		s.sent = nil
		r.View, r.ViewSeq = v, s.viewSeq
		return
	}
	cur, err := split(v, s.viewSeq)
	if err != nil {
		s.sent = nil
		r.View, r.ViewSeq = v, s.viewSeq
		return
	}
	if s.sent == nil || r.Reset {
		r.View, r.ViewSeq = v, s.viewSeq
	} else {
		r.ViewPatch = patch(s.sent, cur)
	}
	s.sent = cur
}

// load starts a new run from a scenario file. Its actions form the initial timeline; its expect
// steps are checked as time passes them.
func (s *Session) load(raw json.RawMessage, opt view.Options, withView bool) error {
	if len(raw) == 0 {
		return errors.New("scenario: required for load")
	}
	sc, err := engine.ParseScenario(raw)
	if err != nil {
		return fmt.Errorf("scenario: %v", err)
	}
	if err := s.checkLimits(sc); err != nil {
		return err
	}
	counted := s.shown.counted
	s.shown.counted = nil
	eng, err := engine.NewFiltered(sc, s.record)
	if err == nil && withView {
		if err = view.Check(eng, opt); err != nil {
			err = fmt.Errorf("view.%v", err)
		}
	} else if err != nil {
		err = fmt.Errorf("scenario: %v", err)
	}
	if err != nil {
		s.shown.counted = counted // the old cluster's, not yet reported
		return err
	}
	s.sc, s.eng = sc, eng
	s.sent = nil
	s.log, s.expects, s.applied, s.checked, s.end, s.pending, s.pendingOutcomes, s.warnings = nil, nil, 0, 0, 0, nil, nil, nil
	for i, st := range sc.Steps {
		if st.Action.Expect != nil {
			s.expects = append(s.expects, expectStep{step: i, at: st.At, ex: st.Action.Expect})
			continue
		}
		s.log = append(s.log, TimedAction{At: st.At, Action: st.Action, order: i})
	}
	return s.runTo(0)
}

func (s *Session) checkLimits(sc *engine.Scenario) error {
	if s.limits.MaxBrokers > 0 && sc.Brokers > s.limits.MaxBrokers {
		return fmt.Errorf("scenario.brokers: %d is over this session's limit of %d", sc.Brokers, s.limits.MaxBrokers)
	}
	total := sc.PartitionCount()
	if s.limits.MaxPartitions > 0 && total > s.limits.MaxPartitions {
		return fmt.Errorf("scenario.topics: %d partitions is over this session's limit of %d", total, s.limits.MaxPartitions)
	}
	return nil
}

// apply runs an action now. Acting at an earlier moment than the furthest point reached forks the
// timeline: logged actions after now are dropped.
func (s *Session) apply(raw json.RawMessage) error {
	if err := s.needEngine(); err != nil {
		return err
	}
	if len(raw) == 0 {
		return errors.New("action: required for apply")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("action: want an object: %v", err)
	}
	if _, ok := fields["at"]; ok {
		return errors.New("action.at: apply acts at the current time; leave `at` out")
	}
	a, err := engine.ParseAction(fields)
	if err != nil {
		return fmt.Errorf("action.%v", err)
	}
	if a.Do == "expect" {
		return errors.New("action.do: expect is for scenario files, not apply")
	}
	now := s.eng.Now()
	fork := now < s.end
	if err := s.eng.Apply(a); err != nil {
		return fmt.Errorf("action.%v", err)
	}
	s.userOrder++
	ta := TimedAction{At: now, Action: a, order: 1<<30 + s.userOrder}
	if fork {
		// Acting in the past forks the timeline: the old future is forgotten.
		s.log = append(s.log[:s.applied], ta)
		s.end = now
		s.expects = slices.DeleteFunc(s.expects, func(x expectStep) bool { return x.at > now })
		s.checked = min(s.checked, len(s.expects))
	} else {
		// At the frontier the scenario's own future steps stay.
		s.log = slices.Insert(s.log, s.applied, ta)
	}
	s.applied++
	return nil
}

func (s *Session) advance(req Request) error {
	if err := s.needEngine(); err != nil {
		return err
	}
	var to int64
	switch {
	case req.To != nil && req.By != nil:
		return errors.New("advance: give either to or by, not both")
	case req.To != nil:
		to = *req.To
	case req.By != nil:
		if *req.By < 0 {
			return fmt.Errorf("by: %d is negative", *req.By)
		}
		to = s.eng.Now() + *req.By
	default:
		return errors.New("advance: to or by is required")
	}
	if to < s.eng.Now() {
		return fmt.Errorf("to: %d is before the current time %d (use seek to go back)", to, s.eng.Now())
	}
	return s.runTo(to)
}

// runTo moves time to t, applying the logged actions due on the way.
func (s *Session) runTo(t int64) error {
	for {
		hasA := s.applied < len(s.log) && s.log[s.applied].At <= t
		hasE := s.checked < len(s.expects) && s.expects[s.checked].at <= t
		if !hasA && !hasE {
			break
		}
		// Actions and expects run in time order, then file order.
		if hasE && (!hasA || s.expects[s.checked].at < s.log[s.applied].At ||
			(s.expects[s.checked].at == s.log[s.applied].At && s.expects[s.checked].step < s.log[s.applied].order)) {
			if err := s.eng.RunToStep(s.expects[s.checked].at); err != nil {
				return err
			}
			s.checkNextExpect()
			continue
		}
		ta := s.log[s.applied]
		if err := s.eng.RunToStep(ta.At); err != nil {
			return err
		}
		if err := s.eng.Apply(ta.Action); err != nil {
			s.warnings = append(s.warnings, fmt.Sprintf("skipped the timeline's action at %d ms (%s): %v", ta.At, ta.Action.Do, err))
		}
		s.applied++
	}
	if err := s.eng.RunUntil(t); err != nil {
		return err
	}
	s.end = max(s.end, t)
	return nil
}

// step processes the engine up to its next event (or the next logged action, if sooner).
func (s *Session) step() error {
	if err := s.needEngine(); err != nil {
		return err
	}
	next := s.eng.NextAt()
	stop := int64(-1) // the next timeline action or expect, if it comes before the engine's next event
	if s.applied < len(s.log) {
		stop = s.log[s.applied].At
	}
	if s.checked < len(s.expects) && (stop < 0 || s.expects[s.checked].at < stop) {
		stop = s.expects[s.checked].at
	}
	if stop >= 0 && (next < 0 || stop <= next) {
		return s.runTo(stop)
	}
	if next < 0 {
		return nil
	}
	s.eng.Step()
	s.end = max(s.end, s.eng.Now())
	return nil
}

// seek rebuilds the run and replays it to time t (back or forward). The timeline is kept, so
// playing on repeats the same future until the user acts.
func (s *Session) seek(to *int64) error {
	if err := s.needEngine(); err != nil {
		return err
	}
	if to == nil || *to < 0 {
		return errors.New("to: a time ≥ 0 is required for seek")
	}
	if *to >= s.eng.Now() {
		return s.runTo(*to)
	}
	eng, err := engine.NewFiltered(s.sc, s.record)
	if err != nil {
		return err
	}
	s.eng, s.applied, s.checked, s.pendingOutcomes, s.warnings = eng, 0, 0, nil, nil
	end := s.end
	if err := s.runTo(*to); err != nil {
		return err
	}
	s.end = end
	// Keep only the recent past for the narration: the last events shown, not the replay's counts.
	evs := s.eng.DrainUnnarrated()
	s.shown.counted = nil
	if len(evs) > 200 {
		evs = evs[len(evs)-200:]
	}
	s.pending = evs
	return nil
}

// checkNextExpect checks the next expect step now.
func (s *Session) checkNextExpect() {
	x := s.expects[s.checked]
	fails := s.eng.CheckExpect(x.ex)
	o := ExpectOutcome{Step: x.step, At: x.at, OK: len(fails) == 0, Failures: fails}
	for i := range o.Failures {
		o.Failures[i].Step, o.Failures[i].At = x.step, x.at
	}
	s.pendingOutcomes = append(s.pendingOutcomes, o)
	s.checked++
}

// Export returns the run so far as a scenario file: the original cluster and config, its actions
// (with the user's), and its expect steps that still apply.
func (s *Session) Export() *engine.Scenario {
	sc := *s.sc
	sc.Steps = nil
	for _, ta := range s.log {
		sc.Steps = append(sc.Steps, engine.Step{At: ta.At, Action: ta.Action})
	}
	for _, x := range s.expects {
		sc.Steps = append(sc.Steps, engine.Step{At: x.at, Action: engine.Action{Do: "expect", Expect: x.ex}})
	}
	slices.SortStableFunc(sc.Steps, func(a, b engine.Step) int { return int(a.At - b.At) })
	sc.Duration = max(s.end, sc.Duration)
	return &sc
}

// Engine returns the session's engine (nil before load). Drivers use it for pacing decisions.
func (s *Session) Engine() *engine.Engine { return s.eng }

// DecodeRequest decodes a request as HandleJSON does (unknown fields are errors), for a host that
// looks at a request before handing it over (the server slices long advances).
func DecodeRequest(data []byte) (Request, error) {
	var req Request
	err := strictDecode(data, &req)
	return req, err
}

func strictDecode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	known := []string{"id", "op", "scenario", "action", "to", "by", "maxEvents", "view", "noView"}
	for k := range fields {
		if !slices.Contains(known, k) {
			return fmt.Errorf("%s: unknown field (known: %v)", k, known)
		}
	}
	return nil
}
