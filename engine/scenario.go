package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Scenario is contract v1.1 of ../shared/docs/scenario-format.md (docs/scenarios.md in this repo):
// a cluster, timed actions and expectations.
type Scenario struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description,omitempty"`
	Seed        uint64                     `json:"seed"`
	Brokers     int                        `json:"brokers"`
	Topics      []Topic                    `json:"topics"`
	Config      map[string]json.RawMessage `json:"config,omitempty"`
	Steps       []Step                     `json:"steps,omitempty"`
	// Duration is when the run ends; 0 means the time of the last step.
	Duration int64 `json:"duration,omitempty"`
}

// Topic is one topic: a partition count and replication factor, or an explicit assignment.
type Topic struct {
	Name              string    `json:"name"`
	Partitions        int       `json:"partitions,omitempty"`
	ReplicationFactor int       `json:"replicationFactor,omitempty"`
	Assignment        [][]int32 `json:"assignment,omitempty"`
}

// Step is one timed action. At is simulated ms.
type Step struct {
	At     int64  `json:"at"`
	Action Action `json:"-"`
}

// Action is what a step does; the same value is a command from the page or the server. Fields
// that an action does not use are rejected by the parser.
type Action struct {
	Do            string `json:"do"`
	Topic         string `json:"topic,omitempty"`
	Partition     *int32 `json:"partition,omitempty"`
	Count         *int64 `json:"count,omitempty"`
	Acks          *Acks  `json:"acks,omitempty"`
	Broker        *int32 `json:"broker,omitempty"`
	LoseUnflushed bool   `json:"loseUnflushed,omitempty"`
	Unclean       bool   `json:"unclean,omitempty"`
	From          *int32 `json:"from,omitempty"`
	To            *int32 `json:"to,omitempty"`
	LatencyMs     *int64 `json:"latencyMs,omitempty"`
	Down          bool   `json:"down,omitempty"`
	// Set is the `config` action's settings (an extension: change settings mid-run).
	Set map[string]json.RawMessage `json:"set,omitempty"`
	// Text is a `caption` step's line of the guided tour (contract v1.1).
	Text string `json:"text,omitempty"`
	// Expect holds the checks of an `expect` step.
	Expect *Expect `json:"-"`
}

// Expect is the body of an `expect` step. Every field given is checked.
type Expect struct {
	Topic       string                     `json:"topic,omitempty"`
	Partition   *int32                     `json:"partition,omitempty"`
	Leader      *int32                     `json:"leader,omitempty"`
	LeaderEpoch *int32                     `json:"leaderEpoch,omitempty"`
	ISR         []int32                    `json:"isr,omitempty"`
	Replicas    map[string]ReplicaExpect   `json:"replicas,omitempty"`
	Acked       *int64                     `json:"acked,omitempty"`
	Violations  []string                   `json:"violations,omitempty"`
	raw         map[string]json.RawMessage // which fields were given (an empty list is a check)
}

// ReplicaExpect checks one replica's log.
type ReplicaExpect struct {
	LEO    *int64  `json:"leo,omitempty"`
	HW     *int64  `json:"hw,omitempty"`
	Epochs []int32 `json:"epochs,omitempty"`
	given  map[string]bool
}

// actionFields lists, per action, the fields it accepts besides `at` and `do`.
var actionFields = map[string][]string{
	"produce":  {"topic", "partition", "count", "acks"},
	"kill":     {"broker", "loseUnflushed"},
	"restart":  {"broker"},
	"consume":  {"topic", "partition", "count"},
	"shutdown": {"broker"},
	"elect":    {"topic", "partition", "broker", "unclean"},
	"isolate":  {"broker"},
	"heal":     {"broker"},
	"link":     {"from", "to", "latencyMs", "down"},
	"failDisk": {"broker"},
	"config":   {"set"},
	"caption":  {"text"},
	"expect":   {"topic", "partition", "leader", "leaderEpoch", "isr", "replicas", "acked", "violations"},
}

// ActionNames lists the accepted actions in a fixed order.
var ActionNames = []string{"produce", "kill", "restart", "consume", "shutdown", "elect", "isolate", "heal", "link", "failDisk", "config", "caption", "expect"}

// MaxCaptionChars bounds a caption's text: a tour's line is a sentence or two, not a document.
const MaxCaptionChars = 2000

// ParseScenario reads and validates a scenario file. Errors name the field and the reason.
func ParseScenario(data []byte) (*Scenario, error) {
	if sc, ok := parseScenarioFast(data); ok {
		return sc, nil
	}
	if plain, changed := lenient(data); changed { // whole numbers as 1.0, a BOM: scenario_numbers.go
		return ParseScenario(plain)
	}
	return parseScenarioGeneral(data)
}

// parseScenarioGeneral is ParseScenario for any file, and its error messages; parseScenarioFast
// must agree with it (TestParseScenarioFastAgrees).
func parseScenarioGeneral(data []byte) (*Scenario, error) {
	// A valid file's top level is cut without decoding (splitObject); anything else is left to
	// encoding/json, whose errors the messages reword.
	top, ok := map[string]json.RawMessage(nil), false
	if json.Valid(data) {
		top, ok = splitObject(data)
	}
	if !ok {
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", jsonErr(err))
		}
	}
	sc, err := parseHead(top)
	if err != nil {
		return nil, err
	}
	if raw, ok := top["steps"]; ok {
		// The whole file is known to be valid JSON (checked above), so the array can be cut
		// into its elements in one pass (splitArray); anything else is left to encoding/json.
		steps, ok := splitArray(raw)
		if !ok {
			if err := json.Unmarshal(raw, &steps); err != nil {
				return nil, fmt.Errorf("steps: want an array of steps: %v", jsonErr(err))
			}
		}
		sc.Steps = make([]Step, 0, len(steps))
		for i, s := range steps {
			st, err := ParseStep(s)
			if err != nil {
				return nil, fmt.Errorf("steps[%d].%v", i, err)
			}
			sc.Steps = append(sc.Steps, st)
		}
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// ParseScenarioHead is ParseScenario's scenario without its steps, unvalidated, for a driver to
// build the engine from (NewRun validates) while ParseScenario reads the steps elsewhere.
func ParseScenarioHead(data []byte) (*Scenario, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	// Unchecked, splitObject may cut an invalid file (safely): ParseScenario then fails it.
	top, ok := splitObject(data)
	if !ok {
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", jsonErr(err))
		}
	}
	lenientHead(top)
	return parseHead(top)
}

// parseHead decodes the top-level fields of a scenario file but its steps.
func parseHead(top map[string]json.RawMessage) (*Scenario, error) {
	known := []string{"name", "description", "seed", "brokers", "topics", "config", "steps", "duration"}
	for k := range top {
		if !contains(known, k) {
			return nil, fmt.Errorf("%s: unknown field (known: %s)", k, strings.Join(known, ", "))
		}
	}
	sc := &Scenario{Seed: 1}
	for _, f := range []struct {
		name     string
		dst      any
		required bool
	}{
		{"name", &sc.Name, true}, {"description", &sc.Description, false}, {"seed", &sc.Seed, false},
		{"brokers", &sc.Brokers, true}, {"topics", nil, true}, {"config", &sc.Config, false},
		{"duration", &sc.Duration, false},
	} {
		raw, ok := top[f.name]
		if !ok {
			if f.required {
				return nil, fmt.Errorf("%s: required", f.name)
			}
			continue
		}
		if f.name == "topics" {
			topics, err := parseTopics(raw)
			if err != nil {
				return nil, err
			}
			sc.Topics = topics
			continue
		}
		if err := strictUnmarshal(raw, f.dst); err != nil {
			return nil, fmt.Errorf("%s: %v", f.name, jsonErr(err))
		}
	}
	return sc, nil
}

// ParseStep parses one step object: `at`, `do` and the action's fields.
func ParseStep(raw json.RawMessage) (Step, error) {
	if st, ok := parseStepFast(raw); ok {
		return st, nil
	}
	return parseStepGeneral(raw)
}

// parseStepGeneral parses any step and words its errors; parseStepFast must agree with it.
func parseStepGeneral(raw json.RawMessage) (Step, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Step{}, fmt.Errorf("step: want an object: %v", jsonErr(err))
	}
	var st Step
	atRaw, ok := fields["at"]
	if !ok || isNull(atRaw) {
		return st, errors.New("at: required")
	}
	if err := json.Unmarshal(atRaw, &st.At); err != nil || st.At < 0 {
		return st, fmt.Errorf("at: want an integer ≥ 0 (ms), got %s", atRaw)
	}
	delete(fields, "at")
	a, err := ParseAction(fields)
	if err != nil {
		return st, err
	}
	st.Action = a
	return st, nil
}

// ParseAction parses an action from its fields (`do` plus the action's own). It checks field names
// and types; ids against the cluster are checked by Scenario.Validate or Engine.Apply.
func ParseAction(fields map[string]json.RawMessage) (Action, error) {
	var a Action
	doRaw, ok := fields["do"]
	if !ok {
		return a, errors.New("do: required (one of " + strings.Join(ActionNames, ", ") + ")")
	}
	if err := json.Unmarshal(doRaw, &a.Do); err != nil {
		return a, fmt.Errorf("do: want a string, got %s", doRaw)
	}
	allowed, ok := actionFields[a.Do]
	if !ok {
		return a, fmt.Errorf("do: unknown action %q (known: %s)", a.Do, strings.Join(ActionNames, ", "))
	}
	for k := range fields {
		if k != "do" && !contains(allowed, k) {
			return a, fmt.Errorf("%s: not a field of %q (its fields: %s)", k, a.Do, strings.Join(allowed, ", "))
		}
	}
	fields = withoutNulls(fields)
	body, _ := json.Marshal(fields)
	if a.Do == "expect" {
		checks := make(map[string]json.RawMessage, len(fields))
		for k, v := range fields {
			if k != "do" {
				checks[k] = v
			}
		}
		body, _ = json.Marshal(checks)
		var ex Expect
		if err := strictUnmarshal(body, &ex); err != nil {
			return a, fmt.Errorf("expect: %v", jsonErr(err))
		}
		ex.raw = checks
		rawReplicas := exRawReplicas(fields)
		for id := range ex.Replicas {
			if _, given := rawReplicas[id]; !given {
				delete(ex.Replicas, id) // "0": null checks nothing on broker 0
			}
		}
		for id, rraw := range rawReplicas {
			var given map[string]json.RawMessage
			_ = json.Unmarshal(rraw, &given)
			given = withoutNulls(given)
			re := ex.Replicas[id]
			re.given = map[string]bool{}
			for k := range given {
				if k != "leo" && k != "hw" && k != "epochs" {
					return a, fmt.Errorf("replicas.%s.%s: unknown field (known: leo, hw, epochs)", id, k)
				}
				re.given[k] = true
			}
			ex.Replicas[id] = re
		}
		a.Expect = &ex
		return a, nil
	}
	if err := strictUnmarshal(body, &a); err != nil {
		return a, jsonErr(err)
	}
	return a, nil
}

// Validate checks the scenario against itself: sizes, ids, time order and config names.
func (sc *Scenario) Validate() error {
	if err := sc.validateHead(); err != nil {
		return err
	}
	var last int64
	for i := range sc.Steps {
		if err := sc.validateStep(i, &sc.Steps[i], last); err != nil {
			return err
		}
		last = sc.Steps[i].At
	}
	return nil
}

// validateHead is Validate but for the steps.
func (sc *Scenario) validateHead() error {
	if strings.TrimSpace(sc.Name) == "" {
		return errors.New("name: must not be empty")
	}
	if sc.Brokers < 1 || sc.Brokers > MaxBrokers {
		return fmt.Errorf("brokers: %d is out of range 1..%d", sc.Brokers, MaxBrokers)
	}
	if len(sc.Topics) == 0 {
		return errors.New("topics: at least one topic is required")
	}
	total := 0
	for i := range sc.Topics {
		n, err := sc.validateTopic(i)
		if err != nil {
			return err
		}
		total += n
	}
	if total > MaxPartitions {
		return fmt.Errorf("topics: %d partitions in all is more than the limit %d", total, MaxPartitions)
	}
	if _, err := NewConfig(sc.Config); err != nil {
		return err
	}
	if sc.Duration < 0 {
		return fmt.Errorf("duration: %d is negative", sc.Duration)
	}
	return nil
}

// validateStep is Validate's check of step i, st, the previous step's time being last.
func (sc *Scenario) validateStep(i int, st *Step, last int64) error {
	if st.At < last {
		return fmt.Errorf("steps[%d].at: %d is before the previous step's %d (times must not go backwards)", i, st.At, last)
	}
	if st.Action.Do == "expect" && st.Action.Expect != nil {
		sc.defaultExpectPartition(st.Action.Expect)
	}
	if err := sc.validateAction(st.Action); err != nil {
		return fmt.Errorf("steps[%d].%v", i, err)
	}
	return nil
}

// PartitionCount returns the number of partitions of every topic together.
func (sc *Scenario) PartitionCount() int {
	n := 0
	for _, t := range sc.Topics {
		n += t.count()
	}
	return n
}

// topicPartitions returns how many partitions topic name has, or -1 if there is no such topic.
func (sc *Scenario) topicPartitions(name string) int {
	for _, t := range sc.Topics {
		if t.Name == name {
			return t.count()
		}
	}
	return -1
}

func (sc *Scenario) validateAction(a Action) error {
	return validateAction(a, sc.Brokers, sc.topicPartitions)
}

// validateAction checks an action's ids against a cluster of brokers with the given topics.
func validateAction(a Action, brokers int, partitions func(topic string) int) error {
	checkBroker := func(field string, b *int32, required bool) error {
		if b == nil {
			if required {
				return fmt.Errorf("%s: required for %q", field, a.Do)
			}
			return nil
		}
		if *b < 0 || int(*b) >= brokers {
			return fmt.Errorf("%s: broker %d is out of range 0..%d", field, *b, brokers-1)
		}
		return nil
	}
	checkTP := func(topic string, p *int32, required bool) error {
		if topic == "" && p == nil && !required {
			return nil
		}
		if topic == "" {
			return fmt.Errorf("topic: required for %q", a.Do)
		}
		n := partitions(topic)
		if n < 0 {
			return fmt.Errorf("topic: no topic named %q", topic)
		}
		if p == nil {
			return fmt.Errorf("partition: required for %q", a.Do)
		}
		if *p < 0 || int(*p) >= n {
			return fmt.Errorf("partition: %d is out of range 0..%d for topic %q", *p, n-1, topic)
		}
		return nil
	}
	switch a.Do {
	case "produce", "consume":
		if err := checkTP(a.Topic, a.Partition, true); err != nil {
			return err
		}
		if a.Count != nil && (*a.Count < 1 || *a.Count > MaxProduceCount) {
			return fmt.Errorf("count: want 1..%d, got %d", MaxProduceCount, *a.Count)
		}
	case "kill", "restart", "shutdown", "isolate", "failDisk":
		return checkBroker("broker", a.Broker, true)
	case "heal":
		return checkBroker("broker", a.Broker, false)
	case "elect":
		if err := checkTP(a.Topic, a.Partition, true); err != nil {
			return err
		}
		return checkBroker("broker", a.Broker, false)
	case "link":
		if err := checkBroker("from", a.From, true); err != nil {
			return err
		}
		if err := checkBroker("to", a.To, true); err != nil {
			return err
		}
		if *a.From == *a.To {
			return fmt.Errorf("to: a link joins two different brokers, got %d twice", *a.To)
		}
		if a.LatencyMs != nil && *a.LatencyMs < 0 {
			return fmt.Errorf("latencyMs: %d is negative", *a.LatencyMs)
		}
	case "caption":
		n := utf8.RuneCountInString(a.Text)
		switch {
		case n == 0:
			return errors.New(`text: required for "caption" (the line the tour shows)`)
		case strings.TrimSpace(a.Text) == "":
			return errors.New("text: is only white space")
		case n > MaxCaptionChars:
			return fmt.Errorf("text: %d characters; at most %d", n, MaxCaptionChars)
		}
	case "config":
		cfg := DefaultConfig()
		for _, name := range sortedKeys(a.Set) {
			if err := cfg.Set(name, a.Set[name]); err != nil {
				return fmt.Errorf("set.%v", strings.TrimPrefix(err.Error(), "config."))
			}
		}
	case "expect":
		ex := a.Expect
		if ex.Topic != "" || ex.Partition != nil {
			if err := checkTP(ex.Topic, ex.Partition, true); err != nil {
				return err
			}
		} else if ex.Leader != nil || ex.LeaderEpoch != nil || ex.ISR != nil || ex.Replicas != nil || ex.Acked != nil {
			return errors.New("topic: required when checking a partition's leader, leaderEpoch, isr, replicas or acked")
		}
		for _, id := range sortedKeys(ex.Replicas) {
			var b int32
			if _, err := fmt.Sscan(id, &b); err != nil || fmt.Sprint(b) != id || b < 0 || int(b) >= brokers {
				return fmt.Errorf("replicas.%s: not a broker id in 0..%d", id, brokers-1)
			}
		}
		for _, v := range ex.Violations {
			if !contains(InvariantNames, v) {
				return fmt.Errorf("violations: unknown invariant %q (known: %s)", v, strings.Join(InvariantNames, ", "))
			}
		}
	}
	return nil
}

// strictUnmarshal decodes JSON rejecting unknown fields and trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the value")
	}
	return nil
}

// jsonErr rewords encoding/json errors so they name the field in scenario terms.
func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Errorf("%s: want %s, got a JSON %s", te.Field, goTypeWords(te.Type.String()), te.Value)
		}
		return fmt.Errorf("want %s, got a JSON %s", goTypeWords(te.Type.String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%v (at byte %d)", se, se.Offset)
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "json: unknown field ") {
		return fmt.Errorf("%s: unknown field", strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`))
	}
	return errors.New(strings.TrimPrefix(msg, "json: "))
}

// MarshalJSON writes a step as the file has it: `at`, `do` and the action's fields.
func (st Step) MarshalJSON() ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if st.Action.Expect != nil {
		for k, v := range st.Action.Expect.raw {
			fields[k] = v
		}
		fields["do"] = json.RawMessage(`"expect"`)
	} else {
		body, err := json.Marshal(st.Action)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(body, &fields); err != nil {
			return nil, err
		}
	}
	at, _ := json.Marshal(st.At)
	fields["at"] = at
	return json.Marshal(fields)
}

// UnmarshalJSON reads a step as the file has it (ParseStep; ids are checked by Validate).
func (st *Step) UnmarshalJSON(b []byte) error {
	parsed, err := ParseStep(b)
	if err != nil {
		return err
	}
	*st = parsed
	return nil
}
