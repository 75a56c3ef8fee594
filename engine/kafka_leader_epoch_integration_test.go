package engine

import (
	"fmt"
	"testing"
)

// TestKafkaShouldIncreaseLeaderEpochBetweenLeaderRestarts ports LeaderEpochIntegrationTest
// .shouldIncreaseLeaderEpochBetweenLeaderRestarts (3.7.0; the test is from 0.11.0, KIP-101). The
// controller is broker 0 (Kafka's 100), which is never restarted; t-0 has one replica, on broker 1
// (101). Each bounce (controlled shutdown, then start) moves the leader epoch up by two: the
// broker's failure writes leader none, its startup elects it again ("The leader epoch goes up in
// factors of 2"). One acks=all record per epoch gives the cache (0,0) (2,1) (4,2), and the
// leader's answers to OffsetsForLeaderEpoch (endOffsetFor) are the test's: epoch 0 ends at 1,
// epoch 1 (no data) answers (0, 1), epoch 2 ends at 2, epoch 4 at the log end, 3.
func TestKafkaShouldIncreaseLeaderEpochBetweenLeaderRestarts(t *testing.T) {
	for _, era := range []string{"0.11.0", "2.1", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := newKafkaEngine(t, 2, [][]int32{{1}}, map[string]string{"inter.broker.protocol.version": fmt.Sprintf("%q", era)})
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			send := func() {
				t.Helper()
				apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
				op := produceOp(e, e.clients.ProduceCount())
				runUntilTrue(t, e, 200000, "the produce answered", func() bool { return op.Done })
				if op.Result != ResultAcked {
					t.Fatalf("produce: %s", op.Result)
				}
			}
			bounce := func() {
				t.Helper()
				apply(t, e, `{"do":"shutdown","broker":1}`)
				runUntilTrue(t, e, 60000, "broker 1 stopped", func() bool { return e.brokers[1].Dead() })
				apply(t, e, `{"do":"restart","broker":1}`)
				runUntilTrue(t, e, 60000, "broker 1 leads again", func() bool {
					r := e.replicaOn(p.pid, 1)
					return e.ctrl.Leader(p.pid) == 1 && r.IsLeader() && r.LeaderEpoch() == e.ctrl.LeaderEpoch(p.pid)
				})
			}
			// check compares the leader's answer to OffsetsForLeaderEpoch(epoch) with (wantEpoch,
			// wantOffset); 0.11.0's answer is an offset only (KIP-279 added the epoch), so there only
			// the offset is compared.
			check := func(step string, epoch, wantEpoch int32, wantOffset int64) {
				t.Helper()
				ep, off := e.era.answerOffsetsForEpoch(e.replicaOn(p.pid, 1).Log(), epoch)
				if off != wantOffset || (era != "0.11.0" && ep != wantEpoch) {
					t.Errorf("%s endOffsetFor(%d) = (%d,%d), want (%d,%d)", step, epoch, ep, off, wantEpoch, wantOffset)
				}
			}
			send()
			check("1.", 0, 0, 1)
			bounce()
			send()
			if e.ctrl.LeaderEpoch(p.pid) != 2 {
				t.Errorf("2. leader epoch %d after one bounce, want 2", e.ctrl.LeaderEpoch(p.pid))
			}
			check("2.", 0, 0, 1)
			check("2.", 1, 0, 1) // no data written in epoch 1
			check("2.", 2, 2, 2)
			bounce()
			send()
			if e.ctrl.LeaderEpoch(p.pid) != 4 {
				t.Errorf("3. leader epoch %d after two bounces, want 4", e.ctrl.LeaderEpoch(p.pid))
			}
			check("3.", 0, 0, 1)
			check("3.", 2, 2, 2)
			check("3.", 4, 4, 3)
			if got := epochsOf(e.replicaOn(p.pid, 1)); got != "(0,0) (2,1) (4,2)" {
				t.Errorf("epoch cache [%s], want [(0,0) (2,1) (4,2)]", got)
			}
		})
	}
}
