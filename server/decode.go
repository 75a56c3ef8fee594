package server

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/highwater-sim/highwater/engine"
	"github.com/highwater-sim/highwater/engine/session"
)

// peek reads the top-level "id" and "op" of a request without decoding the rest, tolerating
// anything after them that is malformed or cut off (an oversized message's first bytes). A
// missing or unreadable id is 0; a missing op is "".
func peek(data []byte) (id int64, op string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, ""
	}
	haveID, haveOp := false, false
	for !(haveID && haveOp) {
		t, err := dec.Token()
		if err != nil {
			return id, op
		}
		key, ok := t.(string)
		if !ok {
			return id, op // '}' or garbage
		}
		switch key {
		case "id":
			haveID = true
			if t, err = dec.Token(); err != nil {
				return id, op
			}
			if n, ok := t.(json.Number); ok {
				if v, err := n.Int64(); err == nil {
					id = v
				} else if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
					id = int64(f)
				}
			}
		case "op":
			haveOp = true
			if t, err = dec.Token(); err != nil {
				return id, op
			}
			op, _ = t.(string)
		default:
			if skipValue(dec) != nil {
				return id, op
			}
		}
	}
	return id, op
}

// skipValue consumes one JSON value from dec.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// requestID is peek's id.
func requestID(data []byte) int64 {
	id, _ := peek(data)
	return id
}

// mustMarshalReply encodes a reply as session.HandleJSON does.
func mustMarshalReply(r session.Reply) []byte {
	if r.Events == nil {
		r.Events = []engine.Event{}
	}
	out, err := json.Marshal(r)
	if err != nil {
		out, _ = json.Marshal(session.Reply{ID: r.ID, Type: "error", Error: "encoding the reply: " + err.Error(), Next: -1, Events: []engine.Event{}})
	}
	return out
}
