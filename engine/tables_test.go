package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	brk "github.com/highwater-sim/highwater/engine/broker"
)

// TestEventTypesTable: every event of every preset and sweep seed, and every kind of the broker's
// events, has a type in EventTypes, and
// every error name in a message is in Kafka's table (errors.go).
func TestEventTypesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range determinismCases(t) {
		_, _, err := Run(c.sc, func(evs []Event) {
			for i := range evs {
				seen[evs[i].Type] = true
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	for typ := range seen {
		if !slices.Contains(EventTypes, typ) {
			t.Errorf("event type %q is not in EventTypes (events.go)", typ)
		}
	}
	// The broker's kinds name their types in package broker (brk.Kind.Type): each is in the
	// table, whether or not a preset emits it.
	for _, k := range brk.Kinds() {
		if !slices.Contains(EventTypes, k.Type()) {
			t.Errorf("broker event kind %s has type %q, not in EventTypes (events.go)", k, k.Type())
		}
	}
	for _, typ := range EventTypes {
		if n := len(slices.DeleteFunc(slices.Clone(EventTypes), func(s string) bool { return s != typ })); n != 1 {
			t.Errorf("event type %q is in EventTypes %d times", typ, n)
		}
	}
}

// TestMessagesRoundTrip: every message sent in every preset and sweep seed is data: it encodes to
// JSON and decodes back to the same value (no field the wire does not carry, no pointer into a
// node's state).
func TestMessagesRoundTrip(t *testing.T) {
	for _, c := range determinismCases(t) {
		n := 0
		var failed error
		_, _, err := Run(c.sc, func(evs []Event) {
			for i := range evs {
				m := evs[i].Message
				if m == nil || failed != nil {
					continue
				}
				n++
				data, err := json.Marshal(m)
				if err != nil {
					failed = err
					continue
				}
				var back Message
				if err := json.Unmarshal(data, &back); err != nil {
					failed = fmt.Errorf("%s: %v", data, err)
					continue
				}
				if !sameData(reflect.ValueOf(*m), reflect.ValueOf(back)) {
					failed = fmt.Errorf("%s #%d changed through JSON:\n  sent    %+v\n  decoded %+v", m.Type, m.ID, *m, back)
				}
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if failed != nil {
			t.Errorf("%s: %v", c.name, failed)
		}
		if n == 0 {
			t.Errorf("%s: no messages", c.name)
		}
	}
}

// sameData is reflect.DeepEqual but for one thing JSON cannot tell apart: a nil and an empty
// slice. Unexported fields count (a field the wire does not carry fails).
func sameData(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameData(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameData(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameData(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
		return false // messages hold none
	}
	if a.CanInterface() {
		return a.Interface() == b.Interface()
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestHandlerOutbox: a handler run as the loop runs it changes its node's state at once and
// leaves its effects (the answer it sends, its events) in the outbox; they reach the network,
// the agenda and the trace only when the loop drains it.
func TestHandlerOutbox(t *testing.T) {
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, nil)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	e.Drain()
	req := &Message{ID: 999, Type: MsgAlterPartition, From: 0, To: 0, AlterPartition: &AlterPartitionRequest{
		BrokerID: 0, BrokerEpoch: e.brokers[0].brokerEpoch, TP: p.tp(), LeaderEpoch: e.ctrl.LeaderEpoch(p.pid) + 1,
		PartitionEpoch: e.ctrl.PartitionEpoch(p.pid), NewISR: []int32{0, 1}}}
	items := e.agenda.len()
	e.out.active = true
	e.handleAlterPartition(e.brokers[0], req)
	if len(e.out.effs) == 0 || e.agenda.len() != items || len(e.events) != 0 {
		t.Fatalf("during the handler: %d effects, agenda %d → %d items, %d events; want effects only", len(e.out.effs), items, e.agenda.len(), len(e.events))
	}
	e.drainOutbox()
	// The answer's delivery, and the three UpdateMetadata requests the controller sends every live
	// broker after an AlterPartition (3.7.0 tryProcessAlterPartition's sendUpdateMetadataRequest).
	if len(e.out.effs) != 0 || e.agenda.len() != items+4 {
		t.Fatalf("after the drain: %d effects left, agenda %d → %d items; want the answer's and the UpdateMetadata deliveries", len(e.out.effs), items, e.agenda.len())
	}
	var answered bool
	for _, ev := range e.Drain() {
		if ev.Message != nil && ev.Message.AlterPartitionResponse != nil && ev.Message.ReplyTo == 999 {
			answered = true
		}
	}
	if !answered {
		t.Error("the answer's send event is not in the trace after the drain")
	}
}
