package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestCaptionParse: a caption needs a non-empty text of bounded length, and nothing else; the
// errors name the step and the field.
func TestCaptionParse(t *testing.T) {
	scen := func(step string) string {
		return `{"name":"c","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}],"steps":[` + step + `]}`
	}
	for _, c := range []struct{ step, want string }{
		{`{"at":5,"do":"caption"}`, `steps[0].text: required for "caption" (the line the tour shows)`},
		{`{"at":5,"do":"caption","text":""}`, `steps[0].text: required for "caption" (the line the tour shows)`},
		{`{"at":5,"do":"caption","text":"  \n "}`, `steps[0].text: is only white space`},
		{`{"at":5,"do":"caption","text":3}`, `steps[0].text: want a string, got a JSON number`},
		{`{"at":5,"do":"caption","text":"x","broker":1}`, `steps[0].broker: not a field of "caption" (its fields: text)`},
		{`{"at":5,"do":"caption","text":"` + strings.Repeat("é", MaxCaptionChars+1) + `"}`, `steps[0].text: 2001 characters; at most 2000`},
	} {
		_, err := ParseScenario([]byte(scen(c.step)))
		if err == nil || err.Error() != c.want {
			t.Errorf("%.60s: error %v, want %q", c.step, err, c.want)
		}
	}
	if _, err := ParseScenario([]byte(scen(`{"at":5,"do":"caption","text":"` + strings.Repeat("é", MaxCaptionChars) + `"}`))); err != nil {
		t.Errorf("a caption of exactly %d characters: %v", MaxCaptionChars, err)
	}
}

// TestCaptionEvent: a caption is one trace event with its text, at its step's time and in file
// order with the other steps of that instant, and it changes nothing in the cluster.
func TestCaptionEvent(t *testing.T) {
	base := `{"name":"c","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],"steps":[
		{"at":100,"do":"produce","topic":"t","partition":0,"count":2},
		%s
		{"at":3000,"do":"kill","broker":0}],"duration":30000}`
	with := strings.Replace(base, "%s", `{"at":3000,"do":"caption","text":"Broker 0 dies: watch the ZooKeeper session."},`, 1)
	without := strings.Replace(base, "%s", "", 1)
	var withEvs, withoutEvs []Event
	run := func(src string, into *[]Event) *Engine {
		sc, err := ParseScenario([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		e, res, err := Run(sc, func(evs []Event) { *into = append(*into, evs...) })
		if err != nil || !res.OK() {
			t.Fatalf("run: %v %v", err, res.Failures)
		}
		return e
	}
	ew, eo := run(with, &withEvs), run(without, &withoutEvs)
	var caps []Event
	rest := withEvs[:0:0]
	for i, ev := range withEvs {
		if ev.Type == EvCaption {
			caps = append(caps, ev)
			if next := withEvs[i+1]; next.Type != EvBrokerDown || next.T != 3000 {
				t.Errorf("the caption is followed by %s at %d, want the kill at 3000 (file order)", next.Type, next.T)
			}
			continue
		}
		rest = append(rest, ev)
	}
	if len(caps) != 1 || caps[0].T != 3000 || caps[0].Text != "Broker 0 dies: watch the ZooKeeper session." {
		t.Fatalf("caption events: %+v", caps)
	}
	if got := jsonString(caps[0]); got != `{"t":3000,"type":"caption","text":"Broker 0 dies: watch the ZooKeeper session."}` {
		t.Errorf("caption JSON: %s", got)
	}
	if jsonString(rest) != jsonString(withoutEvs) {
		t.Error("the run with a caption differs from the run without it beyond the caption event")
	}
	if a, b := partitionsDigest(ew), partitionsDigest(eo); a != b {
		t.Error("the caption changed the cluster")
	}
}

// partitionsDigest describes every partition and replica through the read API: the controller's
// state, and each replica's offsets, epoch cache and records.
func partitionsDigest(e *Engine) string {
	var b strings.Builder
	for pid := range int32(e.PartitionCount()) {
		p := e.Partition(pid)
		fmt.Fprintf(&b, "%s leader %d epochs %d/%d ISR %v recovering %v\n", p.Name(), p.Leader(), p.LeaderEpoch(),
			p.PartitionEpoch(), p.ISR(), p.Recovering())
		for _, r := range p.Replicas() {
			fmt.Fprintf(&b, "  %d epoch %d log %d..%d HW %d (checkpoint %d) leader %v ISR %v %q followers %v cache %v records %v\n",
				r.Broker(), r.LeaderEpoch(), r.LogStartOffset(), r.LogEndOffset(), r.HighWatermark(), r.HWCheckpoint(),
				r.IsLeader(), r.ISR(), r.PendingISRChange(), r.Followers(), r.EpochCache(), r.Records())
		}
	}
	return b.String()
}
