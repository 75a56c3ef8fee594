package server

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine/session"
)

// TestDeterminism: the same scenario and requests give byte-identical replies (events, views,
// timelines) through the server as from session.HandleJSON called directly, which is what the
// page's Web Worker runs.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	_, ts, _ := startServer(t, Config{})
	for _, name := range []string{"leader-crash-truncation.json", "follower-crash-rejoin.json", "steady-replication.json"} {
		t.Run(name, func(t *testing.T) {
			reqs := []string{
				loadReq(1, readScenario(t, name)),
				`{"id":2,"op":"advance","by":700}`,
				`{"id":3,"op":"step"}`,
				`{"id":4,"op":"apply","action":{"do":"kill","broker":2}}`,
				`{"id":5,"op":"advance","by":15000,"maxEvents":100000,"view":{"detailLimit":10,"maxMessages":50}}`,
				`{"id":6,"op":"apply","action":{"do":"restart","broker":2}}`,
				`{"id":7,"op":"advance","to":30000,"maxEvents":100000,"noView":true}`,
				`{"id":8,"op":"seek","to":1200}`,
				`{"id":9,"op":"advance","to":40000,"maxEvents":100000}`,
				`{"id":10,"op":"view","view":{"focus":[{"topic":"orders","partition":0}],"noRecords":true}}`,
				`{"id":11,"op":"export"}`,
				`{"id":12,"op":"advance","by":-1}`,
			}
			direct := session.New(session.Limits{MaxBrokers: DefaultMaxBrokers, MaxPartitions: DefaultMaxPartitions})
			c := dial(t, ctx, ts)
			events := 0
			for _, req := range reqs {
				want := direct.HandleJSON([]byte(req))
				got := call(t, ctx, c, req)
				if !bytes.Equal(got, want) {
					t.Fatalf("%.60s: server reply differs from session.HandleJSON\nserver: %.300s\ndirect: %.300s", req, got, want)
				}
				events += len(decodeReply(t, got).Events)
			}
			if events < 50 {
				t.Errorf("only %d events compared", events)
			}
		})
	}
}

// TestPlayDeterminism: flat-out play pushes exactly the replies of the same advances asked one
// by one (after the "push" field), so server pacing changes when frames come, never what they say.
func TestPlayDeterminism(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	_, ts, _ := startServer(t, Config{})
	load := loadReq(1, readScenario(t, "leader-crash-truncation.json"))
	direct := session.New(session.Limits{})
	direct.HandleJSON([]byte(load))
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, load)
	callOK(t, ctx, c, 2, `{"id":2,"op":"play","speed":0,"chunkMs":250,"maxEvents":100000,"view":{"detailLimit":5}}`)
	// Play answers at once like view does.
	direct.HandleJSON([]byte(`{"id":2,"op":"view","maxEvents":100000,"view":{"detailLimit":5}}`))
	const frames = 120 // 30 s of simulated time: crash, election, truncation
	for i := range frames {
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := direct.HandleJSON(fmt.Appendf(nil, `{"id":2,"op":"advance","by":250,"maxEvents":100000,"view":{"detailLimit":5}}`))
		want = append([]byte(`{"push":"play",`), want[1:]...)
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d differs from the advance reply\nplay:    %.300s\nadvance: %.300s", i, got, want)
		}
	}
	// Pause: frames already written (in socket buffers) still arrive, then the pause reply, then
	// nothing more.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":3,"op":"pause","noView":true}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeReply(t, raw)
		if r.ID == 3 {
			if r.Type != "reply" {
				t.Fatalf("pause: %s", raw)
			}
			break
		}
	}
	quiet, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, raw, err := c.Read(quiet); err == nil {
		t.Errorf("a frame after the pause reply: %.200s", raw)
	}
}
