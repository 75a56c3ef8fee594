package engine

import (
	"slices"
	"testing"
)

// Audit 14, links and request timeouts, against each era's Kafka source (tags 0.10.2.2, 0.11.0.2,
// 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAudit14AlterPartitionTimesOutAfterControllerSocketTimeout: in 3.7.0 ZooKeeper mode
// KafkaServer.startup (l.383) starts AlterPartitionManager.apply, whose
// NodeToControllerChannelManagerImpl (retryTimeoutMs Long.MaxValue) builds its NetworkClient with
// the request timeout min(config.controllerSocketTimeoutMs, retryTimeoutMs)
// (NodeToControllerChannelManagerImpl.buildNetworkClient l.201), so controller.socket.timeout.ms
// is a setting that decides when an AlterPartition held on a cut link fails; the engine had it
// as a constant 30000 and refused the name. Leader 1 of t-0 [1,2] (replica.lag.time.max.ms 4000)
// has a record at 100, its follower's Fetch link and its own link to controller 0 cut at 1000 and
// an acks=1 record at 2000; the 6000 check finds 2 behind (Replica.isCaughtUp) and shrinks it,
// and the AlterPartition is held. With controller.socket.timeout.ms 5000 it fails at
// 11000 and goes back to the head of the queue (NodeToControllerRequestThread.handleResponse:
// wasDisconnected, putFirst), leaving again after reconnect.backoff.ms 50: sends at 6000, 11050,
// 16100. The link heals at 17000: the request sent at 16100 is retransmitted at 16300, 16700 and
// 17500 (TCP's doubling RTO from 200 ms), reaches the controller at 17501, and ISR [1] is
// committed then.
func TestAudit14AlterPartitionTimesOutAfterControllerSocketTimeout(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["replica.lag.time.max.ms"] = "4000"
	cfg["controller.socket.timeout.ms"] = "5000"
	e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0}`)
	runFor(t, e, 900)
	apply(t, e, `{"do":"link","from":2,"to":1,"down":true}`)
	apply(t, e, `{"do":"link","from":1,"to":0,"down":true}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"acks":1}`)
	runFor(t, e, 14999) // to 16999
	if got, want := alterPartitionSends(e, 1), []int64{6000, 11050, 16100}; !slices.Equal(got, want) {
		t.Fatalf("AlterPartition sent at %v, want %v (controller.socket.timeout.ms 5000, then reconnect.backoff.ms 50)", got, want)
	}
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("ISR %v at 16999, want [1 2] (the link to the controller is cut)", isr)
	}
	apply(t, e, `{"do":"heal"}`)
	runFor(t, e, 500) // to 17499
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("ISR %v at 17499, want [1 2] (the held request's retransmission is due at 17500)", isr)
	}
	runFor(t, e, 2)
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{1}) {
		t.Fatalf("ISR %v at 17501, want [1]", isr)
	}
}

// TestAudit14ControllerChannelWaitsRequestTimeout: the controller's RequestSendThread sends over
// a NetworkClient built with config.requestTimeoutMs in every era
// (ControllerChannelManager.addNewBroker: 0.10.2.2 l.120, 0.11.0.2 l.138, 2.1.1 l.141, 3.7.0
// l.161); controller.socket.timeout.ms is only brokerReady's connect timeout (awaitReady), which
// an established connection never waits. So a LeaderAndIsr held on a cut link fails after
// request.timeout.ms whatever controller.socket.timeout.ms says, and is sent again 100 ms later
// (RequestSendThread.backoff). t-0 [1,2] led by 1, controller 0 (it hosts nothing); the link
// 0 -> 2 goes down at 1000 and leader 1 is killed at 1000; its session (6000 before 2.5, 18000
// in 3.7) expires and the controller elects 2, whose LeaderAndIsr is held: with
// request.timeout.ms 4000 and controller.socket.timeout.ms 9000 the sends to broker 2 are 4100
// ms apart.
func TestAudit14ControllerChannelWaitsRequestTimeout(t *testing.T) {
	for _, era := range Eras {
		t.Run(era, func(t *testing.T) {
			cfg := eraCfg(era)
			cfg["request.timeout.ms"] = "4000"
			cfg["controller.socket.timeout.ms"] = "9000"
			e := newKafkaEngine(t, 3, [][]int32{{1, 2}}, cfg)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"link","from":0,"to":2,"down":true}`)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 30000)
			sends := messageTimes(e.events, MsgLeaderAndIsr, 2)
			if len(sends) < 3 {
				t.Fatalf("LeaderAndIsr to broker 2 sent at %v, want at least 3", sends)
			}
			for i := 1; i < len(sends); i++ {
				if d := sends[i] - sends[i-1]; d != 4100 {
					t.Fatalf("LeaderAndIsr to broker 2 sent at %v: %d ms apart, want 4100 (request.timeout.ms 4000, then 100 ms)", sends, d)
				}
			}
		})
	}
}
