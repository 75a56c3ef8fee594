package engine

import "testing"

// TestKafkaLogDirFailureBeforeKIP112: from inter.broker.protocol.version 1.0 (KIP-112) a failed
// log directory takes its replicas offline and the broker runs on: the controller elects
// elsewhere and shrinks the ISR. Below 1.0 the broker halts (LogDirFailureHandler with
// haltBrokerOnFailure; 0.10.2's and 0.11.0's ReplicaManager halt on the storage error): it is down
// at once, and its ZooKeeper session lives until it expires, when the controller moves its
// leadership.
func TestKafkaLogDirFailureBeforeKIP112(t *testing.T) {
	for _, c := range []struct {
		era  string
		halt bool
	}{{"0.10.2", true}, {"0.11.0", true}, {"2.1", false}, {"3.7", false}} {
		t.Run(c.era, func(t *testing.T) {
			cfg := eraCfg(c.era)
			cfg["auto.leader.rebalance.enable"] = "false"
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, cfg)
			runFor(t, e, 100)
			apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
			runFor(t, e, 900)
			apply(t, e, `{"do":"failDisk","broker":0}`)
			b0 := e.Broker(0)
			if b0.Dead != c.halt || !b0.DiskFailed {
				t.Fatalf("right after the failure: broker 0 down %v, disk failed %v; want down %v, disk failed", b0.Dead, b0.DiskFailed, c.halt)
			}
			halts := eventsOf(e.Drain(), EvLogDirFailure, func(ev Event) bool { return ev.Reason == "halt" })
			if (len(halts) == 1) != c.halt {
				t.Errorf("%d halt events, want them only before KIP-112", len(halts))
			}
			runFor(t, e, 2000)
			p := e.Partition(0)
			if moved := p.Leader() != 0; moved == c.halt {
				t.Errorf("at 3 s the leader is %d: before KIP-112 it moves only when broker 0's session expires (6 s), after it moves at once", p.Leader())
			}
			runFor(t, e, 7000)
			if p.Leader() == 0 || p.Leader() < 0 {
				t.Errorf("at 10 s the leader is %d, want broker 1 or 2", p.Leader())
			}
		})
	}
}
