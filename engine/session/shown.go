package session

import (
	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/view"
)

// The events a session's engine records. A page looking at an overview of a large cluster is sent
// in full only the events of what it focuses on and the cluster-wide ones; the others are counted
// by type (Reply.Aggregated). Deciding that as each event is emitted (engine.EventFilter) instead
// of after the engine ran keeps the others from being recorded at all: loading a million
// partitions emits three million become-leader-or-follower events, 864 MB that the page never
// saw. The decision is the reply's own (view.Detail.Shows, for the request's view options), so
// the reply is the same.

// shownEvents chooses, for the current request's view options, the events recorded.
type shownEvents struct {
	opt view.Options
	// detail is opt's view.Detail on eng, nil when the view is not an overview (every
	// event is recorded).
	eng    *engine.Engine
	detail *view.Detail
	// counted are the events not recorded since the last reply, by type.
	counted map[string]int
	// all records every event, leaving the choice to the reply as before (tests compare).
	all bool
}

// choose sets the view options of the request about to run.
func (s *shownEvents) choose(opt view.Options) { s.opt, s.eng = opt, nil }

// record is the session's engine.EventFilter. The overview hears every event, recorded or not.
func (s *Session) record(e *engine.Engine, ev *engine.Event) bool {
	s.overview.ObserveEvent(e, ev)
	sh := &s.shown
	if sh.eng != e {
		sh.eng, sh.detail = e, nil
		if view.IsOverview(e, sh.opt) {
			sh.detail = view.NewDetail(e, sh.opt.FocusBrokers, sh.opt.Focus)
		}
	}
	if sh.all || sh.detail == nil || sh.detail.Shows(ev) {
		return true
	}
	if sh.counted == nil {
		sh.counted = map[string]int{}
	}
	sh.counted[ev.Type]++
	return false
}

// report adds the counted events to a reply's aggregated counts and starts counting anew.
func (s *shownEvents) report(aggregated map[string]int) map[string]int {
	for typ, n := range s.counted {
		if aggregated == nil {
			aggregated = map[string]int{}
		}
		aggregated[typ] += n
	}
	s.counted = nil
	return aggregated
}
