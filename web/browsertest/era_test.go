//go:build !js

package browsertest

import (
	"strings"
	"testing"
)

// TestEraDefaultsShown: the page says which Kafka release's rules a cluster runs and which of that
// era's defaults differ from 3.7's (view.eraDefaults): a 0.10.2 cluster has 6 s ZooKeeper
// sessions and unclean election on unless its scenario sets them.
func TestEraDefaultsShown(t *testing.T) {
	p := newPage(t, "?preset=kip101-hw-truncation-0.10.2.json", 1280, 900)
	p.loaded()
	line := evalJS[string](p, `document.getElementById("era-line").textContent`)
	for _, want := range []string{"Kafka 0.10.2 rules", "zookeeper.session.timeout.ms = 6000 (3.7: 18000)",
		"replica.lag.time.max.ms = 10000 (3.7: 30000)", "unclean.leader.election.enable = true (3.7: false)"} {
		if !strings.Contains(line, want) {
			t.Errorf("era line %q: want %q", line, want)
		}
	}
	p.change("preset", "kill-the-leader.json")
	p.wait("the 3.7 preset", `document.getElementById("era-line").textContent === "Kafka 3.7 rules (inter.broker.protocol.version)."`)
}
