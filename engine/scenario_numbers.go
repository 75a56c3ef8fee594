package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Leniency at the file's edge: what a scenario written by a script may carry that the contract's
// JSON means the same as. Every number in a scenario is an integer, yet a script's JSON writer
// may print one as 1500.0 or 1.5e3 (Python's json does for any float, JavaScript's never), and a
// Windows editor may start the file with a UTF-8 byte order mark (RFC 8259 lets a parser
// ignore it). lenient rewrites both away before the file is read, so such a file runs exactly as
// its plain twin; a number that is not a whole one (1.5) is left as it is and fails as before,
// naming its field.

// utf8BOM is the UTF-8 byte order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lenient returns data without a leading byte order mark and with every whole number written as
// a fraction or with an exponent (outside strings) rewritten as a plain integer, and whether it
// changed anything. Invalid JSON is returned as it is (after the mark), so its error message
// keeps its offsets. Only a number whose value is whole and within ±2^53 is rewritten.
func lenient(data []byte) ([]byte, bool) {
	out, changed := data, false
	if bytes.HasPrefix(out, utf8BOM) {
		out, changed = out[len(utf8BOM):], true
	}
	if !json.Valid(out) {
		return out, changed
	}
	var buf []byte // made at the first rewrite
	last := 0      // out[last:i] is not yet copied into buf
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == '"':
			inString = true
			continue
		case c != '-' && (c < '0' || c > '9'):
			continue
		}
		j := i
		for j < len(out) && bytes.IndexByte([]byte("+-.eE0123456789"), out[j]) >= 0 {
			j++
		}
		tok := out[i:j]
		if whole, ok := wholeNumber(tok); ok {
			buf = append(append(buf, out[last:i]...), whole...)
			last = j
		}
		i = j - 1
	}
	if buf == nil {
		return out, changed
	}
	return append(buf, out[last:]...), true
}

// wholeNumber is tok, a JSON number with a fraction or an exponent, as a plain integer if its
// value is a whole number within ±2^53 (exactly representable); ok false otherwise, and for a
// plain integer, which needs nothing.
func wholeNumber(tok []byte) ([]byte, bool) {
	if !bytes.ContainsAny(tok, ".eE") {
		return nil, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	const limit = 1 << 53
	if err != nil || v != float64(int64(v)) || v > limit || v < -limit {
		return nil, false
	}
	return strconv.AppendInt(nil, int64(v), 10), true
}

// lenientHead is lenient for the top-level values of a file but its steps, which ParseScenario
// reads (a load file's bulk: ParseScenarioHead stays a read of the head only).
func lenientHead(top map[string]json.RawMessage) {
	for k, v := range top {
		if k == "steps" {
			continue
		}
		if plain, changed := lenient(v); changed {
			top[k] = plain
		}
	}
}
