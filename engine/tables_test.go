package engine

import (
	"slices"
	"testing"
)

// TestEventTypesTable: every event of every preset and sweep seed has a type in EventTypes, and
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
	for _, typ := range EventTypes {
		if n := len(slices.DeleteFunc(slices.Clone(EventTypes), func(s string) bool { return s != typ })); n != 1 {
			t.Errorf("event type %q is in EventTypes %d times", typ, n)
		}
	}
}

// TestKafkaErrorNames: each code encodes as its name and decodes back.
func TestKafkaErrorNames(t *testing.T) {
	for code, name := range kafkaErrorNames {
		b, err := code.MarshalText()
		if err != nil || string(b) != name {
			t.Errorf("%d encodes as %q, %v; want %q", code, b, err, name)
		}
		var back KafkaError
		if err := back.UnmarshalText(b); err != nil || back != code {
			t.Errorf("%q decodes as %d, %v; want %d", b, back, err, code)
		}
	}
}
