package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Config holds the Kafka settings the engine models, under Kafka's own names, with the defaults
// of the Kafka release the era models (EraDefaults), plus the simulator's own sim.* settings. It round-trips through JSON so a
// run can be replayed from its record.
type Config struct {
	ReplicaLagTimeMaxMs          int64 // replica.lag.time.max.ms
	ReplicaFetchWaitMaxMs        int64 // replica.fetch.wait.max.ms
	ReplicaFetchMinBytes         int64 // replica.fetch.min.bytes
	ReplicaFetchMaxBytes         int64 // replica.fetch.max.bytes
	ReplicaFetchResponseMaxBytes int64 // replica.fetch.response.max.bytes
	ReplicaFetchBackoffMs        int64 // replica.fetch.backoff.ms
	ReplicaSocketTimeoutMs       int64 // replica.socket.timeout.ms
	ControllerSocketTimeoutMs    int64 // controller.socket.timeout.ms
	NumReplicaFetchers           int64 // num.replica.fetchers
	MinInsyncReplicas            int64 // min.insync.replicas
	UncleanLeaderElectionEnable  bool  // unclean.leader.election.enable
	HighWatermarkCheckpointMs    int64 // replica.high.watermark.checkpoint.interval.ms
	LogFlushIntervalMessages     int64 // log.flush.interval.messages
	// LogFlushOffsetCheckpointIntervalMs: log.flush.offset.checkpoint.interval.ms
	LogFlushOffsetCheckpointIntervalMs int64
	ZookeeperSessionTimeoutMs          int64  // zookeeper.session.timeout.ms
	InterBrokerProtocolVersion         string // inter.broker.protocol.version
	AutoLeaderRebalanceEnable          bool   // auto.leader.rebalance.enable
	LeaderImbalanceCheckIntervalS      int64  // leader.imbalance.check.interval.seconds
	LeaderImbalancePerBrokerPct        int64  // leader.imbalance.per.broker.percentage
	RequestTimeoutMs                   int64  // request.timeout.ms (producer, follower and controller requests)
	DeliveryTimeoutMs                  int64  // delivery.timeout.ms (producer)
	RetryBackoffMs                     int64  // retry.backoff.ms (producer)
	RetryBackoffMaxMs                  int64  // retry.backoff.max.ms (producer, 3.7)
	EnableIdempotence                  bool   // enable.idempotence (producer)
	FetchMaxWaitMs                     int64  // fetch.max.wait.ms (consumer)
	FetchMinBytes                      int64  // fetch.min.bytes (consumer)
	ControlledShutdownEnable           bool   // controlled.shutdown.enable
	ControlledShutdownMaxRetries       int64  // controlled.shutdown.max.retries
	ControlledShutdownRetryBackoffMs   int64  // controlled.shutdown.retry.backoff.ms
	MaxIncrementalFetchSessionSlots    int64  // max.incremental.fetch.session.cache.slots
	NetworkLatencyMs                   int64  // sim.network.latency.ms
	NetworkJitterMs                    int64  // sim.network.jitter.ms
	RecordSizeBytes                    int64  // sim.record.size.bytes
}

// NewConfig is the config of a scenario: each name it sets, and for the rest the defaults of
// the protocol era it chooses (EraDefaults).
func NewConfig(set map[string]json.RawMessage) (Config, error) {
	cfg := DefaultConfig()
	if raw, ok := set[ibpName]; ok {
		if err := cfg.Set(ibpName, raw); err != nil {
			return cfg, err
		}
		cfg = EraDefaults(cfg.InterBrokerProtocolVersion)
	}
	for _, name := range sortedKeys(set) {
		if err := cfg.Set(name, set[name]); err != nil {
			return cfg, err
		}
	}
	if err := cfg.checkIdempotence("config"); err != nil {
		return cfg, err
	}
	raw, explicit := set["delivery.timeout.ms"]
	explicit = explicit && !isNull(raw) // null is not given
	return cfg, cfg.checkDeliveryTimeout("config", explicit)
}

// checkDeliveryTimeout follows KafkaProducer.configureDeliveryTimeout (2.1.1 to 3.7.0):
// delivery.timeout.ms must be at least linger.ms + request.timeout.ms (the engine's producer
// sends at once: linger.ms 0). Set lower on purpose, the producer refuses to start
// (ConfigException "delivery.timeout.ms should be equal to or larger than linger.ms +
// request.timeout.ms"); left at its default, it is raised to match, with a warning. The client
// before 2.1 has no delivery.timeout.ms (KIP-91), so nothing to check there. A config step
// that raises request.timeout.ms past a default delivery timeout raises it too, as a producer
// built with the new settings would; the engine keeps one producer for the run.
func (c *Config) checkDeliveryTimeout(prefix string, explicit bool) error {
	if c.InterBrokerProtocolVersion != "2.1" && c.InterBrokerProtocolVersion != "3.7" {
		return nil
	}
	if c.DeliveryTimeoutMs >= c.RequestTimeoutMs {
		return nil
	}
	if explicit {
		return fmt.Errorf("%s.delivery.timeout.ms: %d should be equal to or larger than linger.ms + request.timeout.ms (0 + %d), or Kafka's producer refuses to start (KafkaProducer.configureDeliveryTimeout)",
			prefix, c.DeliveryTimeoutMs, c.RequestTimeoutMs)
	}
	c.DeliveryTimeoutMs = c.RequestTimeoutMs
	return nil
}

// checkIdempotence refuses enable.idempotence in era 0.10.2, naming the field under prefix
// ("config", or "set" for a config step). KIP-98 (0.11.0): an idempotent batch carries a
// producer id and sequence numbers, which only message format v2 has; a 0.10.2 broker knows no
// InitProducerId.
func (c *Config) checkIdempotence(prefix string) error {
	if c.EnableIdempotence && c.InterBrokerProtocolVersion == "0.10.2" {
		return fmt.Errorf("%s.enable.idempotence: true needs message format v2 (brokers 0.11.0+), not inter.broker.protocol.version 0.10.2", prefix)
	}
	return nil
}

const ibpName = "inter.broker.protocol.version"

// EraDefaults returns the defaults of the Kafka release an era models (KafkaConfig.scala of that
// release): zookeeper.session.timeout.ms 6000 and replica.lag.time.max.ms 10000 before 2.5
// (KIP-537), unclean.leader.election.enable true before 0.11 (KIP-106). Every other modelled
// default is the same in the four releases. enable.idempotence is the era's contemporary
// client's default, on from 3.0 (KIP-679, ProducerConfig) and off before, so true in 3.7 only;
// the client's other era rules (retries, delivery.timeout.ms) are era switches (era.go).
func EraDefaults(version string) Config {
	c := DefaultConfig()
	c.InterBrokerProtocolVersion = version
	c.EnableIdempotence = version == "3.7"
	if version != "3.7" {
		c.ZookeeperSessionTimeoutMs = 6000
		c.ReplicaLagTimeMaxMs = 10000
	}
	if version == "0.10.2" {
		c.UncleanLeaderElectionEnable = true
	}
	return c
}

// DefaultConfig returns Kafka's defaults (3.7).
func DefaultConfig() Config {
	return Config{
		ReplicaLagTimeMaxMs:                30000,
		ReplicaFetchWaitMaxMs:              500,
		ReplicaFetchMinBytes:               1,
		ReplicaFetchMaxBytes:               1048576,
		ReplicaFetchResponseMaxBytes:       10485760,
		ReplicaFetchBackoffMs:              1000,
		ReplicaSocketTimeoutMs:             30000,
		ControllerSocketTimeoutMs:          30000,
		NumReplicaFetchers:                 1,
		MinInsyncReplicas:                  1,
		UncleanLeaderElectionEnable:        false,
		HighWatermarkCheckpointMs:          5000,
		LogFlushIntervalMessages:           math.MaxInt64,
		LogFlushOffsetCheckpointIntervalMs: 60000,
		ZookeeperSessionTimeoutMs:          18000,
		InterBrokerProtocolVersion:         "3.7",
		AutoLeaderRebalanceEnable:          true,
		LeaderImbalanceCheckIntervalS:      300,
		LeaderImbalancePerBrokerPct:        10,
		RequestTimeoutMs:                   30000,
		DeliveryTimeoutMs:                  120000,
		RetryBackoffMs:                     100,
		RetryBackoffMaxMs:                  1000,
		EnableIdempotence:                  true,
		FetchMaxWaitMs:                     500,
		FetchMinBytes:                      1,
		ControlledShutdownEnable:           true,
		ControlledShutdownMaxRetries:       3,
		ControlledShutdownRetryBackoffMs:   5000,
		MaxIncrementalFetchSessionSlots:    1000,
		NetworkLatencyMs:                   1,
		NetworkJitterMs:                    0,
		RecordSizeBytes:                    100,
	}
}

// configKey describes one accepted config name.
type configKey struct {
	name string
	// min is the smallest accepted value of an integer setting.
	min  int64
	int  func(c *Config) *int64
	bool func(c *Config) *bool
	str  func(c *Config) *string
	// allowed lists the accepted values of a string setting.
	allowed []string
	doc     string
}

// Eras lists the accepted inter.broker.protocol.version values, oldest first.
var Eras = []string{"0.10.2", "0.11.0", "2.1", "3.7"}

var configKeys = []configKey{
	{name: "replica.lag.time.max.ms", min: 1, int: func(c *Config) *int64 { return &c.ReplicaLagTimeMaxMs }, doc: "a follower that has not caught up for this long leaves the ISR"},
	{name: "replica.fetch.wait.max.ms", min: 0, int: func(c *Config) *int64 { return &c.ReplicaFetchWaitMaxMs }, doc: "how long a follower's fetch may wait in purgatory for data"},
	{name: "replica.fetch.min.bytes", min: 0, int: func(c *Config) *int64 { return &c.ReplicaFetchMinBytes }, doc: "bytes a follower's fetch waits for"},
	{name: "replica.fetch.max.bytes", min: 1, int: func(c *Config) *int64 { return &c.ReplicaFetchMaxBytes }, doc: "bytes per partition in one fetch response (the first batch always fits)"},
	{name: "replica.fetch.response.max.bytes", min: 1, int: func(c *Config) *int64 { return &c.ReplicaFetchResponseMaxBytes }, doc: "bytes in one whole fetch response"},
	{name: "replica.fetch.backoff.ms", min: 0, int: func(c *Config) *int64 { return &c.ReplicaFetchBackoffMs }, doc: "backoff after a fetch error, and the idle wait"},
	{name: "replica.socket.timeout.ms", min: 1, int: func(c *Config) *int64 { return &c.ReplicaSocketTimeoutMs }, doc: "a follower's connect timeout (awaitReady); connections are not modelled, so it changes nothing: a request in flight fails after request.timeout.ms"},
	{name: "controller.socket.timeout.ms", min: 1, int: func(c *Config) *int64 { return &c.ControllerSocketTimeoutMs }, doc: "the request timeout of a broker's AlterPartition to the controller (3.7; NodeToControllerChannelManager's NetworkClient); otherwise a connect timeout (awaitReady), which changes nothing here: the controller's own requests and a ControlledShutdown time out after request.timeout.ms"},
	{name: "num.replica.fetchers", min: 1, int: func(c *Config) *int64 { return &c.NumReplicaFetchers }, doc: "fetcher threads per source broker"},
	{name: "min.insync.replicas", min: 1, int: func(c *Config) *int64 { return &c.MinInsyncReplicas }, doc: "acks=all gate, and (3.7) the HW gate"},
	{name: "unclean.leader.election.enable", bool: func(c *Config) *bool { return &c.UncleanLeaderElectionEnable }, doc: "elect an out-of-sync replica when no ISR member is alive"},
	{name: "replica.high.watermark.checkpoint.interval.ms", min: 1, int: func(c *Config) *int64 { return &c.HighWatermarkCheckpointMs }, doc: "how often the HW checkpoint file is written"},
	{name: "log.flush.interval.messages", min: 1, int: func(c *Config) *int64 { return &c.LogFlushIntervalMessages }, doc: "fsync after this many appended records (default: never)"},
	{name: "log.flush.offset.checkpoint.interval.ms", min: 1, int: func(c *Config) *int64 { return &c.LogFlushOffsetCheckpointIntervalMs }, doc: "how often the recovery-point checkpoint file is written (first 30 s after the broker starts)"},
	{name: "zookeeper.session.timeout.ms", min: 1, int: func(c *Config) *int64 { return &c.ZookeeperSessionTimeoutMs }, doc: "how long until a silent broker is declared dead"},
	{name: "inter.broker.protocol.version", str: func(c *Config) *string { return &c.InterBrokerProtocolVersion }, allowed: Eras, doc: "the protocol era"},
	{name: "auto.leader.rebalance.enable", bool: func(c *Config) *bool { return &c.AutoLeaderRebalanceEnable }, doc: "periodic preferred-leader elections"},
	{name: "leader.imbalance.check.interval.seconds", min: 1, int: func(c *Config) *int64 { return &c.LeaderImbalanceCheckIntervalS }, doc: "how often the controller checks leader imbalance"},
	{name: "leader.imbalance.per.broker.percentage", min: 0, int: func(c *Config) *int64 { return &c.LeaderImbalancePerBrokerPct }, doc: "imbalance that triggers preferred elections"},
	{name: "request.timeout.ms", min: 1, int: func(c *Config) *int64 { return &c.RequestTimeoutMs }, doc: "producer request timeout (acks=all waits this long in purgatory); the brokers' requests (a follower's fetches, the controller's) time out after it too"},
	{name: "delivery.timeout.ms", min: 1, int: func(c *Config) *int64 { return &c.DeliveryTimeoutMs }, doc: "how long a producer keeps retrying a send"},
	{name: "retry.backoff.ms", min: 0, int: func(c *Config) *int64 { return &c.RetryBackoffMs }, doc: "producer backoff before a retry"},
	{name: "retry.backoff.max.ms", min: 0, int: func(c *Config) *int64 { return &c.RetryBackoffMaxMs }, doc: "the most a producer's backoff grows to, doubling per failed attempt (3.7, KIP-580; the random ±20% is not modelled)"},
	{name: "enable.idempotence", bool: func(c *Config) *bool { return &c.EnableIdempotence }, doc: "the producer's batches carry a producer id and sequence numbers, and a leader does not append a retried batch it already has (default: on in 3.7, off before; needs 0.11.0+)"},
	{name: "fetch.max.wait.ms", min: 0, int: func(c *Config) *int64 { return &c.FetchMaxWaitMs }, doc: "how long a consumer's fetch may wait in the leader's purgatory for fetch.min.bytes below the high watermark (ConsumerConfig: 500 in every era)"},
	{name: "fetch.min.bytes", min: 0, int: func(c *Config) *int64 { return &c.FetchMinBytes }, doc: "bytes below the high watermark a consumer's fetch waits for (ConsumerConfig: 1 in every era)"},
	{name: "controlled.shutdown.enable", bool: func(c *Config) *bool { return &c.ControlledShutdownEnable }, doc: "a shutdown moves leadership away first (ControlledShutdown to the controller); false: the broker stops at once and the controller hears of it from its closed ZooKeeper session"},
	{name: "controlled.shutdown.max.retries", min: 0, int: func(c *Config) *int64 { return &c.ControlledShutdownMaxRetries }, doc: "controlled-shutdown requests a broker sends before it stops anyway"},
	{name: "controlled.shutdown.retry.backoff.ms", min: 0, int: func(c *Config) *int64 { return &c.ControlledShutdownRetryBackoffMs }, doc: "wait between controlled-shutdown attempts"},
	{name: "max.incremental.fetch.session.cache.slots", min: 0, int: func(c *Config) *int64 { return &c.MaxIncrementalFetchSessionSlots }, doc: "fetch sessions a broker keeps (KIP-227, 1.1+); a full cache evicts a stale or smaller one, else the new session is not created"},
	{name: "sim.network.latency.ms", min: 0, int: func(c *Config) *int64 { return &c.NetworkLatencyMs }, doc: "one-way delay of every message unless a link says otherwise"},
	{name: "sim.network.jitter.ms", min: 0, int: func(c *Config) *int64 { return &c.NetworkJitterMs }, doc: "extra random delay per message, 0..jitter ms, from the seeded PRNG; links stay FIFO"},
	{name: "sim.record.size.bytes", min: 1, int: func(c *Config) *int64 { return &c.RecordSizeBytes }, doc: "the size of one record, for the byte limits of fetches"},
}

// ConfigNames returns every accepted config name, sorted.
func ConfigNames() []string {
	names := make([]string, 0, len(configKeys))
	for _, k := range configKeys {
		names = append(names, k.name)
	}
	slices.Sort(names)
	return names
}

func findConfigKey(name string) (configKey, bool) {
	for _, k := range configKeys {
		if k.name == name {
			return k, true
		}
	}
	return configKey{}, false
}

// Set applies one setting given as JSON. The error names the setting and the problem.
func (c *Config) Set(name string, raw json.RawMessage) error {
	k, ok := findConfigKey(name)
	if !ok {
		return fmt.Errorf("config.%s: unknown config name (known: %s)", name, strings.Join(ConfigNames(), ", "))
	}
	if isNull(raw) {
		return nil // null is a value not given: the setting keeps its default (or current value)
	}
	switch {
	case k.int != nil:
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			var ok bool
			if v, ok = kafkaIntString(raw); !ok {
				return fmt.Errorf("config.%s: want an integer, got %s", name, raw)
			}
		}
		if v < k.min {
			return fmt.Errorf("config.%s: %d is below the minimum %d", name, v, k.min)
		}
		*k.int(c) = v
	case k.bool != nil:
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			var ok bool
			if v, ok = kafkaBoolString(raw); !ok {
				return fmt.Errorf("config.%s: want true or false, got %s", name, raw)
			}
		}
		*k.bool(c) = v
	case k.str != nil:
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("config.%s: want a string, got %s", name, raw)
		}
		if name == ibpName {
			key := ibpKey(v)
			if why, ok := ibpUnmodelled[key]; ok {
				return fmt.Errorf("config.%s: %q is a valid Kafka version, but not a modelled era: %s", name, v, why)
			}
			if era, ok := ibpSubVersions[key]; ok {
				key = era
			}
			v = key
		}
		if !slices.Contains(k.allowed, v) {
			return fmt.Errorf("config.%s: %q is not one of %s", name, v, strings.Join(k.allowed, ", "))
		}
		*k.str(c) = v
	}
	return nil
}

// kafkaIntString reads an integer setting written as a JSON string ("2"), as a Kafka properties
// file holds every value: ConfigDef.parseType (0.10.2.2 to 3.7.0) trims a String and parses it
// for INT and LONG.
func kafkaIntString(raw json.RawMessage) (int64, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}

// kafkaBoolString reads a boolean setting written as a JSON string: ConfigDef.parseType takes
// "true" or "false" in any case, trimmed.
func kafkaBoolString(raw json.RawMessage) (bool, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// ibpSubVersions maps the internal versions ("-IVn") of each era's release that the era models
// exactly to the era: the ApiVersion entries of 0.10.2.2 and 0.11.0.2 and the KAFKA_2_1_IVn
// objects of 2.1.1 (ApiVersion.scala), and IBP_3_7_IV0..IV4 of 3.7.0 (MetadataVersion.java).
// 0.11.0-IV2 brought KIP-101's leader-epoch fetches and 2.1-IV1 KIP-320's fencing; the later
// sub-versions changed nothing the engine models (2.1-IV2: ZStandard; 3.7's: KRaft
// registration, JBOD in KRaft, Fetch v16 of KIP-951, which ZooKeeper mode does not use).
var ibpSubVersions = map[string]string{
	"0.10.2-IV0": "0.10.2",
	"0.11.0-IV2": "0.11.0",
	"2.1-IV1":    "2.1", "2.1-IV2": "2.1",
	"3.7-IV0": "3.7", "3.7-IV1": "3.7", "3.7-IV2": "3.7", "3.7-IV3": "3.7", "3.7-IV4": "3.7",
}

// ibpUnmodelled lists the sub-versions that Kafka accepts but whose replication rules are none
// of the eras' (a simplification, docs/simplifications.md), each with the reason.
var ibpUnmodelled = map[string]string{
	"0.11.0-IV0": "it predates KIP-101's leader-epoch fetches (0.11.0-IV2); use 0.10.2 or 0.11.0",
	"0.11.0-IV1": "it predates KIP-101's leader-epoch fetches (0.11.0-IV2); use 0.10.2 or 0.11.0",
	"2.1-IV0":    "it predates KIP-320's current leader epoch in fetches (2.1-IV1); use 2.1",
}

// ibpKey is the key an inter.broker.protocol.version is looked up by, read as Kafka reads it
// (2.1.1 ApiVersion.apply, 3.7.0 MetadataVersion.fromVersionString): the first three
// dot-separated parts of a version starting "0.", else the first two, so "3.7.0" and "3.7.1"
// are "3.7", "2.1.1" is "2.1", "0.10.2.2" is "0.10.2" and "3.7-IV4" stays "3.7-IV4" (a
// sub-version, ibpSubVersions). Anything else is returned as given (the caller rejects what is
// not an era).
func ibpKey(v string) string {
	n := 2
	if strings.HasPrefix(v, "0.") {
		n = 3
	}
	parts := strings.Split(v, ".")
	if len(parts) <= n {
		return v
	}
	return strings.Join(parts[:n], ".")
}

// Values returns every setting as name → JSON value, for views and replay records.
func (c Config) Values() map[string]any {
	out := make(map[string]any, len(configKeys))
	for _, k := range configKeys {
		switch {
		case k.int != nil:
			out[k.name] = *k.int(&c)
		case k.bool != nil:
			out[k.name] = *k.bool(&c)
		case k.str != nil:
			out[k.name] = *k.str(&c)
		}
	}
	return out
}

// EraChangedDefaults lists the settings of c that are at their era's default where that default
// is not 3.7's, each with 3.7's default (nil for none), so a reader can say what the era changed.
func EraChangedDefaults(c Config) map[string]any {
	now, era, latest := c.Values(), EraDefaults(c.InterBrokerProtocolVersion).Values(), DefaultConfig().Values()
	var out map[string]any
	for _, name := range sortedKeys(era) {
		if name != ibpName && era[name] != latest[name] && now[name] == era[name] {
			if out == nil {
				out = map[string]any{}
			}
			out[name] = latest[name]
		}
	}
	return out
}
