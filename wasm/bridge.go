// Package main is the engine's WebAssembly host: it runs inside a Web Worker and answers the
// page's protocol requests (engine/session) through one JS function, highwater.handle.
//
// The JS edge lives in main_js.go (js && wasm). Everything here is untagged so it builds and is
// tested natively: the bridge only turns one request string into one reply string, and turns a
// panic into an error reply instead of letting it reach JS.
package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/highwater-sim/highwater/engine/session"
)

// Namespace is the one global the wasm registers; Handle is its only function besides Version.
const Namespace = "highwater"

// Bridge owns the worker's one session.
type Bridge struct {
	s *session.Session
	// grow, when set (main_js.go: memgrow), is told the partition count of each cluster loaded
	// that is larger than any before, so the page can grow its memory once for a large cluster
	// rather than 4 MiB at a time as its logs grow; grownFor is that largest count.
	grow     func(partitions int)
	grownFor int
}

// NewBridge returns a bridge with no cluster loaded. A page has no server-side limits: it only
// spends its own memory.
func NewBridge() *Bridge { return &Bridge{s: session.New(session.Limits{})} }

// Handle answers one request (JSON text) with one reply (JSON text). It never panics: a panic
// anywhere below becomes an error reply that carries the request id when it could be read.
func (b *Bridge) Handle(req string) (reply string) {
	defer func() {
		if p := recover(); p != nil {
			reply = errorReply(requestID(req), fmt.Sprintf("internal error in the wasm host: %v\n%s", p, debug.Stack()))
		}
	}()
	reply = string(b.s.HandleJSON([]byte(req)))
	if e := b.s.Engine(); b.grow != nil && e != nil && e.PartitionCount() > b.grownFor {
		b.grownFor = e.PartitionCount()
		b.grow(b.grownFor)
	}
	return reply
}

// errorReply builds an error reply in the protocol's shape.
func errorReply(id int64, msg string) string {
	out, err := json.Marshal(map[string]any{"id": id, "type": "error", "error": msg, "t": 0, "next": -1, "events": []any{}})
	if err != nil {
		return `{"id":0,"type":"error","error":"encoding an error reply failed","t":0,"next":-1,"events":[]}`
	}
	return string(out)
}

// requestID reads the id of a request, or 0 when the request is not an object with a numeric id.
func requestID(req string) int64 {
	var r struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal([]byte(req), &r) != nil {
		return 0
	}
	return r.ID
}
