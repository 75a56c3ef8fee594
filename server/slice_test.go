package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/highwater-sim/highwater/engine/session"
)

// bigScenario is a cluster whose minute takes a good part of a second to simulate: enough slices
// for the tests below, small enough for make test.
func slicedScenario(brokers, partitions int) string {
	return fmt.Sprintf(`{"name":"big","brokers":%d,"topics":[{"name":"t","partitions":%d,"replicationFactor":3}],"config":{"replica.fetch.wait.max.ms":20}}`, brokers, partitions)
}

// TestSlicedAdvanceSameAsOne: an advance the server runs in slices answers byte for byte what one
// advance in the session answers: the same events, view and timeline.
func TestSlicedAdvanceSameAsOne(t *testing.T) {
	_, ts, _ := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := dial(t, ctx, ts)
	sc := readScenario(t, "leader-crash-truncation.json")
	load := `{"id":1,"op":"load","scenario":` + sc + `}`
	adv := `{"id":2,"op":"advance","by":30000,"maxEvents":100000,"view":{"delta":true}}`
	callOK(t, ctx, c, 1, load)
	got := call(t, ctx, c, adv)

	direct := session.New(session.Limits{})
	direct.HandleJSON([]byte(load))
	want := direct.HandleJSON([]byte(adv))
	if !bytes.Equal(got, want) {
		t.Fatalf("sliced advance differs from one advance:\nserver: %.300s\nsession: %.300s", got, want)
	}
}

// TestAdvanceStopsAtBudget: past Config.RequestBudget an advance replies where it got to, with
// "partial" naming the time asked for; asking again goes on, and the run ends where one
// unbounded advance would (the same view).
func TestAdvanceStopsAtBudget(t *testing.T) {
	_, ts, _ := startServer(t, Config{RequestBudget: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := dial(t, ctx, ts)
	load := `{"id":1,"op":"load","scenario":` + slicedScenario(12, 600) + `,"noView":true}`
	callOK(t, ctx, c, 1, load)
	var partial struct {
		T       int64 `json:"t"`
		Partial *struct {
			Target int64 `json:"target"`
		} `json:"partial"`
	}
	rounds := 0
	for id := int64(2); ; id++ {
		raw := call(t, ctx, c, fmt.Sprintf(`{"id":%d,"op":"advance","to":20000,"noView":true}`, id))
		partial.Partial = nil
		if err := json.Unmarshal(raw, &partial); err != nil {
			t.Fatal(err)
		}
		rounds++
		if partial.Partial == nil {
			break
		}
		if partial.Partial.Target != 20000 || partial.T >= 20000 {
			t.Fatalf("partial reply at t=%d for target %d", partial.T, partial.Partial.Target)
		}
	}
	if partial.T != 20000 || rounds < 2 {
		t.Fatalf("reached %d in %d requests; want 20000, in more than one (a 1 ms budget)", partial.T, rounds)
	}
	got := decodeReply(t, call(t, ctx, c, `{"id":99,"op":"view"}`))

	direct := session.New(session.Limits{})
	direct.HandleJSON([]byte(load))
	direct.HandleJSON([]byte(`{"id":2,"op":"advance","to":20000,"noView":true}`))
	want := decodeReply(t, direct.HandleJSON([]byte(`{"id":99,"op":"view"}`)))
	gv, _ := json.Marshal(got.View)
	wv, _ := json.Marshal(want.View)
	if !bytes.Equal(gv, wv) {
		t.Fatal("the run advanced in budgeted pieces ends elsewhere than one advance")
	}
}

// TestSmallSessionNotStarved: with one running slot, a small session's request is answered while
// a heavy session's long advance is still running (it waits at most one slice), and it was told
// it waited.
func TestSmallSessionNotStarved(t *testing.T) {
	srv, ts, _ := startServer(t, Config{MaxRunning: 1, RequestBudget: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	heavy := dial(t, ctx, ts)
	callOK(t, ctx, heavy, 1, `{"id":1,"op":"load","scenario":`+slicedScenario(12, 1200)+`,"noView":true}`)
	small, _, err := websocket.Dial(ctx, wsURL(ts)+"?notices=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer small.CloseNow()
	callOK(t, ctx, small, 1, `{"id":1,"op":"load","scenario":`+readScenario(t, "steady-replication.json")+`,"noView":true}`)

	heavyDone := make(chan time.Time, 1)
	go func() {
		// 200 simulated seconds: well past the sleep below on a fast machine too (20 s took only
		// about 100 ms once fetch sessions and the followers' fetches cost what changed).
		_ = heavy.Write(ctx, websocket.MessageText, []byte(`{"id":2,"op":"advance","by":200000,"noView":true}`))
		_, _, _ = heavy.Read(ctx)
		heavyDone <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond) // the heavy advance is under way
	if err := small.Write(ctx, websocket.MessageText, []byte(`{"id":2,"op":"advance","by":100,"noView":true}`)); err != nil {
		t.Fatal(err)
	}
	var notices int
	for {
		_, raw, err := small.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeReply(t, raw)
		if r.Type == "queued" {
			notices++
			continue
		}
		if r.Type != "reply" || r.ID != 2 {
			t.Fatalf("small session: %.200s", raw)
		}
		break
	}
	smallDone := time.Now()
	select {
	case at := <-heavyDone:
		if !at.After(smallDone) {
			t.Fatal("the small request was answered only after the heavy advance ended: starved")
		}
	default: // the heavy advance is still running: as it should be
	}
	if srv.Queued() == 0 {
		t.Fatal("no request waited for a running slot: the test did not exercise the queue")
	}
	t.Logf("small session told it waited %d times; heavy advance still running when it was answered", notices)
	<-heavyDone
}

// TestFirstSliceFollowsSpeed: an advance's first slice covers what the session's measured speed
// does in sliceWall (a slow, large cluster gets a short one), within bounds, and firstSliceMs
// before anything is measured.
func TestFirstSliceFollowsSpeed(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want int64
	}{{0, firstSliceMs}, {0.5, 25}, {0.001, 1}, {4, 200}, {1000, 16 * firstSliceMs}} {
		if got := firstSlice(c.rate); got != c.want {
			t.Errorf("firstSlice(%v) = %d, want %d", c.rate, got, c.want)
		}
	}
}
