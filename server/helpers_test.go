package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine/session"
)

// syncBuffer collects logs written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var testPage = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>highwater</title>")}}

// startServer runs a Server under httptest; logs go to the returned buffer.
func startServer(t testing.TB, cfg Config) (*Server, *httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	if cfg.Static == nil {
		cfg.Static = testPage
	}
	srv := New(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		ts.Close()
	})
	return srv, ts, logs
}

func wsURL(ts *httptest.Server) string { return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws" }

func dial(t testing.TB, ctx context.Context, ts *httptest.Server) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, wsURL(ts), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(-1)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// call sends one request and returns the raw reply.
func call(t testing.TB, ctx context.Context, c *websocket.Conn, req string) []byte {
	t.Helper()
	if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
		t.Fatalf("write %.80s: %v", req, err)
	}
	_, out, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read reply to %.80s: %v", req, err)
	}
	return out
}

// reply is the client's reading of a session.Reply (engine.Event's optional fields only
// marshal, so the test reads the parts it checks).
type reply struct {
	Push   string `json:"push"`
	ID     int64  `json:"id"`
	Type   string `json:"type"`
	Error  string `json:"error"`
	T      int64  `json:"t"`
	Next   int64  `json:"next"`
	Events []struct {
		T    int64  `json:"t"`
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"events"`
	Dropped int  `json:"dropped"`
	Reset   bool `json:"reset"`
	View    *struct {
		T       int64 `json:"t"`
		Brokers []struct {
			ID    int32  `json:"id"`
			State string `json:"state"`
		} `json:"brokers"`
		Partitions []json.RawMessage `json:"partitions"`
		States     string            `json:"states"`
	} `json:"view"`
	Timeline *session.Timeline `json:"timeline"`
	Expects  []struct {
		OK bool `json:"ok"`
	} `json:"expects"`
	Export *struct {
		Brokers int `json:"brokers"`
	} `json:"export"`
}

func decodeReply(t testing.TB, raw []byte) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("reply is not JSON: %v: %.200s", err, raw)
	}
	return r
}

// callOK sends a request and fails the test unless the reply is a reply (not an error) with id.
func callOK(t testing.TB, ctx context.Context, c *websocket.Conn, id int64, req string) reply {
	t.Helper()
	r := decodeReply(t, call(t, ctx, c, req))
	if r.Type != "reply" || r.ID != id {
		t.Fatalf("%s: got type %q id %d error %q, want a reply with id %d", req, r.Type, r.ID, r.Error, id)
	}
	return r
}

func readScenario(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("../scenarios/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func loadReq(id int64, scenario string) string {
	return fmt.Sprintf(`{"id":%d,"op":"load","scenario":%s}`, id, scenario)
}

// bigScenario is a cluster with the given brokers and partitions (one topic, RF 3).
func bigScenario(brokers, partitions int) string {
	return fmt.Sprintf(`{"name":"big","seed":7,"brokers":%d,"topics":[{"name":"t","partitions":%d,"replicationFactor":3}],"steps":[]}`, brokers, partitions)
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
