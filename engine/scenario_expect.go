package engine

import (
	"bytes"
	"encoding/json"
)

// exRawReplicas is an expect's replicas object as given, keyed by broker id: which of each
// replica's fields the file names.
func exRawReplicas(fields map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	if raw, ok := fields["replicas"]; ok {
		_ = json.Unmarshal(raw, &out)
	}
	return withoutNulls(out)
}

// withoutNulls is fields without those whose value is null: a null field is a field not given
// (an expect's `"isr": null` checks nothing, where `"isr": []` checks an empty ISR; an action's
// `"count": null` is the default count).
func withoutNulls(fields map[string]json.RawMessage) map[string]json.RawMessage {
	var out map[string]json.RawMessage // a copy only when there is a null: the caller's map stays
	for k, v := range fields {
		if isNull(v) {
			if out == nil {
				out = make(map[string]json.RawMessage, len(fields))
				for k2, v2 := range fields {
					out[k2] = v2
				}
			}
			delete(out, k)
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// isNull reports whether a JSON value is null.
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// defaultExpectPartition fills in an expect's topic and partition where the file leaves them
// out and only one partition can be meant: the contract makes every expect field optional, so a
// scenario of one topic with one partition may check {"leader": 1} alone. With the topic given
// and one partition in it, the partition is 0. Otherwise nothing changes (validateAction then
// asks for the topic, naming the field). The file's own fields (raw, which MarshalJSON writes)
// stay as written.
func (sc *Scenario) defaultExpectPartition(ex *Expect) {
	if ex.Partition != nil {
		return
	}
	if ex.Topic == "" {
		if len(sc.Topics) != 1 {
			return
		}
		ex.Topic = sc.Topics[0].Name
	}
	if sc.topicPartitions(ex.Topic) == 1 {
		p := int32(0)
		ex.Partition = &p
	} else if len(sc.Topics) == 1 && ex.Topic == sc.Topics[0].Name {
		if _, given := ex.raw["topic"]; !given {
			ex.Topic = "" // the topic was only filled in: leave the file as it was
		}
	}
}
