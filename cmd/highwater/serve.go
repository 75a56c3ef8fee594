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

// runServe parses flags, listens, prints the URL to stdout and serves until ctx is done.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := fset.String("addr", "127.0.0.1:8080", "listen on `host:port` (port 0 picks a free port)")
	webDir := fset.String("web-dir", "", "serve the page from this `directory` instead of the embedded copy")
	var origins []string
	fset.Func("allow-origin", "also accept websocket connections from pages on this host `pattern` (path.Match, e.g. localhost:5173 or *.example.com; repeatable, comma-separated)", func(v string) error {
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				origins = append(origins, o)
			}
		}
		return nil
	})
	maxMsg := fset.Int64("max-message", server.DefaultMaxMessageBytes, "largest request in `bytes`; longer ones get an error reply (8× this closes the connection)")
	maxBrokers := fset.Int("max-brokers", server.DefaultMaxBrokers, "most brokers one session's cluster may have")
	maxPartitions := fset.Int("max-partitions", server.DefaultMaxPartitions, "most partitions one session's cluster may have")
	maxAdvance := fset.Duration("max-advance", server.DefaultMaxAdvanceMs*time.Millisecond, "most simulated time one request may move forward (the engine cannot be interrupted mid-request)")
	maxTotal := fset.Int("max-total-partitions", 0, "most partitions loaded across all sessions at once, the memory bound (default 2 × --max-partitions)")
	maxSessions := fset.Int("max-sessions", server.DefaultMaxSessions, "most websocket sessions at once")
	idle := fset.Duration("idle-timeout", server.DefaultIdleTimeout, "close a session that sends nothing for this long")
	writeTimeout := fset.Duration("write-timeout", server.DefaultWriteTimeout, "disconnect a client that takes longer than this to read one reply")
	compress := fset.Bool("compress", true, "compress websocket messages (permessage-deflate) for clients that offer it")
	logJSON := fset.Bool("log-json", false, "write logs as JSON lines instead of text")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "highwater serve: unexpected argument %q\n", fset.Arg(0))
		return errUsage
	}
	for name, v := range map[string]int64{"max-message": *maxMsg, "max-brokers": int64(*maxBrokers),
		"max-partitions": int64(*maxPartitions), "max-sessions": int64(*maxSessions),
		"idle-timeout": int64(*idle), "max-advance": int64(*maxAdvance / time.Millisecond), "write-timeout": int64(*writeTimeout)} {
		if v <= 0 {
			fmt.Fprintf(stderr, "highwater serve: --%s must be positive\n", name)
			return errUsage
		}
	}

	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if *logJSON {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h)

	static, err := pageFS(*webDir)
	if err != nil {
		return err
	}
	srv := server.New(server.Config{
		Static: static, AllowOrigins: origins, MaxMessageBytes: *maxMsg,
		MaxBrokers: *maxBrokers, MaxPartitions: *maxPartitions, MaxSessions: *maxSessions,
		MaxAdvanceMs: int64(*maxAdvance / time.Millisecond), Compress: *compress, MaxTotalPartitions: *maxTotal,
		IdleTimeout: *idle, WriteTimeout: *writeTimeout, Logger: log,
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(h, slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "highwater: serving %s (websocket %s)\n", url, "ws://"+ln.Addr().String()+"/ws")
	log.Info("serving", "url", url, "maxSessions", *maxSessions, "maxBrokers", *maxBrokers,
		"maxPartitions", *maxPartitions, "maxMessage", *maxMsg, "allowOrigins", origins)

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
	return os.DirFS(dir), nil
}

// embeddedPage is the page compiled into the binary (package web's dist/, with engine.wasm when
// `make wasm` ran before the build).
func embeddedPage() (fs.FS, error) { return web.FS(), nil }
