package engine

import "testing"

// TestKillOfADeadBroker: a kill of a broker that is already down is not a misuse that ends the
// run. Without loseUnflushed it changes nothing; with it, the machine loses power after its
// process crashed, and the page cache goes with the records past the last flush
// (log.flush.interval.messages 2: Log.append flushes every second record).
func TestKillOfADeadBroker(t *testing.T) {
	e, r2 := withOneUnflushed(t, nil)
	apply(t, e, `{"do":"kill","broker":2}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"kill","broker":2}`)
	if leo := r2.Log().LogEndOffset(); leo != 3 || !e.brokers[2].Dead() {
		t.Fatalf("after a second plain kill: LEO %d, dead %v; want 3 (the page cache kept), dead", leo, e.brokers[2].Dead())
	}
	apply(t, e, `{"do":"kill","broker":2,"loseUnflushed":true}`)
	if leo := r2.Log().LogEndOffset(); leo != 2 {
		t.Fatalf("after the power loss of a dead broker: LEO %d, want 2 (the last flush)", leo)
	}
	apply(t, e, `{"do":"restart","broker":2}`)
	runFor(t, e, 2000)
	if e.brokers[2].Dead() || r2.Log().LogEndOffset() != 3 {
		t.Fatalf("after the restart: dead %v, LEO %d; want running, caught up to 3", e.brokers[2].Dead(), r2.Log().LogEndOffset())
	}
}

// withOneUnflushed builds t-0 on brokers 1 and 2 with log.flush.interval.messages 2 (and cfg) and
// writes three records: the first two flushed on both replicas, the third not. It returns the
// engine and broker 2's replica.
func withOneUnflushed(t *testing.T, cfg map[string]string) (*Engine, *replica) {
	t.Helper()
	all := map[string]string{"log.flush.interval.messages": "2"}
	for k, v := range cfg {
		all[k] = v
	}
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, all)
	pid := e.partitionOf(ktTopic, 0).pid
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":2}`) // flushed on both
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`) // not flushed
	runFor(t, e, 800)
	return e, e.replicaOn(pid, 2)
}
