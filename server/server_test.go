package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	_, ts, _ := startServer(t, Config{})
	ctx := testCtx(t, 20*time.Second)
	c := dial(t, ctx, ts)

	r := callOK(t, ctx, c, 1, loadReq(1, readScenario(t, "leader-crash-truncation.json")))
	if !r.Reset || r.T != 0 || r.View == nil || len(r.View.Brokers) != 3 || r.Timeline == nil {
		t.Fatalf("load: reset %v t %d view %v timeline %v", r.Reset, r.T, r.View != nil, r.Timeline)
	}
	r = callOK(t, ctx, c, 2, `{"id":2,"op":"advance","by":500,"noView":true}`)
	if r.T != 500 || r.View != nil || len(r.Events) == 0 {
		t.Fatalf("advance: t %d view %v events %d", r.T, r.View != nil, len(r.Events))
	}
	r = callOK(t, ctx, c, 3, `{"id":3,"op":"apply","action":{"do":"kill","broker":2}}`)
	if !hasEvent(r, "broker-down") {
		t.Fatalf("kill: no broker-down event in %d events", len(r.Events))
	}
	r = callOK(t, ctx, c, 4, `{"id":4,"op":"advance","by":20000,"maxEvents":20}`)
	if r.T != 20500 || len(r.Events) > 20 || r.Dropped == 0 {
		t.Fatalf("advance: t %d events %d dropped %d", r.T, len(r.Events), r.Dropped)
	}
	r = callOK(t, ctx, c, 5, `{"id":5,"op":"view","view":{"focus":[{"topic":"orders","partition":0}]}}`)
	if r.View == nil || r.View.Brokers[2].State == "up" || len(r.View.Partitions) != 1 {
		t.Fatalf("view after kill: %+v", r.View)
	}
	r = callOK(t, ctx, c, 6, `{"id":6,"op":"export"}`)
	if r.Export == nil || r.Export.Brokers != 3 {
		t.Fatalf("export: %+v", r.Export)
	}
	// The page is served at / and health at /healthz.
	for path, want := range map[string]string{"/": "<title>highwater", "/healthz": `"status":"ok"`} {
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %q, want 200 with %q", path, res.StatusCode, body, want)
		}
	}
}

func hasEvent(r reply, typ string) bool {
	for _, e := range r.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestErrorReplies(t *testing.T) {
	t.Parallel()
	_, ts, _ := startServer(t, Config{MaxMessageBytes: 64 << 10})
	ctx := testCtx(t, 20*time.Second)
	c := dial(t, ctx, ts)

	before := []struct{ req, want string }{
		{`{"id":1,"op":"advance","by":10}`, "no cluster: load a scenario first"},
		{`{"id":2,"op":"play"}`, "no cluster: load a scenario first"},
	}
	for _, tc := range before {
		expectError(t, ctx, c, tc.req, tc.want)
	}
	callOK(t, ctx, c, 3, loadReq(3, readScenario(t, "steady-replication.json")))
	cases := []struct {
		req  string
		id   int64
		want string
	}{
		{`{"id":10,"op":`, 10, "bad request: unexpected end of JSON input"},
		{`not json at all`, 0, "bad request: invalid character"},
		{`{"id":11,"op":"explode"}`, 11, `op: unknown op "explode"`},
		{`{"id":12}`, 12, "op: required"},
		{`{"id":13,"op":"apply","action":{"do":"kill","broker":99}}`, 13, "broker"},
		{`{"id":14,"op":"apply","action":{"do":"produce","topic":"orders","partition":7,"count":1}}`, 14, "partition"},
		{`{"id":15,"op":"view","colour":"red"}`, 15, "colour: unknown field"},
		{`{"id":16,"op":"advance","by":-5}`, 16, "by: -5 is negative"},
		{`{"id":17,"op":"seek"}`, 17, "to: a time ≥ 0 is required"},
		{`{"id":18,"op":"play","speed":-1}`, 18, "speed: -1 is not in"},
		{`{"id":19,"op":"play","tempo":3}`, 19, `unknown field "tempo"`},
		{`{"id":20,"op":"load","scenario":{"brokers":0}}`, 20, "scenario"},
	}
	for _, tc := range cases {
		r := expectError(t, ctx, c, tc.req, tc.want)
		if r.ID != tc.id {
			t.Errorf("%s: id %d, want %d", tc.req, r.ID, tc.id)
		}
	}
	// A binary message is refused by name.
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"id":21,"op":"view"}`)); err != nil {
		t.Fatal(err)
	}
	_, raw, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeReply(t, raw); r.Type != "error" || r.ID != 21 || !strings.Contains(r.Error, "binary message") {
		t.Errorf("binary: %s", raw)
	}
	// The session went on through all of that.
	r := callOK(t, ctx, c, 22, `{"id":22,"op":"advance","to":1000}`)
	if r.T != 1000 || r.View == nil {
		t.Fatalf("after errors: t %d view %v", r.T, r.View != nil)
	}
}

// expectError sends req and checks for an error reply containing want.
func expectError(t *testing.T, ctx context.Context, c *websocket.Conn, req, want string) reply {
	t.Helper()
	raw := call(t, ctx, c, req)
	r := decodeReply(t, raw)
	if r.Type != "error" || !strings.Contains(r.Error, want) {
		t.Errorf("%s: got %.300s, want an error containing %q", req, raw, want)
	}
	return r
}

func TestLimits(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	srv, ts, _ := startServer(t, Config{MaxBrokers: 5, MaxPartitions: 100, MaxMessageBytes: 4096, MaxSessions: 2})

	t.Run("cluster size", func(t *testing.T) {
		c := dial(t, ctx, ts)
		expectError(t, ctx, c, loadReq(1, bigScenario(6, 10)), "scenario.brokers: 6 is over this session's limit of 5")
		expectError(t, ctx, c, loadReq(2, bigScenario(5, 101)), "101 partitions is over this session's limit of 100")
		callOK(t, ctx, c, 3, loadReq(3, bigScenario(5, 100)))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
	t.Run("message size", func(t *testing.T) {
		c := dial(t, ctx, ts)
		pad := strings.Repeat(" ", 5000)
		r := expectError(t, ctx, c, `{"id":7,"op":"view"`+pad+`}`, "message too big: 5020 bytes; the limit is 4096 (--max-message)")
		if r.ID != 7 {
			t.Errorf("oversized: id %d, want 7 (read from the message's start)", r.ID)
		}
		callOK(t, ctx, c, 8, loadReq(8, bigScenario(3, 1))) // the session goes on
		// Past 8× the limit the connection closes with a reason.
		huge := `{"id":9,"op":"view"` + strings.Repeat(" ", 8*4096) + `}`
		if err := c.Write(ctx, websocket.MessageText, []byte(huge)); err != nil {
			t.Fatal(err)
		}
		_, _, err := c.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusMessageTooBig || !strings.Contains(ce.Reason, "request over 32768 bytes") {
			t.Fatalf("huge message: %v, want close %v with a reason", err, websocket.StatusMessageTooBig)
		}
	})
	t.Run("sessions at once", func(t *testing.T) {
		waitSessions(t, srv, 0)
		a, b := dial(t, ctx, ts), dial(t, ctx, ts)
		callOK(t, ctx, a, 1, loadReq(1, bigScenario(3, 1)))
		callOK(t, ctx, b, 1, loadReq(1, bigScenario(3, 1)))
		c := dial(t, ctx, ts)
		_, _, err := c.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusTryAgainLater || !strings.Contains(ce.Reason, "server full: 2 sessions") {
			t.Fatalf("third session: %v, want close %v (server full)", err, websocket.StatusTryAgainLater)
		}
		_ = a.Close(websocket.StatusNormalClosure, "")
		waitSessions(t, srv, 1)
		d := dial(t, ctx, ts) // room again
		callOK(t, ctx, d, 1, loadReq(1, bigScenario(3, 1)))
	})
}

func TestTotalPartitions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	srv, ts, _ := startServer(t, Config{MaxPartitions: 100, MaxTotalPartitions: 150})
	a, b := dial(t, ctx, ts), dial(t, ctx, ts)
	callOK(t, ctx, a, 1, loadReq(1, bigScenario(3, 100)))
	callOK(t, ctx, a, 2, loadReq(2, bigScenario(3, 100))) // replacing its own cluster is fine
	r := expectError(t, ctx, b, loadReq(3, bigScenario(3, 100)), "server busy: sessions hold 100 partitions and this load adds 100, over the server's limit of 150")
	if r.ID != 3 {
		t.Errorf("busy: id %d", r.ID)
	}
	expectError(t, ctx, b, `{"id":4,"op":"lo\u0061d","scenario":`+bigScenario(3, 100)+`}`, "server busy")
	callOK(t, ctx, b, 4, loadReq(4, bigScenario(3, 50)))
	expectError(t, ctx, b, loadReq(5, bigScenario(3, 1000)), "over this session's limit of 100") // a failed load keeps the old share
	if n := srv.TotalPartitions(); n != 150 {
		t.Errorf("total partitions %d, want 150", n)
	}
	_ = a.Close(websocket.StatusNormalClosure, "")
	waitSessions(t, srv, 1)
	callOK(t, ctx, b, 6, loadReq(6, bigScenario(3, 100)))
	if n := srv.TotalPartitions(); n != 100 {
		t.Errorf("total partitions %d, want 100", n)
	}
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	_, ts, _ := startServer(t, Config{IdleTimeout: 300 * time.Millisecond})
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, loadReq(1, bigScenario(3, 1)))
	start := time.Now()
	_, _, err := c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "idle for 300ms") {
		t.Fatalf("idle: %v, want close going-away naming the idle timeout", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("idle close after %v, want about 300ms", d)
	}
}

func TestOriginCheck(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	_, ts, _ := startServer(t, Config{AllowOrigins: []string{"trusted.example", "localhost:*"}})
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},     // not a browser
		{ts.URL, true}, // same origin
		{"http://trusted.example", true},
		{"http://localhost:5173", true},
		{"http://evil.example", false},
		{"https://trusted.example.evil.example", false},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, res, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPHeader: h})
		if tc.ok {
			if err != nil {
				t.Errorf("origin %q: refused (%v), want accepted", tc.origin, err)
				continue
			}
			_ = c.Close(websocket.StatusNormalClosure, "")
			continue
		}
		if err == nil {
			_ = c.CloseNow()
			t.Errorf("origin %q: accepted, want refused", tc.origin)
			continue
		}
		if res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: %v, want HTTP 403", tc.origin, err)
		}
	}
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 20*time.Second)
	srv, ts, logs := startServer(t, Config{})
	var conns []*websocket.Conn
	for i := range 3 {
		c := dial(t, ctx, ts)
		callOK(t, ctx, c, 1, loadReq(1, readScenario(t, "steady-replication.json")))
		if i == 0 { // one session is playing: frames in flight when the close comes
			callOK(t, ctx, c, 2, `{"id":2,"op":"play","speed":0,"chunkMs":10,"noView":true}`)
		}
		conns = append(conns, c)
	}
	waitSessions(t, srv, 3)
	// Clients read as a browser does, so they answer the close frame.
	closes := make([]chan error, len(conns))
	for i, c := range conns {
		closes[i] = make(chan error, 1)
		go func() {
			var err error
			for err == nil { // the playing session has frames before the close
				_, _, err = c.Read(ctx)
			}
			closes[i] <- err
		}()
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	for i := range conns {
		err := <-closes[i]
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "server shutting down" {
			t.Errorf("session %d: %v, want a going-away close frame", i, err)
		}
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("%d sessions left after shutdown", n)
	}
	res, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	_ = json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || h["status"] != "shutting down" {
		t.Errorf("healthz after shutdown: %d %v", res.StatusCode, h)
	}
	// New sessions are refused with a reason.
	c := dial(t, ctx, ts)
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("session after shutdown: %v", err)
	}
	if !strings.Contains(logs.String(), "session closed") {
		t.Errorf("logs lack session closed:\n%s", logs)
	}
}

// waitSessions waits until the server counts n sessions (closing is asynchronous).
func waitSessions(t testing.TB, srv *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Sessions() != n {
		if time.Now().After(deadline) {
			t.Fatalf("sessions: %d, want %d", srv.Sessions(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAdvanceLimit(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	_, ts, _ := startServer(t, Config{MaxAdvanceMs: 60_000})
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, loadReq(1, bigScenario(3, 1)))
	expectError(t, ctx, c, `{"id":2,"op":"advance","by":60001}`, "advance: 60001 ms ahead is over this server's limit of 60000 ms")
	expectError(t, ctx, c, `{"id":3,"op":"advance","by":9223372036854775807}`, "over this server's limit")
	expectError(t, ctx, c, `{"id":4,"op":"seek","to":60001}`, "seek: 60001 ms ahead")
	callOK(t, ctx, c, 5, `{"id":5,"op":"advance","by":60000,"noView":true}`)
	callOK(t, ctx, c, 6, `{"id":6,"op":"seek","to":120000,"noView":true}`)
	callOK(t, ctx, c, 7, `{"id":7,"op":"seek","to":0,"noView":true}`) // back: replays what was reached
	// A cluster of 3,000 partitions gets a third of the span for a seek (it replays unsliced);
	// an advance runs in slices under the request budget, so it keeps the whole span.
	callOK(t, ctx, c, 8, loadReq(8, bigScenario(3, 3000)))
	expectError(t, ctx, c, `{"id":9,"op":"seek","to":20001}`, "limit of 20000 ms per request for this cluster")
	expectError(t, ctx, c, `{"id":9,"op":"advance","to":60001}`, "limit of 60000 ms per request for this cluster")
	expectError(t, ctx, c, `{"id":10,"op":"play","speed":0,"chunkMs":20001}`, "chunkMs: 20001 is over this server's limit of 20000")
	callOK(t, ctx, c, 11, `{"id":11,"op":"advance","to":20000,"noView":true}`)

	// Every spelling the session's decoder accepts is checked: escapes, duplicate keys (the last
	// wins), any case.
	for _, req := range []string{
		`{"id":12,"op":"adv\u0061nce","by":60001}`,
		`{"id":12,"op":"view","op":"advance","by":60001}`,
		`{"id":12,"OP":"advance","By":60001}`,
	} {
		if r := expectError(t, ctx, c, req, "over this server's limit"); r.ID != 12 {
			t.Errorf("%s: id %d", req, r.ID)
		}
	}
	// A seek back replays from 0: at most 10 × the span.
	callOK(t, ctx, c, 13, loadReq(13, bigScenario(3, 1)))
	for i := range 12 {
		callOK(t, ctx, c, int64(20+i), fmt.Sprintf(`{"id":%d,"op":"advance","by":60000,"noView":true}`, 20+i))
	}
	expectError(t, ctx, c, `{"id":40,"op":"seek","to":600001}`, "seek: going back to 600001 ms replays the run from 0, over this server's limit of 600000 ms")
	callOK(t, ctx, c, 41, `{"id":41,"op":"seek","to":600000,"noView":true}`)
}

// TestStuckRequest: a request that runs past StuckAfter closes the connection with 1011 and a
// reason instead of leaving the client waiting (the hook stands in for an engine livelock).
func TestStuckRequest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 20*time.Second)
	srv, ts, logs := startServer(t, Config{StuckAfter: 200 * time.Millisecond})
	srv.answerHook = func(req []byte) {
		if strings.Contains(string(req), `"stall"`) {
			time.Sleep(time.Second)
		}
	}
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, loadReq(1, bigScenario(3, 1)))
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":2,"op":"view","stall":1}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusInternalError || !strings.Contains(ce.Reason, "request ran over 200ms: engine stuck?") {
		t.Fatalf("stuck request: %v, want close 1011 with a reason", err)
	}
	waitSessions(t, srv, 0) // the session ends once the request returns
	if !strings.Contains(logs.String(), "engine stuck?") || !strings.Contains(logs.String(), "op=view") {
		t.Errorf("logs:\n%s", logs)
	}
}
