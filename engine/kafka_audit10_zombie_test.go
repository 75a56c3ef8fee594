package engine

import (
	"slices"
	"testing"
)

// Audit 10, isolation, zombie leaders and links, against each era's Kafka source (tags 0.10.2.2,
// 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it follows.

// TestAudit10HeldAlterPartitionOwnConnection: a zombie leader healed before its ZooKeeper session
// expired sends on what its cut links held, each message with its own connection's TCP
// retransmission. Its AlterPartition (3.7.0: DefaultAlterPartitionManager on the broker's own
// "alter-partition" NodeToControllerChannelManagerImpl, a NetworkClient of its own) does not
// share a connection with the answer it held for the controller's broker's fetcher thread (the
// follower's ReplicaFetcherThread, BrokerBlockingSender, opened that connection): the shrink sent
// at 6000 into the cut is retransmitted at 9000 (200+400+800+1600 ms), not behind the fetch
// answer held since 1105 (its retransmission at 13705). So the controller's ISR is [1] from 9001
// and the acks=all produce appended at 2001 is acknowledged then (the HW passes it once the
// AlterPartition answer commits the shrink: Partition.handleAlterPartitionUpdate →
// maybeIncrementLeaderHW).
func TestAudit10HeldAlterPartitionOwnConnection(t *testing.T) {
	cfg := eraCfg("3.7")
	cfg["replica.lag.time.max.ms"] = "4000" // shrink checks every 2000 ms; the session is 18000
	e := newKafkaEngine(t, 3, [][]int32{{1, 2, 0}}, cfg)
	p := e.partitionOf(ktTopic, 0)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"isolate","broker":1}`)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1}`)
	runFor(t, e, 6000) // the 6000 check finds both followers out of sync: AlterPartition, held
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1, 2}) {
		t.Fatalf("ISR %v before the heal, want [0 1 2]", isr)
	}
	apply(t, e, `{"do":"heal","broker":1}`) // at 8000
	runFor(t, e, 1000)
	if isr := e.ctrl.ISR(p.pid); !slices.Equal(isr, []int32{0, 1, 2}) {
		t.Fatalf("ISR %v at 9000, want [0 1 2] (the AlterPartition arrives at 9001)", isr)
	}
	runFor(t, e, 5)
	if isr, a := e.ctrl.ISR(p.pid), e.client(p).Acked(); !slices.Equal(isr, []int32{1}) || a != 1 {
		t.Fatalf("at 9005: ISR %v, acked %d; want [1] and 1 (AlterPartition retransmitted at 9000 on its own connection)", isr, a)
	}
}
