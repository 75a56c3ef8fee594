// Package server is Highwater's native backend: it serves the page and a websocket endpoint where
// each connection is one protocol session (engine/session) owning one native engine. The page
// speaks the same request/reply JSON to it as to its in-page Web Worker, so the same scenario and
// requests give byte-identical replies on either (TestDeterminism).
//
// Shape (after coder/websocket's chat example): a Server owns its ServeMux and logger; per
// connection one goroutine owns the Session (the engine is not goroutine-safe) and a reader
// goroutine feeds it requests through an unbuffered channel. Replies are answers, so at most one
// is unsent at a time; while it is unsent the reader holds at most one further request and reads
// nothing else, so a slow reader costs bounded memory (TestSlowReaderMemoryBound). Wall-clock
// time exists only here: write and idle timeouts, and the optional server-paced play mode
// (play.go). docs/server.md lists the flags and what was measured.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine/session"
	"github.com/highwater-sim/highwater/web/page"
)

// Config holds the server's tunables. Zero values take the documented defaults.
type Config struct {
	// Static is served at "/" (the page), compressed when the client accepts it (static.go).
	// Nil serves a short note instead.
	Static fs.FS
	// AllowOrigins are extra host patterns (path.Match, as websocket.AcceptOptions.OriginPatterns)
	// whose pages may open /ws. Same-origin connections are always allowed; others are refused.
	AllowOrigins []string
	// MaxMessageBytes bounds one request. A longer one is read off the wire without being kept
	// and answered with an error reply; the session goes on. Default 1 MiB.
	MaxMessageBytes int64
	// HardMessageBytes is where reading a too-long message stops: coder/websocket then closes the
	// connection with StatusMessageTooBig. Default 8 × MaxMessageBytes.
	HardMessageBytes int64
	// MaxBrokers and MaxPartitions bound the cluster one session may load. Defaults 1,000 and
	// 1,000,000 (the scenario format's own limits).
	MaxBrokers    int
	MaxPartitions int
	// MaxTotalPartitions bounds the partitions loaded across all sessions at once: memory grows
	// with them (about 2 KiB per partition with replication factor 3 at a million partitions,
	// measured). A load past it gets an error reply. Default 2 × MaxPartitions.
	MaxTotalPartitions int
	// MaxAdvanceMs bounds the simulated time one request may move forward (advance, a forward
	// seek, a play frame). The engine cannot be interrupted mid-run and buffers the events of a
	// run until the reply, so this bounds a request's CPU time and memory. Engine work grows
	// with partitions, so for clusters over 1,000 partitions the bound shrinks in proportion
	// (10 min at 1,000 partitions, 1 min at 10,000, 3 s at 200,000), never below 1 s: about the
	// same wall time per request at any size. Default 10 minutes.
	MaxAdvanceMs int64
	// MaxSessions bounds websocket sessions at once; more are closed with StatusTryAgainLater.
	// Default 64.
	MaxSessions int
	// IdleTimeout closes a session that sends no request (and is not playing) for this long.
	// Default 15 minutes.
	IdleTimeout time.Duration
	// WriteTimeout bounds writing one reply, plus one second per MinWriteRate bytes of it (a
	// 78 MB overview must not be cut off on a slow link); a client that reads slower is
	// disconnected. Defaults 10 s and 1 MiB/s.
	WriteTimeout time.Duration
	MinWriteRate int64
	// StuckAfter is how long a request may run before the client is told the engine seems stuck
	// and its connection is closed (1011). Default 2 minutes; requests are bounded by
	// MaxAdvanceMs to about 10 s of wall time.
	StuckAfter time.Duration
	// Compress negotiates permessage-deflate (no context takeover) with clients that offer it, as
	// browsers other than Safari do. Replies are repetitive JSON and shrink about 10×; the cost is
	// server CPU per reply.
	Compress bool
	// MaxRunning bounds the sessions whose requests run the engine at once; the others wait,
	// and are told so (a "queued" notice). Default: the number of cores (GOMAXPROCS).
	MaxRunning int
	// RequestBudget bounds the wall time of one advance: it runs in slices and, past the budget,
	// stops where it got to and says so ("partial"). Default 2 s.
	RequestBudget time.Duration
	// Logger gets structured logs. Default slog.Default().
	Logger *slog.Logger
}

// Defaults for Config's zero values.
const (
	DefaultMaxMessageBytes = 1 << 20
	DefaultMaxBrokers      = 1000
	DefaultMaxPartitions   = 1_000_000
	DefaultMaxSessions     = 64
	DefaultMaxAdvanceMs    = 10 * 60 * 1000
	DefaultIdleTimeout     = 15 * time.Minute
	DefaultWriteTimeout    = 10 * time.Second
)

func (c *Config) fill() {
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.HardMessageBytes <= 0 {
		c.HardMessageBytes = 8 * c.MaxMessageBytes
	}
	c.HardMessageBytes = max(c.HardMessageBytes, c.MaxMessageBytes)
	if c.MaxBrokers <= 0 {
		c.MaxBrokers = DefaultMaxBrokers
	}
	if c.MaxPartitions <= 0 {
		c.MaxPartitions = DefaultMaxPartitions
	}
	if c.MaxTotalPartitions <= 0 {
		c.MaxTotalPartitions = 2 * c.MaxPartitions
	}
	if c.MaxAdvanceMs <= 0 {
		c.MaxAdvanceMs = DefaultMaxAdvanceMs
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.StuckAfter <= 0 {
		c.StuckAfter = 2 * time.Minute
	}
	if c.MinWriteRate <= 0 {
		c.MinWriteRate = 1 << 20
	}
	if c.MaxRunning <= 0 {
		c.MaxRunning = runtime.GOMAXPROCS(0)
	}
	if c.RequestBudget <= 0 {
		c.RequestBudget = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Server serves the page, /ws and /healthz. It is an http.Handler; the caller owns the listener
// and http.Server, and calls Shutdown before http.Server.Shutdown (hijacked websocket connections
// are not tracked by net/http).
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	mu    sync.Mutex
	conns map[*conn]struct{} // guarded by mu
	// partitions is the sum of the conns' partitions (loaded or being loaded); guarded by mu.
	partitions int
	closing    bool           // guarded by mu; set by Shutdown
	shutdown   chan struct{}  // closed by Shutdown: sessions send a close frame and end
	wg         sync.WaitGroup // one per running session

	nextID atomic.Uint64
	// answerHook, when set by a test, runs before each request is answered.
	answerHook func(req []byte)
	// unanswered counts requests read off the wire but not yet answered, across sessions;
	// maxUnanswered is its high-water mark (the slow-reader test reads it).
	unanswered    atomic.Int64
	maxUnanswered atomic.Int64
	// slots holds one token per request running the engine (Config.MaxRunning); queued counts
	// requests that had to wait for one.
	slots  chan struct{}
	queued atomic.Int64
}

// noteQueued counts a request that waited for a running slot.
func (s *Server) noteQueued() { s.queued.Add(1) }

// Queued returns how many requests so far waited for a running slot.
func (s *Server) Queued() int64 { return s.queued.Load() }

// New returns a server with cfg's defaults filled in.
func New(cfg Config) *Server {
	cfg.fill()
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(),
		conns: map[*conn]struct{}{}, shutdown: make(chan struct{}), slots: make(chan struct{}, cfg.MaxRunning)}
	s.mux.HandleFunc("/ws", s.handleWS)
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /config.json", s.handleConfig)
	if cfg.Static != nil {
		s.mux.Handle("/", newStatic(cfg.Static))
	} else {
		s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "highwater: no page assets (build the web package, or pass --web-dir)", http.StatusNotFound)
		})
	}
	return s
}

// Config returns the configuration in effect (defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Sessions returns the number of websocket sessions open now.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown sends every session a close frame (StatusGoingAway) and waits for them to end, or for
// ctx. Sessions busy in the engine answer their current request first. New sessions are refused.
// It is safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.shutdown)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// Past the deadline: drop what is left without a handshake.
		s.mu.Lock()
		for c := range s.conns {
			_ = c.ws.CloseNow()
		}
		s.mu.Unlock()
		return fmt.Errorf("server shutdown: %d sessions did not close in time: %w", s.Sessions(), ctx.Err())
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closing, n, parts := s.closing, len(s.conns), s.partitions
	s.mu.Unlock()
	status, code := "ok", http.StatusOK
	if closing {
		status, code = "shutting down", http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "sessions": n, "maxSessions": s.cfg.MaxSessions,
		"partitions": parts, "maxTotalPartitions": s.cfg.MaxTotalPartitions})
}

// handleConfig answers the page's config.json (page.Config): a server is here, so the page may
// use /ws, and whether the page's files include the in-page engine. A binary built without
// `make wasm` (go install) has none: the page then runs on the native engine by itself. This
// route wins over a config.json among the static files (the static build's says "no server").
func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	inPage := false
	if s.cfg.Static != nil {
		_, werr := fs.Stat(s.cfg.Static, "engine.wasm")
		_, jerr := fs.Stat(s.cfg.Static, "wasm_exec.js")
		inPage = werr == nil && jerr == nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(page.Config{Server: true, InPageEngine: inPage})
}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	opts := &websocket.AcceptOptions{OriginPatterns: s.cfg.AllowOrigins}
	if s.cfg.Compress {
		opts.CompressionMode = websocket.CompressionNoContextTakeover
	}
	ws, err := websocket.Accept(w, r, opts)
	if err != nil {
		// Accept has already answered (403 for a foreign origin, 400 for a bad handshake).
		s.log.Warn("websocket refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	id := s.nextID.Add(1)
	log := s.log.With("session", id, "remote", r.RemoteAddr)
	c := &conn{srv: s, ws: ws, log: log, sess: session.New(session.Limits{MaxBrokers: s.cfg.MaxBrokers, MaxPartitions: s.cfg.MaxPartitions}),
		notices: r.URL.Query().Get("notices") == "1"}
	if reason := s.admit(c); reason != "" {
		log.Warn("session refused", "reason", reason)
		_ = ws.Close(websocket.StatusTryAgainLater, reason)
		return
	}
	defer s.release(c)
	start := time.Now()
	log.Info("session open", "sessions", s.Sessions())
	err = c.run(r.Context())
	attrs := []any{"requests", c.requests, "duration", time.Since(start).Round(time.Millisecond)}
	switch {
	case err == nil, errors.Is(err, context.Canceled),
		websocket.CloseStatus(err) == websocket.StatusNormalClosure,
		websocket.CloseStatus(err) == websocket.StatusGoingAway:
		log.Info("session closed", attrs...)
	default:
		log.Warn("session ended", append(attrs, "err", err)...)
	}
}

// admit registers c, or says why it cannot be (the close reason; at most 123 bytes).
func (s *Server) admit(c *conn) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return "server shutting down"
	case len(s.conns) >= s.cfg.MaxSessions:
		return fmt.Sprintf("server full: %d sessions at once (--max-sessions); try again later", s.cfg.MaxSessions)
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return ""
}

func (s *Server) release(c *conn) {
	s.mu.Lock()
	s.partitions -= c.partitions
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// noteRead and noteAnswered keep the unanswered-request gauge.
func (s *Server) noteRead() {
	n := s.unanswered.Add(1)
	for {
		m := s.maxUnanswered.Load()
		if n <= m || s.maxUnanswered.CompareAndSwap(m, n) {
			return
		}
	}
}

func (s *Server) noteAnswered() { s.unanswered.Add(-1) }

// reservePartitions makes c's share of the partition budget n (its cluster being replaced), or
// says why not. The previous share is returned by the caller on a failed load (see conn.load).
func (s *Server) reservePartitions(c *conn, n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	others := s.partitions - c.partitions
	if others+n > s.cfg.MaxTotalPartitions {
		return fmt.Sprintf("server busy: sessions hold %d partitions and this load adds %d, over the server's limit of %d (--max-total-partitions); try a smaller cluster or later",
			others, n, s.cfg.MaxTotalPartitions)
	}
	s.partitions = others + n
	c.partitions = n
	return ""
}

// TotalPartitions returns the partitions loaded across sessions.
func (s *Server) TotalPartitions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.partitions
}
