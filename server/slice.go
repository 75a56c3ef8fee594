package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/session"
)

// A long advance runs in slices of simulated time, each sized to take about sliceWall of wall
// time, so that no request holds a core for long:
//   - between slices the session gives its running slot back (Config.MaxRunning slots across the
//     server), so a small session's request waits at most about one slice behind a heavy one;
//   - after Config.RequestBudget of wall time the advance stops where it got to, and the reply
//     says so ("partial": the time asked for), so the page can show progress and ask again.
//
// The slices are the session's own advance requests; the events of every slice are gathered into
// the one reply, in order, under the request's maxEvents (the latest are kept, as the session
// does), and only the last slice builds a view. The engine's run is the same as one advance: the
// engine is deterministic and RunUntil(a) then RunUntil(b) is RunUntil(b).

// sliceWall is the wall time one slice aims for.
const sliceWall = 50 * time.Millisecond

// firstSliceMs is the simulated length of the first slice; later ones follow the measured speed.
const firstSliceMs = 200

// firstSlice is the simulated length of an advance's first slice: what the session's last
// measured speed covers in sliceWall, or firstSliceMs before any measure. A large cluster's first
// slice would otherwise hold a running slot far longer than sliceWall, and a small session
// waiting behind it with it.
func firstSlice(simPerWall float64) int64 {
	if simPerWall <= 0 {
		return firstSliceMs
	}
	return max(1, min(firstSliceMs*16, int64(simPerWall*float64(sliceWall.Milliseconds()))))
}

// partialReply is a reply cut short by the request budget.
type partialReply struct {
	session.Reply
	// Partial is the time the request asked to reach; the reply's t is where it stopped.
	Partial *partialTo `json:"partial,omitempty"`
}

type partialTo struct {
	Target int64 `json:"target"`
}

// queuedNotice tells a client that its request waits for a running slot, if it asked for notices
// (/ws?notices=1). It carries no id, so a page matching replies by id passes it by; "for" is the
// request's id.
type queuedNotice struct {
	Type    string `json:"type"` // "queued"
	For     int64  `json:"for"`
	Running int    `json:"running"`
}

// acquire takes a running slot, telling the client once if it has to wait. It returns false if
// the connection ends first.
func (c *conn) acquire(ctx context.Context, id int64) bool {
	select {
	case c.srv.slots <- struct{}{}:
		return true
	default:
	}
	if c.notices {
		_ = c.write(ctx, mustMarshal(queuedNotice{Type: "queued", For: id, Running: cap(c.srv.slots)}))
	}
	c.srv.noteQueued()
	select {
	case c.srv.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *conn) release() { <-c.srv.slots }

// slotLost answers a request whose connection ended while it waited for a running slot.
func (c *conn) slotLost(id int64) []byte {
	return c.errorReply(id, "connection closed while the request waited for a running slot")
}

// runSliced answers an advance in slices (see the file comment). req is the decoded request; the
// caller checked that it is an advance with exactly one of to and by.
func (c *conn) runSliced(ctx context.Context, req session.Request) []byte {
	eng := c.sess.Engine()
	if eng == nil {
		return c.handleReq(ctx, req)
	}
	target := eng.Now()
	if req.To != nil {
		target = *req.To
	} else if req.By != nil {
		target += *req.By
	}
	if target <= eng.Now() || target-eng.Now() <= firstSlice(c.simPerWall) {
		return c.handleReq(ctx, req)
	}
	start := time.Now()
	step := firstSlice(c.simPerWall)
	var gathered session.Reply
	for {
		now := eng.Now()
		to := min(target, now+step)
		last := to == target || time.Since(start) >= c.srv.cfg.RequestBudget
		slice := req
		slice.To, slice.By = &to, nil
		slice.NoView = req.NoView || !last
		if !c.acquire(ctx, req.ID) {
			return c.slotLost(req.ID)
		}
		t0 := time.Now()
		r := c.sess.Handle(slice)
		took := time.Since(t0)
		c.release()
		if r.Type != "reply" {
			return mustMarshalReply(r)
		}
		merge(&gathered, r, req.MaxEvents)
		if last {
			if gathered.Events == nil {
				gathered.Events = []engine.Event{}
			}
			out := partialReply{Reply: gathered}
			if eng.Now() < target {
				out.Partial = &partialTo{Target: target}
			}
			return mustMarshal(out)
		}
		// Aim the next slice at sliceWall, growing at most 4× at a time.
		if took > 0 {
			c.simPerWall = float64(to-now) / float64(took.Milliseconds()+1)
			step = max(1, min(4*step, int64(float64(to-now)*float64(sliceWall)/float64(took))))
		} else {
			step *= 4
		}
	}
}

// handleReq runs one request in a running slot.
func (c *conn) handleReq(ctx context.Context, req session.Request) []byte {
	if !c.acquire(ctx, req.ID) {
		return c.slotLost(req.ID)
	}
	defer c.release()
	return mustMarshalReply(c.sess.Handle(req))
}

// merge folds one slice's reply into the gathered one: events, dropped counts, counted events,
// expect outcomes and warnings add up; time, view and timeline are the latest slice's.
func merge(into *session.Reply, r session.Reply, maxEvents int) {
	events, dropped, agg := into.Events, into.Dropped, into.Aggregated
	expects, warnings := into.Expects, into.Warnings
	*into = r
	into.Events = append(events, r.Events...)
	into.Dropped = dropped + r.Dropped
	if maxEvents <= 0 {
		maxEvents = 5000 // the session's default
	}
	if over := len(into.Events) - maxEvents; over > 0 {
		into.Dropped += over
		into.Events = append(into.Events[:0:0], into.Events[over:]...)
	}
	if agg != nil || r.Aggregated != nil {
		into.Aggregated = map[string]int{}
		for k, v := range agg {
			into.Aggregated[k] += v
		}
		for k, v := range r.Aggregated {
			into.Aggregated[k] += v
		}
	}
	into.Expects = append(expects, r.Expects...)
	into.Warnings = append(warnings, r.Warnings...)
}

func mustMarshal(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // replies are plain data: cannot happen
	}
	return out
}
