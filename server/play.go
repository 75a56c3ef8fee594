package server

// Server-paced play: the one protocol extension the native backend adds. In the page's Web Worker
// the page paces time itself (it asks `advance` each animation frame); on the native backend its
// Play button asks the server to play instead, saving a round trip per step:
//
//	{"id": 7, "op": "play", "speed": 1, "intervalMs": 100, "maxEvents": 2000, "view": {...}}
//	{"id": 8, "op": "pause"}
//
// play answers at once like a view request (id 7), then pushes one frame per interval: an advance
// reply with the same id and an extra first field, {"push":"play","id":7,"type":"reply",...}.
// speed is simulated ms per wall-clock ms (default 1; 0 means flat out: advance chunkMs of
// simulated time per frame, as fast as the client reads). Other requests are answered between
// frames; load stops play; pause stops it and answers like a view request.
//
// Frames coalesce: sim time to reach is computed from the wall clock at each frame, and a frame
// is written before the next is computed, so a slow reader gets fewer, larger frames (events
// beyond maxEvents counted in "dropped") instead of a queue. If the engine cannot keep up, a
// frame advances at most 4 intervals' worth and the pace restarts from there (no debt builds).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/highwater-sim/highwater/engine/session"
)

type playRequest struct {
	ID         int64                `json:"id"`
	Op         string               `json:"op"`
	Speed      *float64             `json:"speed,omitempty"`
	IntervalMs int64                `json:"intervalMs,omitempty"`
	ChunkMs    int64                `json:"chunkMs,omitempty"`
	MaxEvents  int                  `json:"maxEvents,omitempty"`
	View       *session.ViewRequest `json:"view,omitempty"`
	NoView     bool                 `json:"noView,omitempty"`
}

// Play limits.
const (
	defaultIntervalMs = 100
	minIntervalMs     = 16
	maxIntervalMs     = 5000
	defaultChunkMs    = 1000
	maxChunkMs        = 3_600_000
	maxSpeed          = 10_000
)

type player struct {
	req       playRequest
	speed     float64
	interval  time.Duration
	timer     *time.Timer
	startWall time.Time
	startSim  int64
}

func decodePlay(data []byte) (playRequest, error) {
	var p playRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("bad request: %v", err)
	}
	if dec.More() {
		return p, errors.New("bad request: more than one JSON value")
	}
	if p.Op == "pause" {
		return p, nil
	}
	if p.Speed != nil && (math.IsNaN(*p.Speed) || *p.Speed < 0 || *p.Speed > maxSpeed) {
		return p, fmt.Errorf("speed: %v is not in [0, %d] (0: flat out)", *p.Speed, maxSpeed)
	}
	if p.IntervalMs == 0 {
		p.IntervalMs = defaultIntervalMs
	}
	if p.IntervalMs < minIntervalMs || p.IntervalMs > maxIntervalMs {
		return p, fmt.Errorf("intervalMs: %d is not in [%d, %d]", p.IntervalMs, minIntervalMs, maxIntervalMs)
	}
	if p.ChunkMs == 0 {
		p.ChunkMs = defaultChunkMs
	}
	if p.ChunkMs < 1 || p.ChunkMs > maxChunkMs {
		return p, fmt.Errorf("chunkMs: %d is not in [1, %d]", p.ChunkMs, maxChunkMs)
	}
	return p, nil
}

// handlePlay answers play and pause.
func (c *conn) handlePlay(data []byte) []byte {
	p, err := decodePlay(data)
	if err != nil {
		return c.errorReply(requestID(data), err.Error())
	}
	view := session.Request{ID: p.ID, Op: "view", MaxEvents: p.MaxEvents, View: p.View, NoView: p.NoView}
	if p.Op == "pause" {
		c.stopPlay()
		return mustMarshalReply(c.sess.Handle(view))
	}
	eng := c.sess.Engine()
	if eng == nil {
		return c.errorReply(p.ID, "no cluster: load a scenario first")
	}
	c.stopPlay()
	speed := 1.0
	if p.Speed != nil {
		speed = *p.Speed
	}
	if limit := c.maxAdvance(); p.ChunkMs > limit {
		return c.errorReply(p.ID, fmt.Sprintf("chunkMs: %d is over this server's limit of %d ms per frame for this cluster (--max-advance)", p.ChunkMs, limit))
	}
	pl := &player{req: p, speed: speed, interval: time.Duration(p.IntervalMs) * time.Millisecond,
		startWall: time.Now(), startSim: eng.Now()}
	first := pl.interval
	if speed == 0 {
		first = 0
	}
	pl.timer = time.NewTimer(first)
	c.play = pl
	c.log.Info("play", "speed", speed, "intervalMs", p.IntervalMs)
	return mustMarshalReply(c.sess.Handle(view))
}

func (c *conn) stopPlay() {
	if c.play != nil {
		c.play.timer.Stop()
		c.play = nil
	}
}

// playTick advances to where the wall clock says simulated time should be and pushes the reply.
func (c *conn) playTick(ctx context.Context) error {
	p := c.play
	eng := c.sess.Engine()
	now := eng.Now()
	start := time.Now()
	to := p.target(now, start, c.maxAdvance())
	next := p.interval
	if p.speed == 0 {
		next = 0
	}
	if to <= now { // too slow to move a whole ms yet: nothing to send
		p.timer.Reset(next)
		return nil
	}
	if !c.acquire(ctx, p.req.ID) {
		return ctx.Err()
	}
	reply := c.sess.Handle(session.Request{ID: p.req.ID, Op: "advance", To: &to,
		MaxEvents: p.req.MaxEvents, View: p.req.View, NoView: p.req.NoView})
	c.release()
	out := append([]byte(`{"push":"play",`), mustMarshalReply(reply)[1:]...)
	if reply.Type == "error" {
		c.stopPlay()
	} else {
		// One frame per interval, counting the time this one took to build (a large cluster's
		// frame takes a good part of it); the write below still comes first, so a slow reader
		// gets fewer frames, not a queue.
		p.timer.Reset(max(0, next-time.Since(start)))
	}
	return c.write(ctx, out)
}

// target is the simulated time the frame built at wall-clock time wall should reach, with the
// engine at now; it may move the pace's baseline. Flat out it is now + chunkMs. Paced, it is
// startSim + speed × (wall - startWall), except:
//   - behind by more than maxStep (the engine is too slow, or the page sought back): step maxStep
//     and restart the pace from there, so no debt builds up;
//   - ahead (the page advanced or sought forward meanwhile): restart the pace from now.
//
// A result ≤ now means there is nothing to send yet.
func (p *player) target(now int64, wall time.Time, maxAdvance int64) int64 {
	if p.speed == 0 {
		return now + p.req.ChunkMs
	}
	target := p.startSim + int64(float64(wall.Sub(p.startWall).Milliseconds())*p.speed)
	maxStep := min(int64(p.speed*float64(p.req.IntervalMs)*4)+1, maxAdvance)
	switch {
	case target-now > maxStep:
		p.startWall, p.startSim = wall, now+maxStep
		return now + maxStep
	case target < now:
		p.startWall, p.startSim = wall, now
		return now
	}
	return target
}
