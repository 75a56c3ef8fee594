package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestRecycledFetchRoundsMatchTrace runs every preset and the golden file's sweep seeds with the
// fetch rounds' messages reused (recycle.go) and requires the trace of a run that reuses none,
// byte for byte. The trace is on here, so events keep messages a later round reuses: each
// message is copied as its event is emitted (an EventFilter sees each event then), and the copy
// is what the trace encodes. A reuse too early (of a message something still reads) would change
// a later message, an answer, or the run.
func TestRecycledFetchRoundsMatchTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every preset and sweep case twice")
	}
	var reused uint64
	for _, c := range determinismCases(t) {
		want := traceJSONL(t, c.sc)
		// asSent holds, per message, copies of it as each event naming it was emitted, in order.
		asSent := map[*Message][]*Message{}
		e, err := buildEngine(c.sc, true, false, func(_ *Engine, ev *Event) bool {
			if m := ev.Message; m != nil {
				asSent[m] = append(asSent[m], copyMessage(m))
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		e.out.recycle.force = true
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		var encErr error
		sink := func(evs []Event) {
			for i := range evs {
				if m := evs[i].Message; m != nil {
					evs[i].Message, asSent[m] = asSent[m][0], asSent[m][1:]
				}
			}
			for _, ev := range Narrate(evs) {
				if err := enc.Encode(&ev); err != nil && encErr == nil {
					encErr = err
				}
			}
		}
		if _, err := e.runSteps(c.sc, sink, e.DrainUnnarrated); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if encErr != nil {
			t.Fatalf("%s: %v", c.name, encErr)
		}
		if got := buf.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("%s: the trace differs with messages reused: %s", c.name, firstDiff(want, got))
		}
		reused += e.out.recycle.reused
	}
	if reused == 0 {
		t.Error("no message was reused: the test compares nothing")
	}
	t.Logf("%d messages reused", reused)
}

// copyMessage is m with its own copy of a Fetch's, a Fetch answer's, a Produce's or a Produce
// answer's body (the messages reused: recycle.go, clients.go); other bodies are shared, as they
// are never written to.
func copyMessage(m *Message) *Message {
	c := *m
	if m.Produce != nil {
		p := *m.Produce
		c.Produce = &p
	}
	if m.ProduceResponse != nil {
		p := *m.ProduceResponse
		c.ProduceResponse = &p
	}
	if m.Fetch != nil {
		f := *m.Fetch
		f.Partitions = slices.Clone(f.Partitions)
		f.ForgottenTopicsData = slices.Clone(f.ForgottenTopicsData)
		c.Fetch = &f
	}
	if m.FetchResponse != nil {
		r := *m.FetchResponse
		r.Partitions = slices.Clone(r.Partitions)
		c.FetchResponse = &r
	}
	return &c
}

// TestRecycleSlotsGrow: a message landing on a slot still registered doubles the table, every
// registered message still found by its id; at maxSlots the later one overwrites.
func TestRecycleSlotsGrow(t *testing.T) {
	e := &Engine{}
	ids := []uint64{1, 1 + minSlots, 1 + 2*minSlots, 1 + 3*minSlots, 5}
	wrappers := map[uint64]*fetchResponseWithParts{}
	for _, id := range ids {
		x := &fetchResponseWithParts{}
		wrappers[id] = x
		e.registerMsg(recycleSlot{id: id, resp: x})
	}
	if got := len(e.out.recycle.slots); got != 4*minSlots {
		t.Errorf("%d slots, want %d", got, 4*minSlots)
	}
	for _, id := range ids {
		if s := e.slot(id); s.id != id || s.resp != wrappers[id] {
			t.Errorf("message %d: slot holds %d", id, s.id)
		}
	}
	for i := uint64(1); i <= maxSlots/minSlots; i++ { // one more than maxSlots can hold apart
		e.registerMsg(recycleSlot{id: 7 + i*minSlots*(maxSlots/minSlots), resp: &fetchResponseWithParts{}})
	}
	if got := len(e.out.recycle.slots); got != maxSlots {
		t.Errorf("%d slots, want at most %d", got, maxSlots)
	}
}
