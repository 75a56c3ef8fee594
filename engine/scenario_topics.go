package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseTopics decodes the topics array one topic at a time, so that an error names the topic by
// its index (topics[1].partitons: unknown field) as validateTopic's do.
func parseTopics(raw json.RawMessage) ([]Topic, error) {
	if isNull(raw) {
		return nil, nil // not given: validateHead asks for at least one topic
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("topics: want an array of topics, got %s", jsonKind(raw))
	}
	topics := make([]Topic, len(elems))
	for i, el := range elems {
		if err := strictUnmarshal(el, &topics[i]); err != nil {
			msg := jsonErr(err).Error()
			if strings.HasPrefix(msg, "want a topic object") {
				return nil, fmt.Errorf("topics[%d]: want a topic object, got %s", i, jsonKind(el))
			}
			return nil, fmt.Errorf("topics[%d].%s", i, msg)
		}
	}
	return topics, nil
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(v json.RawMessage) string {
	t := strings.TrimSpace(string(v))
	switch {
	case t == "":
		return "nothing"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	case t == "true" || t == "false":
		return "a boolean"
	case t == "null":
		return "null"
	}
	return "a number"
}

// validateTopic checks topic i of the scenario and returns its partition count. Errors name the
// topic by its index in the file (topics[2].name: ...).
func (sc *Scenario) validateTopic(i int) (int, error) {
	t := &sc.Topics[i]
	at := fmt.Sprintf("topics[%d]", i)
	if t.Name == "" {
		return 0, fmt.Errorf("%s.name: required", at)
	}
	for j := range i {
		if sc.Topics[j].Name == t.Name {
			return 0, fmt.Errorf("%s.name: topic %q is defined twice", at, t.Name)
		}
	}
	if t.Assignment != nil {
		if len(t.Assignment) == 0 {
			return 0, fmt.Errorf("%s.assignment: must list at least one partition", at)
		}
		if err := t.assignmentMatches(at); err != nil {
			return 0, err
		}
		for p, reps := range t.Assignment {
			if len(reps) == 0 {
				return 0, fmt.Errorf("%s.assignment[%d]: no replicas", at, p)
			}
			for k, b := range reps {
				if b < 0 || int(b) >= sc.Brokers {
					return 0, fmt.Errorf("%s.assignment[%d][%d]: broker %d is out of range 0..%d", at, p, k, b, sc.Brokers-1)
				}
				if contains(reps[:k], b) {
					return 0, fmt.Errorf("%s.assignment[%d]: broker %d is listed twice", at, p, b)
				}
			}
		}
		return len(t.Assignment), nil
	}
	if t.Partitions < 1 {
		return 0, fmt.Errorf("%s.partitions: want ≥ 1, got %d", at, t.Partitions)
	}
	if t.ReplicationFactor < 1 || t.ReplicationFactor > sc.Brokers {
		return 0, fmt.Errorf("%s.replicationFactor: want 1..%d (the broker count), got %d", at, sc.Brokers, t.ReplicationFactor)
	}
	return t.Partitions, nil
}

// count returns the topic's number of partitions.
func (t Topic) count() int {
	if t.Assignment != nil {
		return len(t.Assignment)
	}
	return t.Partitions
}

// assignmentMatches checks the partitions and replicationFactor given next to an assignment:
// the contract offers either form, and a file that gives both is read as one topic when they
// agree (partitions the assignment's length, replicationFactor every list's length); when they
// do not, the error says which. Kafka's CreateTopics refuses both together
// (AdminManager.createTopics, "Both cannot be used at the same time"); the scenario file is more
// lenient where the two say the same.
func (t *Topic) assignmentMatches(at string) error {
	if t.Partitions != 0 && t.Partitions != len(t.Assignment) {
		return fmt.Errorf("%s.partitions: %d, but the assignment lists %d partitions", at, t.Partitions, len(t.Assignment))
	}
	if t.ReplicationFactor != 0 {
		for p, reps := range t.Assignment {
			if len(reps) != t.ReplicationFactor {
				return fmt.Errorf("%s.replicationFactor: %d, but assignment[%d] lists %d replicas", at, t.ReplicationFactor, p, len(reps))
			}
		}
	}
	return nil
}

// goTypeWords names a Go type of the scenario's fields in the contract's words, for an error
// message ("want an integer", not "want int64").
func goTypeWords(t string) string {
	switch t {
	case "int", "int64":
		return "an integer"
	case "int32":
		return "an integer (a broker id or partition)"
	case "uint64":
		return "an integer ≥ 0"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "engine.Topic":
		return "a topic object"
	case "[]engine.Topic":
		return "an array of topics"
	case "[]int32", "[][]int32":
		return "an array of broker ids"
	case "map[string]json.RawMessage", "map[string]engine.ReplicaExpect", "engine.ReplicaExpect":
		return "an object"
	case "[]string":
		return "an array of strings"
	}
	return t
}
