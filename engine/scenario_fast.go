package engine

import (
	"encoding/json"
)

// The fast path of ParseStep. A long scenario is mostly produce steps (a load file has 100,000),
// and the general path decodes each one three times (into a map, re-encoded, into an Action).
// parseStepFast reads a flat step object in one pass. It gives up (ok false) on anything
// unusual, an error included, and the general path then gives the answer and the error message:
// an expect or config step, a null, an object or array value, a number that is not a plain
// integer in range, a repeated or escaped key, a key its action does not take.
// TestParseStepFastAgrees holds the two paths to the same results.

func parseStepFast(raw []byte) (Step, bool) {
	st, end, ok := parseStepAt(raw, 0, false)
	if !ok || skipSpace(raw, end) != len(raw) {
		return Step{}, false
	}
	return st, true
}

// parseStepAt is parseStepFast for the step object at i (after any space), giving the index
// after its closing brace. strict asks for a comma between members: parseScenarioFast reads a
// file nobody checked is valid JSON, while ParseStep's input was (or is taken as it was).
func parseStepAt(raw []byte, i int, strict bool) (Step, int, bool) {
	var st Step
	a := &st.Action
	var keys [16]string
	given := keys[:0]
	i = skipSpace(raw, i)
	if i >= len(raw) || raw[i] != '{' {
		return Step{}, i, false
	}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != '}' {
		key, j, ok := scanPlainString(raw, i)
		if !ok || contains(given, key) {
			return Step{}, i, false
		}
		given = append(given, key)
		if i = skipSpace(raw, j); i >= len(raw) || raw[i] != ':' {
			return Step{}, i, false
		}
		i = skipSpace(raw, i+1)
		switch key {
		case "at":
			st.At, j, ok = scanInt(raw, i, 64)
		case "do":
			a.Do, j, ok = scanString(raw, i)
		case "topic":
			a.Topic, j, ok = scanString(raw, i)
		case "text":
			a.Text, j, ok = scanString(raw, i)
		case "partition":
			a.Partition, j, ok = scanInt32(raw, i)
		case "broker":
			a.Broker, j, ok = scanInt32(raw, i)
		case "from":
			a.From, j, ok = scanInt32(raw, i)
		case "to":
			a.To, j, ok = scanInt32(raw, i)
		case "count":
			a.Count, j, ok = scanInt64(raw, i)
		case "latencyMs":
			a.LatencyMs, j, ok = scanInt64(raw, i)
		case "acks":
			j, ok = scanToken(raw, i)
			var acks Acks
			ok = ok && acks.UnmarshalJSON(raw[i:j]) == nil
			a.Acks = &acks
		case "loseUnflushed":
			a.LoseUnflushed, j, ok = scanBool(raw, i)
		case "unclean":
			a.Unclean, j, ok = scanBool(raw, i)
		case "down":
			a.Down, j, ok = scanBool(raw, i)
		default:
			return Step{}, i, false
		}
		if !ok {
			return Step{}, i, false
		}
		i = skipSpace(raw, j)
		if i < len(raw) && raw[i] == ',' {
			if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '}' {
				return Step{}, i, false // a trailing comma
			}
		} else if strict && (i >= len(raw) || raw[i] != '}') {
			return Step{}, i, false
		}
	}
	if i >= len(raw) || !contains(given, "at") || st.At < 0 {
		return Step{}, i, false
	}
	allowed, ok := actionFields[a.Do]
	if !ok || a.Do == "expect" || a.Do == "config" {
		return Step{}, i, false
	}
	for _, k := range given {
		if k != "at" && k != "do" && !contains(allowed, k) {
			return Step{}, i, false
		}
	}
	return st, i + 1, true
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// scanPlainString reads a string without escapes at i and returns it and the index after it.
func scanPlainString(raw []byte, i int) (string, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return interned(raw[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20:
			return "", i, false
		}
	}
	return "", i, false
}

// interned is string(b), without an allocation for the step keys and action names a load file
// repeats a hundred thousand times (a switch on string(b) compares without converting).
func interned(b []byte) string {
	switch string(b) {
	case "at":
		return "at"
	case "do":
		return "do"
	case "topic":
		return "topic"
	case "partition":
		return "partition"
	case "count":
		return "count"
	case "acks":
		return "acks"
	case "broker":
		return "broker"
	case "produce":
		return "produce"
	case "consume":
		return "consume"
	case "kill":
		return "kill"
	case "restart":
		return "restart"
	}
	return string(b)
}

// scanString reads any JSON string at i (escapes decoded as encoding/json does).
func scanString(raw []byte, i int) (string, int, bool) {
	if s, j, ok := scanPlainString(raw, i); ok {
		return s, j, true
	}
	if i >= len(raw) || raw[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			var s string
			if json.Unmarshal(raw[i:j+1], &s) != nil {
				return "", i, false
			}
			return s, j + 1, true
		}
	}
	return "", i, false
}

// scanToken reads a number, literal or string at i and returns the index after it.
func scanToken(raw []byte, i int) (int, bool) {
	if i < len(raw) && raw[i] == '"' {
		_, j, ok := scanString(raw, i)
		return j, ok
	}
	j := i
	for j < len(raw) && (raw[j] == '-' || raw[j] >= '0' && raw[j] <= '9' || raw[j] >= 'a' && raw[j] <= 'z') {
		j++
	}
	return j, j > i
}

// scanInt reads a plain JSON integer (no fraction, exponent or leading zero) that fits bits.
func scanInt(raw []byte, i, bits int) (int64, int, bool) {
	j := i
	if j < len(raw) && raw[j] == '-' {
		j++
	}
	start := j
	for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
		j++
	}
	if j == start || (raw[start] == '0' && j > start+1) {
		return 0, i, false
	}
	if j < len(raw) && (raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E') {
		return 0, i, false
	}
	// The digits are summed here, as strconv.ParseInt would (a load file has 200,000 numbers,
	// and ParseInt wants a string): limit is the magnitude's bound, 2^(bits-1) when negative.
	limit := uint64(1)<<(bits-1) - 1
	if start > i {
		limit++
	}
	var v uint64
	for _, c := range raw[start:j] {
		d := uint64(c - '0')
		if v > (limit-d)/10 {
			return 0, i, false
		}
		v = 10*v + d
	}
	if start > i {
		return -int64(v), j, true
	}
	return int64(v), j, true
}

func scanInt64(raw []byte, i int) (*int64, int, bool) {
	v, j, ok := scanInt(raw, i, 64)
	return &v, j, ok
}

func scanInt32(raw []byte, i int) (*int32, int, bool) {
	v, j, ok := scanInt(raw, i, 32)
	x := int32(v)
	return &x, j, ok
}

func scanBool(raw []byte, i int) (bool, int, bool) {
	switch {
	case len(raw) >= i+4 && string(raw[i:i+4]) == "true":
		return true, i + 4, true
	case len(raw) >= i+5 && string(raw[i:i+5]) == "false":
		return false, i + 5, true
	}
	return false, i, false
}

// splitArray cuts a JSON array of objects, already known to be valid JSON, into its elements
// (sharing raw's bytes). ok is false for anything but an array of objects.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	out := make([]json.RawMessage, 0, len(raw)/64)
	depth, start, inString := 0, -1, false
	for j := i + 1; j < len(raw); j++ {
		c := raw[j]
		if inString {
			switch c {
			case '\\':
				j++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			if depth == 0 {
				return nil, false // a string element
			}
			inString = true
		case '{', '[':
			if depth == 0 {
				if c != '{' {
					return nil, false
				}
				start = j
			}
			depth++
		case '}', ']':
			if depth == 0 {
				return out, c == ']' && skipSpace(raw, j+1) == len(raw)
			}
			if depth--; depth == 0 {
				out = append(out, json.RawMessage(raw[start:j+1]))
			}
		case ' ', '\t', '\n', '\r', ',':
		default:
			if depth == 0 {
				return nil, false // a number, string or literal element
			}
		}
	}
	return nil, false
}

// splitObject cuts a JSON object, already known to be valid JSON, into its members, as decoding
// into a map[string]json.RawMessage does (a repeated key keeps its last value) but with values
// sharing raw's bytes: a load file's steps are megabytes, which the decoder walks once more and
// copies. ok is false for anything but an object whose keys are plain ASCII (no escapes).
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != '}'; {
		if raw[i] != '"' {
			return nil, false
		}
		j := i + 1
		for ; j < len(raw) && raw[j] != '"'; j++ {
			if c := raw[j]; c == '\\' || c < 0x20 || c >= 0x80 {
				return nil, false
			}
		}
		if j >= len(raw) {
			return nil, false
		}
		key := string(raw[i+1 : j])
		if i = skipSpace(raw, j+1); i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		end, ok := valueEnd(raw, i)
		if !ok {
			return nil, false
		}
		out[key] = json.RawMessage(raw[i:end])
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	if i >= len(raw) || skipSpace(raw, i+1) != len(raw) {
		return nil, false
	}
	return out, true
}

// valueEnd is the index just after the JSON value starting at i, in valid JSON.
func valueEnd(raw []byte, i int) (int, bool) {
	depth, inString := 0, false
	for j := i; j < len(raw); j++ {
		c := raw[j]
		if inString {
			switch c {
			case '\\':
				j++
			case '"':
				if inString = false; depth == 0 {
					return j + 1, true
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j, j > i // a number or literal ends where its object does
			}
			if depth--; depth == 0 {
				return j + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j, j > i
			}
		}
	}
	return 0, false
}

// parseScenarioFast is ParseScenario in one pass over the file, for a file that is valid JSON
// whose top-level keys are plain and given once and whose steps are objects: a load file is
// megabytes, which json.Valid, then splitObject's and splitArray's cuts, then each step's parse
// walked four times (issue 12). It does not know the file is valid JSON, so it checks as it
// reads: the members and elements must be separated by single commas, a step is read strictly
// (parseStepAt) or by encoding/json (parseStepGeneral), the head's values by encoding/json
// (parseHead). ok is false for anything else, an error included: ParseScenario then takes its
// general path, which gives the answer and the error message.
func parseScenarioFast(data []byte) (*Scenario, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	top := map[string]json.RawMessage{}
	var steps []Step
	// checked is the scenario of the members before the steps, when it is valid: the steps are
	// then checked against it as they are read (Validate's pass over them afterwards missed the
	// cache on every step of a load file), and it is the answer if no member follows them.
	var checked *Scenario
	hasSteps, after := false, false
	for i = skipSpace(data, i+1); i < len(data) && data[i] != '}'; {
		key, j, ok := scanPlainString(data, i)
		if _, twice := top[key]; !ok || twice || key == "steps" && hasSteps {
			return nil, false
		}
		if i = skipSpace(data, j); i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		end := 0
		if key == "steps" {
			if sc, err := parseHead(top); err == nil && sc.validateHead() == nil {
				checked = sc
			}
			steps, end, ok = parseStepsAt(data, i, checked)
			hasSteps = true
		} else if end, ok = valueEnd(data, i); ok {
			top[key] = json.RawMessage(data[i:end])
			after = hasSteps
		}
		if !ok {
			return nil, false
		}
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			if i = skipSpace(data, i+1); i >= len(data) || data[i] != '"' {
				return nil, false
			}
		} else if i >= len(data) || data[i] != '}' {
			return nil, false
		}
	}
	if i >= len(data) || skipSpace(data, i+1) != len(data) {
		return nil, false
	}
	if checked != nil && !after {
		checked.Steps = steps
		return checked, true
	}
	sc, err := parseHead(top)
	if err != nil {
		return nil, false
	}
	if hasSteps {
		sc.Steps = steps
	}
	if sc.Validate() != nil {
		return nil, false
	}
	return sc, true
}

// parseStepsAt reads the array of step objects at i and gives the index after it; each step is
// checked against sc (Validate's check) unless sc is nil.
func parseStepsAt(raw []byte, i int, sc *Scenario) ([]Step, int, bool) {
	if i >= len(raw) || raw[i] != '[' {
		return nil, i, false
	}
	// A produce step is some 60 bytes: room for all of a load file's without growing.
	steps := make([]Step, 0, (len(raw)-i)/48)
	if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == ']' {
		return steps, i + 1, true
	}
	for {
		st, end, ok := parseStepAt(raw, i, true)
		if !ok {
			if end, ok = valueEnd(raw, i); !ok || raw[i] != '{' {
				return nil, i, false
			}
			var err error
			if st, err = parseStepGeneral(raw[i:end]); err != nil {
				return nil, i, false
			}
		}
		steps = append(steps, st)
		if n := len(steps); sc != nil {
			last := int64(0) // Validate's time before the first step
			if n > 1 {
				last = steps[n-2].At
			}
			if sc.validateStep(n-1, &steps[n-1], last) != nil {
				return nil, i, false
			}
		}
		if i = skipSpace(raw, end); i >= len(raw) {
			return nil, i, false
		}
		switch raw[i] {
		case ']':
			return steps, i + 1, true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return nil, i, false
		}
	}
}
