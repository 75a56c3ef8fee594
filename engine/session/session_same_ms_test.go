package session

import "testing"

// TestSameMsStepsLikeRun: the page replays a scenario as `highwater run` does (contract: the
// events due at T are processed, then the steps at T in file order). With latency 0 a produce
// at 1000 reaches the leader at 1000, after the expect step that follows it at 1000: that one
// sees acked 0. The session ran the events due at T again before each step at T.
func TestSameMsStepsLikeRun(t *testing.T) {
	sc := `{"name":"s","brokers":3,"config":{"sim.network.latency.ms":0},"topics":[{"name":"t","partitions":1,"replicationFactor":3}],
		"steps":[{"at":1000,"do":"produce","topic":"t","partition":0,"acks":1},
		         {"at":1000,"do":"expect","topic":"t","partition":0,"acked":0},
		         {"at":1001,"do":"expect","topic":"t","partition":0,"acked":1}]}`
	s := New(Limits{})
	ok(t, do(t, s, `{"id":1,"op":"load","scenario":`+sc+`}`))
	r := ok(t, do(t, s, `{"id":2,"op":"advance","to":2000}`))
	if len(r.Expects) != 2 || !r.Expects[0].OK || !r.Expects[1].OK {
		t.Fatalf("expects %+v, want both held", r.Expects)
	}
}
