package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type reply struct {
	ID     int64  `json:"id"`
	Type   string `json:"type"`
	Error  string `json:"error"`
	T      int64  `json:"t"`
	Events []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"events"`
	View *struct {
		Partitions []struct {
			Leader int32   `json:"leader"`
			ISR    []int32 `json:"isr"`
		} `json:"partitions"`
	} `json:"view"`
}

func call(t *testing.T, b *Bridge, req string) reply {
	t.Helper()
	out := b.Handle(req)
	var r reply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("reply is not JSON: %v: %s", err, out)
	}
	return r
}

// followerCrash: follower 2 dies at 1 s; its ZooKeeper session expires 18 s later.
const followerCrash = `{"name": "follower crash", "seed": 1, "brokers": 3,
	"topics": [{"name": "orders", "partitions": 1, "replicationFactor": 3}],
	"steps": [{"at": 100, "do": "produce", "topic": "orders", "partition": 0, "count": 2},
		{"at": 1000, "do": "kill", "broker": 2}]}`

func TestBridgeRunsAScenario(t *testing.T) {
	b := NewBridge()
	req, _ := json.Marshal(map[string]any{"id": 1, "op": "load", "scenario": json.RawMessage(followerCrash)})
	if r := call(t, b, string(req)); r.Type != "reply" || r.ID != 1 {
		t.Fatalf("load: %+v", r)
	}
	r := call(t, b, `{"id":2,"op":"advance","to":20000}`)
	if r.Type != "reply" || r.T != 20000 || len(r.Events) == 0 {
		t.Fatalf("advance: type %s t %d events %d error %q", r.Type, r.T, len(r.Events), r.Error)
	}
	p := r.View.Partitions[0]
	if p.Leader != 0 || len(p.ISR) != 2 {
		t.Fatalf("after broker 2's session expired: leader %d isr %v, want 0 and [0 1]", p.Leader, p.ISR)
	}
}

func TestBridgeErrors(t *testing.T) {
	b := NewBridge()
	for _, tc := range []struct{ req, want string }{
		{`not json`, "bad request"},
		{`{"id":7,"op":"advance","by":5}`, "no cluster"},
		{`{"id":8,"op":"load","scenario":{"name":"x"}}`, "brokers: required"},
		{`{"id":9,"op":"fly"}`, "unknown op"},
	} {
		r := call(t, b, tc.req)
		if r.Type != "error" || !strings.Contains(r.Error, tc.want) {
			t.Errorf("%s: got %s %q, want an error containing %q", tc.req, r.Type, r.Error, tc.want)
		}
	}
}

func TestErrorReplyShape(t *testing.T) {
	var r reply
	if err := json.Unmarshal([]byte(errorReply(requestID(`{"id":42}`), "boom")), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != 42 || r.Type != "error" || r.Error != "boom" || r.Events == nil {
		t.Fatalf("got %+v", r)
	}
	if requestID("{") != 0 {
		t.Fatal("requestID of bad JSON should be 0")
	}
}

// TestBridgeGrowsForLargerClusters: the page's memory grows at a cluster's load, told the
// partition count, only when the cluster is larger than any loaded before (main_js.go hands
// memgrow.ForPartitions, which grows nothing under 1,000 partitions).
func TestBridgeGrowsForLargerClusters(t *testing.T) {
	b := NewBridge()
	var told []int
	b.grow = func(n int) { told = append(told, n) }
	load := func(id, partitions int) {
		sc := strings.Replace(followerCrash, `"partitions": 1,`, `"partitions": `+strconv.Itoa(partitions)+`,`, 1)
		req, _ := json.Marshal(map[string]any{"id": id, "op": "load", "scenario": json.RawMessage(sc)})
		if r := call(t, b, string(req)); r.Type != "reply" {
			t.Fatalf("load of %d partitions: %+v", partitions, r)
		}
	}
	call(t, b, `{"id":1,"op":"advance","to":10}`) // no cluster yet: nothing to grow for
	load(2, 1)
	call(t, b, `{"id":3,"op":"advance","to":10}`)
	load(4, 2000)
	load(5, 50)
	load(6, 2000)
	load(7, 3000)
	if want := []int{1, 2000, 3000}; !slices.Equal(told, want) {
		t.Errorf("grow told %v, want %v", told, want)
	}
}
