package protocol

import "testing"

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
