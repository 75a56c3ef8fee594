package engine

import (
	"bytes"
	"encoding/json"
)

// The fast path of ParseStep: a long scenario is mostly produce steps (a 100,000-step load file),
// and the general path decodes each step three times.

var nullLiteral = []byte("null")

// stepWire is every field a non-expect step may have; stepKeys checks the keys exactly first.
type stepWire struct {
	At            int64  `json:"at"`
	Do            string `json:"do"`
	Topic         string `json:"topic"`
	Partition     *int32 `json:"partition"`
	Count         *int64 `json:"count"`
	Acks          *Acks  `json:"acks"`
	Broker        *int32 `json:"broker"`
	LoseUnflushed bool   `json:"loseUnflushed"`
	Unclean       bool   `json:"unclean"`
	From          *int32 `json:"from"`
	To            *int32 `json:"to"`
	LatencyMs     *int64 `json:"latencyMs"`
	Down          bool   `json:"down"`
	Text          string `json:"text"`
}

// parseStepFast parses a well-formed step in one decode: a long scenario is mostly produce
// steps, and ParseStep's general path (a map, re-encoded, decoded again) costs several times as
// much. It gives up (ok false) on anything unusual, an error included, and ParseStep's general
// path then gives the answer and the error message: a null, an object or array value, an expect
// or config step, a repeated key, or a key its action does not take.
func parseStepFast(raw []byte) (Step, bool) {
	if bytes.Contains(raw, nullLiteral) {
		return Step{}, false
	}
	var keys [8]string
	given, ok := stepKeys(raw, keys[:0])
	if !ok || !contains(given, "at") {
		return Step{}, false
	}
	var w stepWire
	if err := json.Unmarshal(raw, &w); err != nil || w.At < 0 {
		return Step{}, false
	}
	allowed, ok := actionFields[w.Do]
	if !ok || w.Do == "expect" || w.Do == "config" {
		return Step{}, false
	}
	for _, k := range given {
		if k != "at" && k != "do" && !contains(allowed, k) {
			return Step{}, false
		}
	}
	return Step{At: w.At, Action: Action{Do: w.Do, Topic: w.Topic, Partition: w.Partition,
		Count: w.Count, Acks: w.Acks, Broker: w.Broker, LoseUnflushed: w.LoseUnflushed,
		Unclean: w.Unclean, From: w.From, To: w.To, LatencyMs: w.LatencyMs, Down: w.Down,
		Text: w.Text}}, true
}

// stepKeys appends the keys of a flat JSON object (values are strings, numbers or booleans) to
// keys, exactly as written: encoding/json matches field names without regard to case, and a step's
// keys must match exactly. ok is false for anything else (a nested value, an escaped or repeated
// key, malformed text); json.Unmarshal checks the rest.
func stepKeys(raw []byte, keys []string) ([]string, bool) {
	inString, escaped, atKey := false, false, true
	start := 0
	depth := 0
	for i, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				if atKey {
					return nil, false
				}
				escaped = true
			case c == '"':
				inString = false
				if atKey {
					k := string(raw[start:i])
					if contains(keys, k) {
						return nil, false
					}
					keys = append(keys, k)
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, start = true, i+1
		case '{':
			if depth++; depth > 1 {
				return nil, false
			}
		case '[':
			return nil, false
		case '}':
			depth--
		case ':':
			atKey = false
		case ',':
			atKey = true
		}
	}
	return keys, depth == 0 && !inString
}
