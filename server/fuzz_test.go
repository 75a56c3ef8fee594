package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/highwater-sim/highwater/engine/session"
)

// FuzzHandleJSON feeds arbitrary request bytes to a session through the server's request path
// (play/pause decoding, id recovery, session.HandleJSON) after a scenario is loaded. Every input
// must get one JSON reply of type reply or error, and the session must still answer afterwards.
// The seed corpus runs in every `go test`; `go test -fuzz FuzzHandleJSON ./server` explores.
func FuzzHandleJSON(f *testing.F) {
	scenario, err := os.ReadFile("../scenarios/leader-crash-truncation.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"id":1,"op":"advance","by":500}`,
		`{"id":2,"op":"advance","to":30000,"maxEvents":3,"view":{"focus":[{"topic":"orders","partition":0}],"detailLimit":1,"noRecords":true,"maxMessages":2}}`,
		`{"id":3,"op":"step"}`,
		`{"id":4,"op":"apply","action":{"do":"kill","broker":1}}`,
		`{"id":5,"op":"apply","action":{"do":"produce","topic":"orders","partition":0,"count":3,"acks":"all"}}`,
		`{"id":6,"op":"apply","action":{"do":"link","from":0,"to":2,"latencyMs":100}}`,
		`{"id":7,"op":"seek","to":0}`,
		`{"id":8,"op":"view","noView":true}`,
		`{"id":9,"op":"export"}`,
		`{"id":10,"op":"load","scenario":` + string(scenario) + `}`,
		`{"id":11,"op":"play","speed":2.5,"intervalMs":50}`,
		`{"id":12,"op":"pause"}`,
		`{"id":13,"op":"play","speed":0,"chunkMs":1}`,
		`{"id":14,"op":`,
		`{"id":1e3,"op":"view"}`,
		`{"id":"x","op":"view"}`,
		`{"op":"view","id":15,"id":16}`,
		`[1,2,3]`,
		`null`,
		``,
		`{"id":17,"op":"advance","by":9223372036854775807}`,
		`{"id":21,"op":"seek","to":9223372036854775807}`,
		`{"id":22,"op":"advance","to":600001}`,
		`{"id":18,"op":"seek","to":-1}`,
		`{"id":19,"op":"apply","action":{"do":"expect"}}`,
		`{"id":20,"op":"apply","action":{"do":"config","set":{"replica.lag.time.max.ms":1}}}`,
		`{"id":23,"op":"advance","by":300,"view":{"delta":true,"detailLimit":1,"focusBrokers":[0,2],"focus":[{"topic":"orders","partition":0}]}}`,
		`{"id":24,"op":"play","speed":1,"view":{"delta":true,"focusBrokers":[-1,99]}}`,
		`{"id":25,"op":"view","view":{"delta":"yes","focusBrokers":"0"}}`,
	} {
		f.Add([]byte(s))
	}
	srv := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	load := []byte(`{"id":1,"op":"load","scenario":` + string(scenario) + `}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{srv: srv, log: srv.log, sess: session.New(session.Limits{MaxBrokers: 50, MaxPartitions: 1000})}
		if r := checkReply(t, c.answer(inbound{data: load})); r.Type != "reply" {
			t.Fatalf("load failed: %s", r.Error)
		}
		// The engine cannot be interrupted: a request that never returns is reported by name
		// rather than left to hang the fuzzer.
		done := make(chan []byte, 1)
		go func() { done <- c.answer(inbound{data: data}) }()
		var out []byte
		select {
		case out = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("no reply within 10 s (engine livelock?) to %q", data)
		}
		r := checkReply(t, out)
		var req struct{ ID int64 }
		if json.Unmarshal(data, &req) == nil && r.Type == "reply" && r.ID != req.ID {
			t.Fatalf("reply id %d, request id %d", r.ID, req.ID)
		}
		c.stopPlay()
		if r := checkReply(t, c.answer(inbound{data: []byte(`{"id":99,"op":"view","noView":true}`)})); r.ID != 99 {
			t.Fatalf("the session did not go on: %+v", r)
		}
	})
}

func checkReply(t *testing.T, out []byte) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("reply is not JSON (%v): %.300s", err, out)
	}
	if r.Type != "reply" && r.Type != "error" {
		t.Fatalf("reply type %q: %.300s", r.Type, out)
	}
	if r.Type == "error" && r.Error == "" {
		t.Fatalf("error reply without a message: %.300s", out)
	}
	return r
}
