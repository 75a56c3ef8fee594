package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/highwater-sim/highwater/server"
	"github.com/highwater-sim/highwater/web"
	"github.com/highwater-sim/highwater/web/page"
)

// serve is `highwater serve`: the page at /, the native engine at /ws, health at /healthz.
// SIGINT or SIGTERM shuts it down gracefully: every session gets a close frame.
func serve(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := runServe(ctx, args, os.Stdout, os.Stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(os.Stderr, "highwater serve:", err)
	return 1
}

var errUsage = errors.New("usage")

// shutdownGrace bounds how long sessions get to close after a signal.
const shutdownGrace = 10 * time.Second

// serveOptions is what the flags say.
type serveOptions struct {
	addr, webDir string
	logJSON      bool
	cfg          server.Config // Static and Logger are set by runServe
}

// parseServeFlags reads `serve`'s flags. Errors are printed to stderr and returned as errUsage
// (or flag.ErrHelp for -h).
func parseServeFlags(args []string, stderr io.Writer) (serveOptions, error) {
	var o serveOptions
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen on `host:port` (port 0 picks a free port)")
	fset.StringVar(&o.webDir, "web-dir", "", "serve the page from this `directory` instead of the embedded copy")
	fset.Func("allow-origin", "also accept websocket connections from pages on this host `pattern` (path.Match, e.g. localhost:5173 or *.example.com; repeatable, comma-separated)", func(v string) error {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				o.cfg.AllowOrigins = append(o.cfg.AllowOrigins, p)
			}
		}
		return nil
	})
	c := &o.cfg
	fset.Int64Var(&c.MaxMessageBytes, "max-message", server.DefaultMaxMessageBytes, "largest request in `bytes`; longer ones get an error reply (8× this closes the connection)")
	fset.IntVar(&c.MaxBrokers, "max-brokers", server.DefaultMaxBrokers, "most brokers one session's cluster may have")
	fset.IntVar(&c.MaxPartitions, "max-partitions", server.DefaultMaxPartitions, "most partitions one session's cluster may have")
	fset.IntVar(&c.MaxTotalPartitions, "max-total-partitions", 0, "most partitions loaded across all sessions at once, the memory bound (default 2 × --max-partitions)")
	maxAdvance := fset.Duration("max-advance", server.DefaultMaxAdvanceMs*time.Millisecond, "most simulated time one request may move forward, scaled down above 1,000 partitions (the engine cannot be interrupted mid-request)")
	fset.IntVar(&c.MaxSessions, "max-sessions", server.DefaultMaxSessions, "most websocket sessions at once")
	fset.IntVar(&c.MaxRunning, "max-running", 0, "most sessions running the engine at once; the others wait their turn (default: the number of cores)")
	fset.DurationVar(&c.RequestBudget, "request-budget", 2*time.Second, "wall time after which an advance stops where it got to and says so (it runs in slices)")
	fset.DurationVar(&c.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close a session that sends nothing for this long")
	fset.DurationVar(&c.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "disconnect a client that takes longer than this (plus 1 s per MiB) to read one reply")
	fset.BoolVar(&c.Compress, "compress", true, "compress websocket messages (permessage-deflate) for clients that offer it")
	fset.BoolVar(&o.logJSON, "log-json", false, "write logs as JSON lines instead of text")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, errUsage
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "highwater serve: unexpected argument %q\n", fset.Arg(0))
		return o, errUsage
	}
	c.MaxAdvanceMs = int64(*maxAdvance / time.Millisecond)
	for _, f := range []struct {
		name string
		v    int64
	}{{"max-message", c.MaxMessageBytes}, {"max-brokers", int64(c.MaxBrokers)}, {"max-partitions", int64(c.MaxPartitions)},
		{"max-advance", c.MaxAdvanceMs},
		{"max-sessions", int64(c.MaxSessions)}, {"idle-timeout", int64(c.IdleTimeout)}, {"write-timeout", int64(c.WriteTimeout)},
		{"request-budget", int64(c.RequestBudget)}} {
		if f.v <= 0 {
			fmt.Fprintf(stderr, "highwater serve: --%s must be positive\n", f.name)
			return o, errUsage
		}
	}
	if c.MaxRunning < 0 {
		fmt.Fprintln(stderr, "highwater serve: --max-running must be positive (or 0 for the number of cores)")
		return o, errUsage
	}
	if c.MaxTotalPartitions < 0 {
		fmt.Fprintln(stderr, "highwater serve: --max-total-partitions must be positive (or 0 for the default)")
		return o, errUsage
	}
	return o, nil
}

// runServe parses flags, listens, prints the URL to stdout and serves until ctx is done.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if o.logJSON {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h)
	if o.cfg.Static, err = pageFS(o.webDir); err != nil {
		return err
	}
	if _, err := fs.Stat(o.cfg.Static, "engine.wasm"); err != nil {
		log.Info("no in-page engine in this build (make build or make run carry one): the page runs on the native engine")
	}
	o.cfg.Logger = log
	srv := server.New(o.cfg)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(h, slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "highwater: serving %s (websocket %s)\n", url, "ws://"+ln.Addr().String()+"/ws")
	cfg := srv.Config()
	log.Info("serving", "url", url, "maxSessions", cfg.MaxSessions, "maxBrokers", cfg.MaxBrokers,
		"maxPartitions", cfg.MaxPartitions, "maxTotalPartitions", cfg.MaxTotalPartitions,
		"maxMessage", cfg.MaxMessageBytes, "maxAdvanceMs", cfg.MaxAdvanceMs, "compress", cfg.Compress,
		"allowOrigins", cfg.AllowOrigins)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx) // websocket sessions: net/http does not track hijacked connections
	if herr := hs.Shutdown(sctx); err == nil {
		err = herr
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// pageFS is the page's files: the directory given, else the copy embedded in the binary.
func pageFS(dir string) (fs.FS, error) {
	if dir == "" {
		return embeddedPage()
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--web-dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--web-dir: %s is not a directory", dir)
	}
	return page.New(os.DirFS(dir)) // with the presets from the binary under scenarios/
}

// embeddedPage is the page compiled into the binary (package web's dist/ with the presets; with
// engine.wasm, its .br and .gz and wasm_exec.js when `make wasm` ran before the build).
func embeddedPage() (fs.FS, error) { return web.FS(), nil }
