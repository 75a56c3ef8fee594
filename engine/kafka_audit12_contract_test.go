package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Audit 12, the scenario contract (../shared/docs/scenario-format.md) read to the letter against
// the parser and the runner, and the Kafka behaviour behind the clauses it names. Each test names
// the contract's sentence or the Kafka function it follows.

// runScenarioText parses and runs a whole scenario file and returns its events; a parse or run
// error fails the test.
func runScenarioText(t *testing.T, file string) ([]Event, Result) {
	t.Helper()
	sc, err := ParseScenario([]byte(file))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var evs []Event
	_, res, err := Run(sc, func(b []Event) { evs = append(evs, b...) })
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return evs, res
}

// TestAudit12StepsAtOneInstantApplyTogether: "At time T the engine first processes every internal
// event due at or before T, then applies the steps with `at` = T in file order." With
// sim.network.latency.ms 0 a produce at 1000 reaches leader 0 at 1000; the expect step after it at
// 1000 must see the cluster before that delivery (acked 0, leader LEO 0), and the records one ms
// later. The runner processed the events due at T again before every step at T, so the produce
// was delivered, appended and acknowledged between the two steps.
func TestAudit12StepsAtOneInstantApplyTogether(t *testing.T) {
	_, res := runScenarioText(t, `{"name":"same ms","brokers":3,"config":{"sim.network.latency.ms":0},
		"topics":[{"name":"t","partitions":1,"replicationFactor":3}],"steps":[
		{"at":1000,"do":"produce","topic":"t","partition":0,"acks":1},
		{"at":1000,"do":"expect","topic":"t","partition":0,"acked":0,"replicas":{"0":{"leo":0}}},
		{"at":1001,"do":"expect","topic":"t","partition":0,"acked":1,"replicas":{"0":{"leo":1}}}]}`)
	if !res.OK() {
		t.Fatalf("steps at 1000 must apply with nothing processed between them: %v", res.Failures)
	}
	// Two links cut at the same ms: a fetch answer due at that ms on the second link is not
	// delivered between the two steps (it is held by the cut, as TCP holds what was sent).
	_, res = runScenarioText(t, `{"name":"same ms links","brokers":2,"config":{"sim.network.latency.ms":0},
		"topics":[{"name":"t","partitions":1,"replicationFactor":2}],"steps":[
		{"at":1000,"do":"produce","topic":"t","partition":0,"acks":1},
		{"at":1000,"do":"link","from":0,"to":1,"down":true},
		{"at":1000,"do":"link","from":1,"to":0,"down":true},
		{"at":2000,"do":"expect","topic":"t","partition":0,"acked":1,"replicas":{"0":{"leo":1},"1":{"leo":0}}}]}`)
	if !res.OK() {
		t.Fatalf("the follower must not get the record past links cut at the produce's ms: %v", res.Failures)
	}
}

// TestAudit12ActionOnBrokerInThatStateIsNoOp: the contract's exit codes are 0 (all held), 1 (an
// expectation failed or an unexpected violation) and 2 (not a valid scenario, nothing runs); a
// restart of a running broker, a shutdown of a stopped one, a second isolate or failDisk is none
// of these, so it is a narrated no-op, as kill of a dead broker already was. Kafka: a second
// process of a running broker cannot lock its log directory (LogManager.lockLogDirs) and exits;
// kafka-server-stop finds no process to stop.
func TestAudit12ActionOnBrokerInThatStateIsNoOp(t *testing.T) {
	evs, res := runScenarioText(t, `{"name":"no-ops","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],"steps":[
		{"at":100,"do":"restart","broker":1},
		{"at":200,"do":"kill","broker":2},
		{"at":300,"do":"shutdown","broker":2},
		{"at":400,"do":"isolate","broker":1},
		{"at":500,"do":"isolate","broker":1},
		{"at":600,"do":"heal","broker":1},
		{"at":700,"do":"heal","broker":1},
		{"at":800,"do":"failDisk","broker":2},
		{"at":900,"do":"failDisk","broker":0},
		{"at":1000,"do":"failDisk","broker":0},
		{"at":1100,"do":"shutdown","broker":1},
		{"at":1100,"do":"shutdown","broker":1},
		{"at":1100,"do":"restart","broker":1}],"duration":2000}`)
	if !res.OK() {
		t.Fatalf("failures: %v", res.Failures)
	}
	var noops []string
	for _, ev := range evs {
		if ev.Type != EvDropped && (strings.HasPrefix(ev.Reason, "already") || ev.Reason == "broker down") {
			noops = append(noops, ev.Type+":"+ev.Reason)
		}
	}
	want := []string{"broker-up:already running", "shutdown:already down", "isolate:already isolated",
		"log-dir-failure:broker down", "log-dir-failure:already failed", "shutdown:already shutting down",
		"broker-up:already running"}
	if !slices.Equal(noops, want) {
		t.Fatalf("no-op events %v, want %v", noops, want)
	}
}

// TestAudit12NullIsNotGiven: "All fields are optional; each one given is checked": a field whose
// value is null is not given. `"isr": null` checked an empty ISR, `"violations": null` no
// violation and `"epochs": null` an empty log.
func TestAudit12NullIsNotGiven(t *testing.T) {
	_, res := runScenarioText(t, `{"name":"nulls","brokers":3,"topics":[{"name":"t","partitions":1,"replicationFactor":3}],"steps":[
		{"at":100,"do":"produce","topic":"t","partition":0,"count":2,"acks":null},
		{"at":1000,"do":"expect","topic":"t","partition":0,"leader":null,"leaderEpoch":null,"isr":null,"acked":2,
		 "violations":null,"replicas":{"0":{"leo":2,"hw":null,"epochs":null},"1":null}},
		{"at":1000,"do":"heal","broker":null}]}`)
	if !res.OK() {
		t.Fatalf("null fields must not be checked: %v", res.Failures)
	}
	if _, err := ParseScenario([]byte(`{"name":"n","brokers":1,"topics":[{"name":"t","partitions":1,"replicationFactor":1}],
		"steps":[{"at":null,"do":"heal"}]}`)); err == nil || !strings.Contains(err.Error(), "at: required") {
		t.Fatalf("at null: %v, want at: required", err)
	}
}

// TestAudit12ProtocolSubVersions: inter.broker.protocol.version takes Kafka's internal versions
// (0.10.2.2 and 0.11.0.2 ApiVersion's map, 2.1.1 ApiVersion.apply with its shortVersion keys,
// 3.7.0 MetadataVersion.fromVersionString): each maps to its era where the era models it; the
// ones before a modelled KIP (0.11.0-IV0/IV1 before KIP-101, 2.1-IV0 before KIP-320) are refused
// with the reason, and ones Kafka does not know are refused as before.
func TestAudit12ProtocolSubVersions(t *testing.T) {
	for v, era := range map[string]string{"0.10.2-IV0": "0.10.2", "0.11.0-IV2": "0.11.0", "2.1-IV1": "2.1",
		"2.1-IV2": "2.1", "3.7-IV0": "3.7", "3.7-IV1": "3.7", "3.7-IV2": "3.7", "3.7-IV3": "3.7", "3.7-IV4": "3.7",
		"3.7": "3.7", "3.7.0": "3.7", "0.11.0.2": "0.11.0", "2.1-IV2.1": "2.1"} {
		cfg, err := NewConfig(map[string]json.RawMessage{ibpName: json.RawMessage(`"` + v + `"`)})
		if err != nil || cfg.InterBrokerProtocolVersion != era {
			t.Errorf("%s: era %q, err %v; want %s", v, cfg.InterBrokerProtocolVersion, err, era)
		}
	}
	for _, v := range []string{"0.11.0-IV0", "0.11.0-IV1", "2.1-IV0", "3.7-IV5", "0.10.2-IV1", "2.1-IV3", "3.7-iv4"} {
		if _, err := NewConfig(map[string]json.RawMessage{ibpName: json.RawMessage(`"` + v + `"`)}); err == nil {
			t.Errorf("%s: accepted", v)
		}
	}
}

// TestAudit12ControlledShutdownDisabled: KafkaServer.controlledShutdown runs only
// `if (startupComplete.get() && config.controlledShutdownEnable)` (0.10.2.2, 2.1.1, 3.7.0).
// Leader 1 of t-0 [1,2] is alone in the ISR (follower 2's fetches cut at 100, an acks=1 record at
// 200 it cannot fetch, replica.lag.time.max.ms 1000). A shutdown at 5000 with the default sends ControlledShutdown;
// the controller cannot move t-0 (no other ISR member, unclean off), so broker 1 goes on leading
// while it retries. With controlled.shutdown.enable false it stops at once, sends nothing, and the
// controller, told by the closed session, leaves t-0 without a leader (epoch 1, ISR [1]).
func TestAudit12ControlledShutdownDisabled(t *testing.T) {
	for _, enable := range []string{"true", "false"} {
		cfg := eraCfg("3.7")
		cfg["replica.lag.time.max.ms"] = "1000"
		cfg["controlled.shutdown.enable"] = enable
		e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
		p := e.partitionOf(ktTopic, 0)
		runFor(t, e, 100)
		apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
		runFor(t, e, 100)
		apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`) // 2 now lags
		runFor(t, e, 3800)                                                 // to 4000
		if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1}) {
			t.Fatalf("enable %s: ISR %v at 4000, want [1]", enable, isr)
		}
		runFor(t, e, 1000)
		apply(t, e, `{"do":"shutdown","broker":1}`)
		runFor(t, e, 1000) // to 6000
		sent := eventsOf(e.events, MsgControlledShutdown, nil)
		leader, epoch := e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid)
		if enable == "true" {
			if len(sent) == 0 || leader != 1 || epoch != 0 || e.brokers[1].Dead() {
				t.Fatalf("enabled: %d ControlledShutdown, leader %d epoch %d, dead %v; want some, 1, 0, alive", len(sent), leader, epoch, e.brokers[1].Dead())
			}
			continue
		}
		if len(sent) != 0 || leader != -1 || epoch != 1 || !e.brokers[1].Dead() {
			t.Fatalf("disabled: %d ControlledShutdown, leader %d epoch %d, dead %v; want 0, -1, 1, dead", len(sent), leader, epoch, e.brokers[1].Dead())
		}
		if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1}) {
			t.Fatalf("disabled: ISR %v, want [1] (the last member stays)", isr)
		}
	}
}

// TestAudit12AssignmentWithMatchingCounts: the contract's two forms of a topic, given together,
// are one topic when they agree; when they do not, the error names the topic's index and field.
func TestAudit12AssignmentWithMatchingCounts(t *testing.T) {
	head := `{"name":"a","brokers":3,"topics":[{"name":"u","partitions":1,"replicationFactor":1},`
	if _, err := ParseScenario([]byte(head + `{"name":"t","partitions":2,"replicationFactor":2,"assignment":[[1,2],[2,0]]}]}`)); err != nil {
		t.Fatalf("matching counts: %v", err)
	}
	for topic, want := range map[string]string{
		`{"name":"t","partitions":3,"assignment":[[1,2],[2,0]]}`:               "topics[1].partitions: 3, but the assignment lists 2 partitions",
		`{"name":"t","replicationFactor":3,"assignment":[[1,2,0],[2,0]]}`:      "topics[1].replicationFactor: 3, but assignment[1] lists 2 replicas",
		`{"name":"t","partitions":1,"replicationFactor":1,"assignment":[[5]]}`: "topics[1].assignment[0][0]: broker 5 is out of range 0..2",
		`{"name":"t","partitions":0,"replicationFactor":1}`:                    "topics[1].partitions: want ≥ 1, got 0",
	} {
		_, err := ParseScenario([]byte(head + topic + `]}`))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", topic, err, want)
		}
	}
}

// TestAudit12TopicErrorsNameTheIndex: exit 2's message "names the field and why"; a topic's
// decoding errors said only "topics: partitons: unknown field", not which topic.
func TestAudit12TopicErrorsNameTheIndex(t *testing.T) {
	head := `{"name":"a","brokers":3,"topics":[{"name":"u","partitions":1,"replicationFactor":1},`
	for topic, want := range map[string]string{
		`{"name":"t","partitons":3}`:                          "topics[1].partitons: unknown field",
		`{"name":"t","partitions":"x","replicationFactor":1}`: "topics[1].partitions: want an integer, got a JSON string",
		`{"name":"t","assignment":[[0,"1"]]}`:                 "topics[1].assignment: want an integer (a broker id or partition), got a JSON string",
		`7`:                                                   "topics[1]: want a topic object, got a number",
		`{"name":"u","partitions":1,"replicationFactor":1}`: `topics[1].name: topic "u" is defined twice`,
	} {
		_, err := ParseScenario([]byte(head + topic + `]}`))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", topic, err, want)
		}
	}
}

// TestAudit12NullConfigValueIsNotGiven: a config value null is a setting not given, so it keeps
// Kafka's default; it read as the type's zero value: controlled.shutdown.enable false,
// replica.fetch.wait.max.ms 0, and for inter.broker.protocol.version an error.
func TestAudit12NullConfigValueIsNotGiven(t *testing.T) {
	cfg, err := NewConfig(map[string]json.RawMessage{"controlled.shutdown.enable": json.RawMessage("null"),
		"replica.fetch.wait.max.ms": json.RawMessage("null"), ibpName: json.RawMessage("null"),
		"zookeeper.session.timeout.ms": json.RawMessage(" null ")})
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultConfig(); cfg != want {
		t.Fatalf("config with null values %+v, want the defaults %+v", cfg, want)
	}
}
