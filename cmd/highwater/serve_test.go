package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var urlRE = regexp.MustCompile(`serving (http://[^ ]+/) `)

// waitURL polls the printed output for the server's URL.
func waitURL(t *testing.T, out interface{ String() string }) string {
	t.Helper()
	for range 500 {
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no URL printed: %q", out.String())
	return ""
}

// TestServeShutdown runs `serve` in-process: it prints its URL, serves the page from --web-dir,
// health and a session, and on cancel (what SIGINT/SIGTERM do) closes the session with a close
// frame and returns nil.
func TestServeShutdown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<title>from disk</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--web-dir", dir}, &stdout, &stderr) }()
	url := waitURL(t, &stdout)

	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "from disk") {
		t.Errorf("GET /: %q", body)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	c, _, err := websocket.Dial(wctx, strings.Replace(url, "http", "ws", 1)+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(wctx, websocket.MessageText, []byte(`{"id":1,"op":"view"}`)); err != nil {
		t.Fatal(err)
	}
	if _, out, err := c.Read(wctx); err != nil || !bytes.Contains(out, []byte("no cluster")) {
		t.Fatalf("reply: %s %v", out, err)
	}
	closed := make(chan error, 1)
	go func() { _, _, err := c.Read(wctx); closed <- err }()

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runServe: %v\n%s", err, stderr.String())
		}
	case <-time.After(8 * time.Second):
		t.Fatalf("runServe did not return after cancel\n%s", stderr.String())
	}
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("client saw %v, want a going-away close frame", err)
	}
	t.Logf("shutdown in %v", time.Since(start))
	for _, want := range []string{"msg=serving", "msg=\"session open\"", "msg=\"shutting down\"", "msg=stopped"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, stderr.String())
		}
	}
}

func TestServeFlags(t *testing.T) {
	for _, args := range [][]string{{"--max-sessions", "0"}, {"--max-total-partitions", "-1"}, {"--max-advance", "0s"}, {"extra"}, {"--no-such-flag"}} {
		var out, errOut bytes.Buffer
		if err := runServe(context.Background(), args, &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	var out, errOut bytes.Buffer
	if err := runServe(context.Background(), []string{"--web-dir", "/nonexistent"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--web-dir") {
		t.Errorf("missing --web-dir: %v", err)
	}
}

// TestServeSIGTERM builds the binary, starts `highwater serve`, opens a session and sends
// SIGTERM: the client gets a close frame and the process exits 0 promptly.
func TestServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "highwater")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--web-dir", t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("first line: %v", err)
	}
	m := urlRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q has no URL", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(m[1], "http", "ws", 1)+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	closed := make(chan error, 1)
	go func() { _, _, err := c.Read(ctx); closed <- err }()
	time.Sleep(50 * time.Millisecond) // the session is registered
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("client saw %v, want a going-away close frame", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("exit took %v after SIGTERM", d)
	}
}

// TestServeAllowOrigin: --allow-origin takes comma-separated patterns and repeats.
func TestServeAllowOrigin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--web-dir", t.TempDir(),
			"--allow-origin", "a.example, b.example", "--allow-origin", "*.c.example"}, &stdout, &stderr)
	}()
	ws := strings.Replace(waitURL(t, &stdout), "http", "ws", 1) + "ws"
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	for origin, ok := range map[string]bool{"http://a.example": true, "http://b.example": true,
		"https://x.c.example": true, "http://d.example": false} {
		c, res, err := websocket.Dial(dctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if ok != (err == nil) {
			t.Errorf("origin %s: err %v, want accepted %v", origin, err, ok)
		}
		if err == nil {
			_ = c.Close(websocket.StatusNormalClosure, "")
		} else if res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("origin %s: %v, want 403", origin, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeEmbeddedPage: without --web-dir the page comes from the binary (package web).
func TestServeEmbeddedPage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, []string{"--addr", "127.0.0.1:0"}, &stdout, &stderr) }()
	url := waitURL(t, &stdout)
	for _, path := range []string{"", "index.html"} {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET /%s: %d, %d bytes", path, res.StatusCode, len(body))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
