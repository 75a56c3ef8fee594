package engine

import (
	"slices"
	"strings"
	"testing"
)

// Audit 14, the producer's connection: a request that times out closes its connection, and
// every other request in flight on it fails at that instant.

// connScenario: t-0 on [0,1,2], leader 0 isolated at 1000 (zookeeper.session.timeout.ms 60000:
// it stays leader); a produce at 2000 is acknowledged at offset 0 (the followers, cut off, are
// then behind: 2.1 shrinks only a follower behind the leader's LEO), the shrink
// (replica.lag.time.max.ms 2000) at 3000 blocks on ZooKeeper (zkBlockedWrite), and produces A
// (6000) and B (7000), acks=1, wait behind it for the partition's lock. request.timeout.ms 5000: A times out at 11000. The heal at 11500 lets the
// write through and the broker appends every produce that waited, in the order they came.
const connScenario = `{"name":"conn","brokers":3,"config":{"inter.broker.protocol.version":"%v","zookeeper.session.timeout.ms":60000,
"replica.lag.time.max.ms":2000,"request.timeout.ms":5000},"topics":[{"name":"t","assignment":[[0,1,2]]}],
"steps":[{"at":1000,"do":"isolate","broker":0},{"at":2000,"do":"produce","topic":"t","partition":0,"acks":1},{"at":6000,"do":"produce","topic":"t","partition":0,"acks":1},
{"at":7000,"do":"produce","topic":"t","partition":0,"acks":1},{"at":11500,"do":"heal"},{"at":15000,"do":"expect","acked":%a}]}`

// TestAudit14TimeoutClosesConnection follows NetworkClient.handleTimedOutRequests (0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0): at A's timeout (11000) the client closes the connection to broker 0
// (selector.close) and processDisconnection fails every request in flight on it, B too, at
// 11000, as disconnected (Sender.handleProduceResponse: NETWORK_EXCEPTION). 0.10.2 (retries 0):
// both fail, and A and B, appended at the heal, answer a closed connection: acked 1, LEO 3.
// 2.1 (retries until delivery.timeout.ms): both are retried at 11100 (retry.backoff.ms 100) and
// wait for the lock too; at the heal the broker appends A, B (their connection gone) and both
// retries: LEO 5, acked 3. The engine timed B out on its own at 12000: B's first request was
// appended and acknowledged at the heal (0.10.2: acked 2; 2.1: B sent once, LEO 4).
func TestAudit14TimeoutClosesConnection(t *testing.T) {
	cases := []struct {
		era      string
		acked    string
		results  []string
		attempts []int
		leo      int64
	}{
		{"0.10.2", "1", []string{ResultAcked, "NETWORK_EXCEPTION", "NETWORK_EXCEPTION"}, []int{1, 1, 1}, 3},
		{"0.11.0", "1", []string{ResultAcked, "NETWORK_EXCEPTION", "NETWORK_EXCEPTION"}, []int{1, 1, 1}, 3},
		{"2.1", "3", []string{ResultAcked, ResultAcked, ResultAcked}, []int{1, 2, 2}, 5},
	}
	for _, c := range cases {
		sc := strings.NewReplacer("%v", c.era, "%a", c.acked).Replace(connScenario)
		e, results, attempts := runAudit14Results(t, sc)
		if !slices.Equal(results, c.results) || !slices.Equal(attempts, c.attempts) {
			t.Errorf("%s: %v after %v attempts, want %v after %v", c.era, results, attempts, c.results, c.attempts)
		}
		if leo := e.brokers[0].Replica(0).Log().LogEndOffset(); leo != c.leo {
			t.Errorf("%s: leader's LEO %d, want %d", c.era, leo, c.leo)
		}
	}
}
