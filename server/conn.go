package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/session"
	"github.com/highwater-sim/highwater/server/hugepages"
)

// conn is one websocket session. Only run's goroutine touches sess and play; the reader
// goroutine touches only the websocket's read side.
type conn struct {
	srv      *Server
	ws       *websocket.Conn
	log      *slog.Logger
	sess     *session.Session
	play     *player // nil unless playing (play.go)
	requests int
	// notices: the client opened /ws?notices=1 and gets "queued" notices (slice.go); a client
	// that reads replies strictly in turn does not ask for them.
	notices bool
	// ctx is the session's context (run sets it): a request waiting for a running slot stops
	// waiting when the connection ends.
	ctx context.Context
	// partitions is this session's share of Config.MaxTotalPartitions; guarded by srv.mu.
	partitions int
	// simPerWall is the session's last measured speed, simulated ms per wall ms (0: not yet
	// measured), from which a sliced advance sizes its first slice (slice.go).
	simPerWall float64
}

// inbound is one message read off the wire: a request to hand to the session, or a problem with
// the message to answer with an error reply (ID is the request id when it could be read).
type inbound struct {
	data    []byte
	problem string
	id      int64
}

// slowRequest is how long a request may take before its op and duration are logged.
const slowRequest = time.Second

// tooBigError is a message over the hard limit: the connection is closed with
// StatusMessageTooBig.
type tooBigError struct{ size, hard int64 }

func (e tooBigError) Error() string {
	return fmt.Sprintf("request over %d bytes (8 × --max-message): closing the connection", e.hard)
}

// run serves the session until the client goes away, a limit closes it, or the server shuts
// down. It returns the reason (nil for a close the server chose, like idle or shutdown).
func (c *conn) run(ctx context.Context) error {
	// The library's own limit is off: readOne enforces both limits so that a long request gets
	// an error reply and a far too long one a close reason written here.
	c.ws.SetReadLimit(-1)
	defer c.ws.CloseNow() // whatever ended the session, release the connection (a no-op after Close)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx

	reqs := make(chan inbound) // unbuffered: the reader holds at most one request we have not taken
	var readErr error
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(reqs)
		for {
			in, err := c.readOne(ctx)
			if err != nil {
				readErr = err
				return
			}
			c.srv.noteRead()
			select {
			case reqs <- in:
			case <-ctx.Done():
				c.srv.noteAnswered()
				return
			}
		}
	}()
	err := c.loop(ctx, reqs, &readErr, readDone)
	cancel()
	<-readDone
	return err
}

// loop is the session goroutine: it takes one request, answers it, and only then takes the next.
func (c *conn) loop(ctx context.Context, reqs <-chan inbound, readErr *error, readDone <-chan struct{}) error {
	idle := time.NewTimer(c.srv.cfg.IdleTimeout)
	defer idle.Stop()
	for {
		var tick <-chan time.Time
		if c.play != nil {
			tick = c.play.timer.C
		}
		select {
		case in, ok := <-reqs:
			if !ok {
				<-readDone
				return c.closeAfterReadError(*readErr)
			}
			c.requests++
			start := time.Now()
			stop := c.watchdog(in.data)
			out := c.answer(in)
			stop()
			c.srv.noteAnswered()
			if d := time.Since(start); d >= slowRequest {
				_, op := peek(in.data)
				c.log.Warn("slow request", "op", op, "duration", d.Round(time.Millisecond), "replyBytes", len(out))
			}
			if err := c.write(ctx, out); err != nil {
				return err
			}
			resetTimer(idle, c.srv.cfg.IdleTimeout)
		case <-tick:
			stop := c.watchdog([]byte(`{"op":"play"}`))
			err := c.playTick(ctx)
			stop()
			if err != nil {
				return err
			}
			resetTimer(idle, c.srv.cfg.IdleTimeout)
		case <-idle.C:
			reason := "idle for " + c.srv.cfg.IdleTimeout.String() + " (--idle-timeout)"
			c.log.Info("closing idle session", "idle", c.srv.cfg.IdleTimeout)
			return closeErr(c.ws.Close(websocket.StatusGoingAway, reason))
		case <-c.srv.shutdown:
			return closeErr(c.ws.Close(websocket.StatusGoingAway, "server shutting down"))
		}
	}
}

// closeAfterReadError ends the session after the reader stopped.
func (c *conn) closeAfterReadError(err error) error {
	var big tooBigError
	if errors.As(err, &big) {
		c.log.Warn("request over the hard limit", "bytes", big.size, "limit", big.hard)
		_ = c.ws.Close(websocket.StatusMessageTooBig, big.Error())
		return err
	}
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return nil
	}
	return err
}

// closeErr treats a close that completed, or whose peer already left, as success.
func closeErr(err error) error {
	if err == nil || websocket.CloseStatus(err) != -1 {
		return nil
	}
	return err
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}

// readOne reads one message. At most MaxMessageBytes+1 bytes of it are kept: a longer message is
// read to its end and discarded (answered with an error), and one over HardMessageBytes is a
// tooBigError.
func (c *conn) readOne(ctx context.Context) (inbound, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return inbound{}, err
	}
	limit, hard := c.srv.cfg.MaxMessageBytes, c.srv.cfg.HardMessageBytes
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return inbound{}, err
	}
	if n > limit {
		rest, err := io.Copy(io.Discard, io.LimitReader(r, hard-n+1))
		if err != nil {
			return inbound{}, err
		}
		if n+rest > hard {
			return inbound{}, tooBigError{size: n + rest, hard: hard}
		}
		return inbound{id: requestID(buf.Bytes()), problem: fmt.Sprintf(
			"message too big: %d bytes; the limit is %d (--max-message)", n+rest, limit)}, nil
	}
	if typ != websocket.MessageText {
		return inbound{id: requestID(buf.Bytes()), problem: "binary message: send each request as one JSON text message"}, nil
	}
	return inbound{data: buf.Bytes()}, nil
}

// watchdog tells the client when a request runs past StuckAfter: the engine cannot be
// interrupted, so a request that long is most likely an engine livelock. The client gets a close
// frame (1011) instead of waiting forever; the session's goroutine ends only if the engine
// returns, and until then still counts against MaxSessions. It returns the function that
// disarms it.
func (c *conn) watchdog(req []byte) (stop func()) {
	t := time.AfterFunc(c.srv.cfg.StuckAfter, func() {
		_, op := peek(req)
		c.log.Error("request still running: engine stuck? closing the connection", "op", op, "after", c.srv.cfg.StuckAfter)
		_ = c.ws.Close(websocket.StatusInternalError, "request ran over "+c.srv.cfg.StuckAfter.String()+": engine stuck? (please report)")
	})
	return func() { t.Stop() }
}

// answer handles one inbound message and returns the reply to send.
func (c *conn) answer(in inbound) []byte {
	if h := c.srv.answerHook; h != nil {
		h(in.data)
	}
	if in.problem != "" {
		return c.errorReply(in.id, in.problem)
	}
	// Route with the decoder the session uses (encoding/json: the last of duplicate keys wins,
	// keys match case-insensitively), so no spelling of a request reaches the session past the
	// checks here. A request that does not decode is the session's to name.
	var rt route
	if json.Unmarshal(in.data, &rt) != nil {
		return c.handle(in.data)
	}
	switch rt.Op {
	case "play", "pause":
		return c.handlePlay(in.data)
	case "load":
		c.stopPlay()
		return c.load(in.data, rt.Scenario)
	}
	if msg := c.checkSpan(rt); msg != "" {
		return c.errorReply(rt.ID, msg)
	}
	if rt.Op == "advance" && (rt.To != nil) != (rt.By != nil) {
		if req, err := session.DecodeRequest(in.data); err == nil {
			return c.runSliced(c.ctx, req)
		}
	}
	return c.handle(in.data)
}

// route is what the server reads of a request before the session does.
type route struct {
	ID       int64           `json:"id"`
	Op       string          `json:"op"`
	To       *int64          `json:"to"`
	By       *int64          `json:"by"`
	Scenario json.RawMessage `json:"scenario"`
}

// handle passes a request to the session, in a running slot (slice.go).
func (c *conn) handle(data []byte) []byte {
	id := requestID(data)
	if !c.acquire(c.ctx, id) {
		return c.slotLost(id)
	}
	out := c.sess.HandleJSON(data)
	c.release()
	// A request the session could not decode gets id 0; give the page its id back if it can be
	// read, so the error reaches the request that caused it.
	if zero := []byte(`{"id":0,"type":"error"`); bytes.HasPrefix(out, zero) {
		if id != 0 {
			out = append([]byte(`{"id":`+strconv.FormatInt(id, 10)), out[len(`{"id":0`):]...)
		}
	}
	return out
}

// write sends one reply under the write timeout. A client that does not read it in time is
// disconnected (coder/websocket closes the connection when a write's context expires).
func (c *conn) write(ctx context.Context, out []byte) error {
	timeout := c.srv.cfg.WriteTimeout + time.Duration(int64(len(out))*int64(time.Second)/c.srv.cfg.MinWriteRate)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, out); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			c.log.Warn("slow reader: reply not written in time, disconnecting", "timeout", timeout, "bytes", len(out))
			return fmt.Errorf("writing a %d-byte reply: client did not read it within %v", len(out), timeout)
		}
		return err
	}
	return nil
}

// errorReply is an error reply in the session's shape.
func (c *conn) errorReply(id int64, msg string) []byte {
	r := session.Reply{ID: id, Type: "error", Error: msg, Next: -1, Events: nil}
	if eng := c.sess.Engine(); eng != nil {
		r.T, r.Next = eng.Now(), eng.NextAt()
	}
	return mustMarshalReply(r)
}

// checkSpan refuses a request that would run the engine too long (empty: fine): an advance or
// forward seek past maxAdvance, or a seek back whose replay from time 0 is over 10 × maxAdvance
// (the engine has no snapshots: going back rebuilds the run from the start).
func (c *conn) checkSpan(r route) string {
	eng := c.sess.Engine()
	if eng == nil || (r.Op != "advance" && r.Op != "seek") || (r.To != nil) == (r.By != nil) && r.Op == "advance" {
		return "" // the session names malformed requests
	}
	now, limit := eng.Now(), c.maxAdvance()
	if r.Op == "advance" {
		// An advance runs in slices under the request budget (slice.go), so its wall time is
		// bounded whatever the cluster's size: only the flag's own bound applies.
		limit = c.srv.cfg.MaxAdvanceMs
	}
	var span int64
	switch {
	case r.By != nil && r.Op == "advance":
		span = *r.By
	case r.To != nil:
		span = *r.To - now
	}
	if span > limit {
		scaled := ", scaled for its size"
		if r.Op == "advance" {
			scaled = ""
		}
		return fmt.Sprintf("%s: %d ms ahead is over this server's limit of %d ms per request for this cluster (--max-advance%s); go in steps",
			r.Op, span, limit, scaled)
	}
	if r.Op == "seek" && r.To != nil && *r.To < now && *r.To > replayFactor*limit {
		return fmt.Sprintf("seek: going back to %d ms replays the run from 0, over this server's limit of %d ms of replay for this cluster (%d × --max-advance, scaled for its size)",
			*r.To, replayFactor*limit, replayFactor)
	}
	return ""
}

// replayFactor is how much more simulated time a seek back may replay than a request may advance.
const replayFactor = 10

// load reserves the new cluster's partitions in the server-wide budget before the session builds
// it. A scenario that does not parse is left to the session to report.
func (c *conn) load(data []byte, scenario json.RawMessage) []byte {
	if len(scenario) == 0 {
		return c.handle(data)
	}
	sc, err := engine.ParseScenario(scenario)
	if err != nil {
		return c.handle(data)
	}
	n := 0
	for _, t := range sc.Topics {
		if t.Assignment != nil {
			n += len(t.Assignment)
		} else {
			n += max(t.Partitions, 0)
		}
	}
	if n > c.srv.cfg.MaxPartitions {
		return c.handle(data) // the session names its own limit
	}
	c.srv.mu.Lock()
	prev := c.partitions
	c.srv.mu.Unlock()
	if msg := c.srv.reservePartitions(c, max(n, prev)); msg != "" {
		return c.errorReply(requestID(data), msg)
	}
	hugepages.Advise(hugepages.Estimate(sc, len(scenario))) // only with HIGHWATER_HUGEPAGES=on
	out := c.handle(data)
	// Keep the old share if the load failed (the old cluster stays), else the new one.
	keep := n
	if bytes.HasPrefix(out, []byte(`{"id":`)) && bytes.Contains(out[:min(len(out), 64)], []byte(`"type":"error"`)) {
		keep = prev
	}
	if c.sess.Engine() == nil {
		keep = 0
	}
	_ = c.srv.reservePartitions(c, keep) // never more than reserved: cannot fail
	return out
}

// scaleFromPartitions is the cluster size up to which MaxAdvanceMs applies unscaled.
const scaleFromPartitions = 1000

// maxAdvance is MaxAdvanceMs scaled down for large clusters (see Config.MaxAdvanceMs).
func (c *conn) maxAdvance() int64 {
	limit := c.srv.cfg.MaxAdvanceMs
	c.srv.mu.Lock()
	n := c.partitions
	c.srv.mu.Unlock()
	if n > scaleFromPartitions {
		limit = max(min(limit, 1000), limit*scaleFromPartitions/int64(n))
	}
	return limit
}
