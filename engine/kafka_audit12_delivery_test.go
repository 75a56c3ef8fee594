package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAudit12DeliveryTimeoutAtLeastRequestTimeout follows KafkaProducer.configureDeliveryTimeout
// (2.1.1 to 3.7.0): delivery.timeout.ms set below linger.ms + request.timeout.ms is a
// ConfigException; left at its default it is raised to request.timeout.ms (linger.ms 0). The
// client before 2.1 has no delivery.timeout.ms, so the pair is not checked there.
func TestAudit12DeliveryTimeoutAtLeastRequestTimeout(t *testing.T) {
	conf := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	_, err := NewConfig(conf("delivery.timeout.ms", "10000"))
	if err == nil || !strings.Contains(err.Error(), "config.delivery.timeout.ms: 10000") || !strings.Contains(err.Error(), "request.timeout.ms (0 + 30000)") {
		t.Fatalf("delivery 10000 under request 30000: err %v, want a config error naming both", err)
	}
	for _, era := range []string{`"2.1"`, `"3.7"`} {
		c, err := NewConfig(conf(ibpName, era, "request.timeout.ms", "200000"))
		if err != nil || c.DeliveryTimeoutMs != 200000 {
			t.Fatalf("%s, request.timeout.ms 200000 with the default delivery.timeout.ms: %d, %v; want it raised to 200000", era, c.DeliveryTimeoutMs, err)
		}
	}
	if c, err := NewConfig(conf("delivery.timeout.ms", "30000")); err != nil || c.DeliveryTimeoutMs != 30000 {
		t.Fatalf("delivery.timeout.ms equal to request.timeout.ms: %d, %v; want accepted", c.DeliveryTimeoutMs, err)
	}
	for _, era := range []string{`"0.10.2"`, `"0.11.0"`} {
		if _, err := NewConfig(conf(ibpName, era, "delivery.timeout.ms", "10000")); err != nil {
			t.Fatalf("%s has no delivery.timeout.ms to check: %v", era, err)
		}
	}
	// A config step: naming a delivery timeout below the request timeout is refused; raising the
	// request timeout past a delivery timeout it does not name raises that too.
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg("3.7"))
	if err := e.setConfig(conf("delivery.timeout.ms", "5000")); err == nil || !strings.Contains(err.Error(), "set.delivery.timeout.ms: 5000") {
		t.Fatalf("set delivery.timeout.ms 5000: %v, want refused", err)
	}
	if err := e.setConfig(conf("request.timeout.ms", "150000")); err != nil || e.cfg.DeliveryTimeoutMs != 150000 {
		t.Fatalf("set request.timeout.ms 150000: delivery %d, %v; want 150000", e.cfg.DeliveryTimeoutMs, err)
	}
}
