package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit 12, the controller's StopReplica through its per-broker request queue, against each era's
// Kafka source (tags 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0). Each test names the Kafka function it
// follows.

// messageTimes lists when messages of type typ were sent to broker to (from the controller) or,
// for an answer, by broker to.
func messageTimes(evs []Event, typ string, to int32) []int64 {
	var out []int64
	for _, ev := range eventsOf(evs, typ, func(ev Event) bool { return ev.Message.To == to || ev.Message.From == to }) {
		out = append(out, ev.T)
	}
	return out
}

// stopReplicaSetup: brokers 0 (the controller), 1, 2; t-0 [0,1,2] led by 0, t-1 [1,2,0] and t-2
// [1,2] led by 1. Broker 2's controlled shutdown at 1000 takes it out of every ISR, so at 2000,
// when broker 1 asks to shut down, t-1 can move to 0 but t-2 has no other ISR member: broker 1's
// attempt fails ("1 partition still led") and it stays up for its retry backoff, which is what
// lets the requests queued for it arrive.
func stopReplicaSetup(t *testing.T, era string, cfg map[string]string) *Engine {
	t.Helper()
	c := eraCfg(era)
	for k, v := range cfg {
		c[k] = v
	}
	e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}, {1, 2, 0}, {1, 2}}, c)
	runFor(t, e, 1000)
	apply(t, e, `{"do":"shutdown","broker":2}`)
	runFor(t, e, 1000)
	e.Drain()
	apply(t, e, `{"do":"shutdown","broker":1}`)
	return e
}

// TestAudit12StopReplicaQueuesBehindLeaderAndIsr: KafkaController.doControlledShutdown (2.1.1,
// 3.7.0; the engine groups 0.10.2.2's per-partition walk the same way) sends the election of t-1
// (broker 1 led it) as a LeaderAndIsr to brokers 0 and 1, then StopReplica to broker 1 for t-0
// (it follows it), then t-0's OfflineReplica (ZkReplicaStateMachine: the shrunk ISR to broker 0,
// StopReplica to broker 1 again). All go through ControllerChannelManager.sendRequest to one
// queue per broker, and the broker's RequestSendThread.doWork sends the next only when the last
// was answered. Each batch with a LeaderAndIsr also sends every live broker an UpdateMetadata,
// after its LeaderAndIsr requests and before its StopReplica (sendRequestsToBrokers): broker 1's
// queue is LeaderAndIsr, UpdateMetadata, StopReplica, UpdateMetadata (the OfflineReplica batch's,
// whose LeaderAndIsr goes to broker 0 only), StopReplica. With 1 ms links: the ControlledShutdown
// reaches the controller at 2001; the LeaderAndIsr leaves at 2001 and broker 1 answers it at
// 2002; the UpdateMetadata leaves at 2003; only then, at 2005, does the first StopReplica leave;
// broker 1 answers it at 2006 (KafkaApis.handleStopReplicaRequest: NONE, t-0 NONE) and stops its
// fetcher for t-0 then; the second UpdateMetadata leaves at 2007, the second StopReplica at 2009,
// answered at 2010. Before, the StopReplica left at 2001, beside the LeaderAndIsr. In 2.1 (1.1 to
// 2.2) each StopReplica batch is an empty request, then one per partition (doControlledShutdown
// and ReplicaStateMachine's OfflineReplica pass a callback, and sendRequestsToBrokers groups only
// the StopReplicas without one; audit 15, TestAudit15StopReplicaOneRequestPerPartition): four
// StopReplicas, at 2005, 2007, 2011 and 2013, and the fetcher stops at 2008 with the second.
func TestAudit12StopReplicaQueuesBehindLeaderAndIsr(t *testing.T) {
	for _, c := range []struct {
		era          string
		sent, answer []int64
		withT0       []bool // each answer names t-0 (else it is the empty request's)
		stop         int64
	}{
		{"0.10.2", []int64{2005, 2009}, []int64{2006, 2010}, []bool{true, true}, 2006},
		{"2.1", []int64{2005, 2007, 2011, 2013}, []int64{2006, 2008, 2012, 2014}, []bool{false, true, false, true}, 2008},
		{"3.7", []int64{2005, 2009}, []int64{2006, 2010}, []bool{true, true}, 2006},
	} {
		t.Run(c.era, func(t *testing.T) {
			e := stopReplicaSetup(t, c.era, nil)
			runFor(t, e, 100)
			evs := e.Drain()
			if got := messageTimes(evs, MsgLeaderAndIsrResponse, 1); !slices.Equal(got, []int64{2002}) {
				t.Errorf("broker 1 answered LeaderAndIsr at %v, want [2002]", got)
			}
			// The OfflineReplica batch's UpdateMetadata leaves a round trip before its StopReplica.
			if got, second := messageTimes(evs, MsgUpdateMetadata, 1), c.sent[len(c.sent)/2]-2; !slices.Equal(got, []int64{2003, second}) {
				t.Errorf("UpdateMetadata to broker 1 sent at %v, want [2003 %d] (after each batch's LeaderAndIsr)", got, second)
			}
			if got := messageTimes(evs, MsgStopReplica, 1); !slices.Equal(got, c.sent) {
				t.Errorf("StopReplica to broker 1 sent at %v, want %v (each after the last request to it was answered)", got, c.sent)
			}
			answers := eventsOf(evs, MsgStopReplicaResponse, onBroker(1))
			var at []int64
			for i, a := range answers {
				at = append(at, a.T)
				r := a.Message.StopReplicaResponse
				named := len(r.Partitions) == 1 && r.Partitions[0].TP == (TP{Topic: ktTopic, Partition: 0}) && r.Partitions[0].Error == ErrNone
				if r.Error != ErrNone || i >= len(c.withT0) || (c.withT0[i] && !named) || (!c.withT0[i] && len(r.Partitions) != 0) {
					t.Errorf("StopReplica answer %d %+v, want NONE with t-0 NONE: %v", i, r, i < len(c.withT0) && c.withT0[i])
				}
			}
			if !slices.Equal(at, c.answer) {
				t.Errorf("broker 1 answered StopReplica at %v, want %v", at, c.answer)
			}
			stopped := eventsOf(evs, EvFetcher, func(ev Event) bool { return ev.Broker.Set && ev.Broker.V == 1 && ev.Reason == "stopped" })
			if len(stopped) != 1 || stopped[0].T != c.stop {
				t.Errorf("broker 1's fetcher stops: %v, want one at %d (the StopReplica)", stopped, c.stop)
			}
		})
	}
}

// TestAudit12StopReplicaRetriedOnCutLink: RequestSendThread.doWork (0.10.2.2, 3.7.0) resends a
// request that failed (here timed out: request.timeout.ms 3000) after backoff(), 100 ms, as long
// as the thread runs. The link from the controller to broker 1 is cut at 2002, after broker 1
// answered the LeaderAndIsr: the election batch's UpdateMetadata, next in broker 1's queue, leaves
// at 2003 and is held, times out at 5003, leaves again at 5103, times out at 8103, leaves again at
// 8203. The heal at 9000 lets the held copy through (TCP retransmits it, here at 9603); broker 1
// answers at 9604 and only then does the first StopReplica leave (9605), answered at 9606; then
// the OfflineReplica batch's UpdateMetadata (9607) and the second StopReplica (9609, answered at
// 9610). (controlled.shutdown.retry.backoff.ms 60000 keeps broker 1's own retry out of the window.)
func TestAudit12StopReplicaRetriedOnCutLink(t *testing.T) {
	for _, era := range []string{"0.10.2", "3.7"} {
		t.Run(era, func(t *testing.T) {
			e := stopReplicaSetup(t, era, map[string]string{"request.timeout.ms": "3000", "controlled.shutdown.retry.backoff.ms": "60000"})
			runFor(t, e, 2)
			apply(t, e, `{"do":"link","from":0,"to":1,"down":true}`)
			runFor(t, e, 6998)
			apply(t, e, `{"do":"heal"}`)
			runFor(t, e, 2000)
			evs := e.Drain()
			if got := messageTimes(evs, MsgUpdateMetadata, 1); !slices.Equal(got, []int64{2003, 5103, 8203, 9607}) {
				t.Errorf("UpdateMetadata to broker 1 sent at %v, want [2003 5103 8203 9607] (resent 100 ms after each timeout)", got)
			}
			if got := messageTimes(evs, MsgUpdateMetadataResponse, 1); !slices.Equal(got, []int64{9604, 9608}) {
				t.Errorf("broker 1 answered UpdateMetadata at %v, want [9604 9608]", got)
			}
			if got := messageTimes(evs, MsgStopReplica, 1); !slices.Equal(got, []int64{9605, 9609}) {
				t.Errorf("StopReplica to broker 1 sent at %v, want [9605 9609] (each after the request before it was answered)", got)
			}
			if got := messageTimes(evs, MsgStopReplicaResponse, 1); !slices.Equal(got, []int64{9606, 9610}) {
				t.Errorf("broker 1 answered StopReplica at %v, want [9606 9610]", got)
			}
		})
	}
}

// TestAudit12StopReplicaDroppedOnReregistration: the held request (the election batch's
// UpdateMetadata, with both StopReplicas queued behind it) is for broker 1, killed at 2500 and
// restarted at 3000. While it stays registered the controller keeps resending (the crash resets
// the connection: refused at 2500, failed one latency later at 2501, resent at 2601). When the
// controller sees the broker's registration go (3.7: the restart re-registers at once with a new
// broker epoch, a bounce that processBrokerChange handles as onBrokerFailure then
// onBrokerStartup; 0.10.2: the old session expires at 8500, 6000 ms after the kill, and the
// restart registers then), removeBroker stops its RequestSendThread and the queue goes: no
// StopReplica ever leaves, and none is answered. The new registration's requests go on the new
// queue: onBrokerStartup's UpdateMetadata first, with every partition's state (0.10.2: to every
// live broker; 3.7, KAFKA-7537: the full one to the new broker only), at the registration; its
// LeaderAndIsr only after that is answered, which the cut link delays until the heal (100 ms after
// the registration) and TCP's retransmission (200 ms after the registration).
func TestAudit12StopReplicaDroppedOnReregistration(t *testing.T) {
	for _, c := range []struct {
		era        string
		registered int64
		sends      []int64
	}{{"0.10.2", 8500, []int64{2003, 2601, 5701, 8500}}, {"3.7", 3000, []int64{2003, 2601, 3000}}} {
		t.Run(c.era, func(t *testing.T) {
			e := stopReplicaSetup(t, c.era, map[string]string{"request.timeout.ms": "3000", "controlled.shutdown.retry.backoff.ms": "60000"})
			runFor(t, e, 2)
			apply(t, e, `{"do":"link","from":0,"to":1,"down":true}`)
			runFor(t, e, 498)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 500)
			apply(t, e, `{"do":"restart","broker":1}`)
			runFor(t, e, c.registered+100-e.now)
			apply(t, e, `{"do":"heal"}`)
			runFor(t, e, 5000)
			evs := e.Drain()
			var sends []int64 // UpdateMetadata to broker 1 before its new registration's answers
			for _, ev := range eventsOf(evs, MsgUpdateMetadata, func(ev Event) bool { return ev.Message.To == 1 && ev.T <= c.registered }) {
				sends = append(sends, ev.T)
			}
			if !slices.Equal(sends, c.sends) {
				t.Errorf("UpdateMetadata to broker 1 sent at %v, want %v (the old queue's resent, then the new registration's)", sends, c.sends)
			}
			if got := eventsOf(evs, MsgUpdateMetadata, func(ev Event) bool { return ev.Message.To == 1 && ev.T == c.registered }); len(got) != 1 ||
				got[0].Message.UpdateMetadata.BrokerEpoch != e.ctrl.LiveBrokerEpoch(1) || got[0].Message.UpdateMetadata.Partitions != 3 {
				t.Errorf("UpdateMetadata to the new registration at %d: %d, want one with its broker epoch and 3 partition states", c.registered, len(got))
			}
			if got := messageTimes(evs, MsgStopReplica, 1); len(got) != 0 {
				t.Errorf("StopReplica to broker 1 sent at %v, want never (queued behind the held UpdateMetadata, then dropped with the queue)", got)
			}
			if got := messageTimes(evs, MsgStopReplicaResponse, 1); len(got) != 0 {
				t.Errorf("broker 1 answered StopReplica at %v, want never", got)
			}
			lai := eventsOf(evs, MsgLeaderAndIsr, func(ev Event) bool { return ev.Message.To == 1 && ev.T >= c.registered })
			if len(lai) == 0 || lai[0].T != c.registered+202 || lai[0].Message.LeaderAndIsr.BrokerEpoch != e.ctrl.LiveBrokerEpoch(1) {
				t.Errorf("LeaderAndIsr to the new registration: %v, want the first at %d with its broker epoch", fmt.Sprint(len(lai)), c.registered+202)
			}
		})
	}
}

// TestAudit12StopReplicaAnswerOfAnOfflineReplica: ReplicaManager.stopReplicas answers a replica on
// an offline log directory KAFKA_STORAGE_ERROR and leaves it alone (HostedPartition.Offline,
// from 2.6 with KIP-570's StopReplica v3; 3.7.0); 2.1.1's stopReplicas stops nothing on disk for
// a stop that deletes nothing and answers NONE. Follower 1 of t-0 [0,1,2] loses its disk at 1000
// and shuts down at 2000: the controller sends it only StopReplica (it leads nothing), at once
// (its queue is empty), answered at 2002 before the ControlledShutdown answer stops it. In 2.1
// that first StopReplica is the batch's empty one (sendRequestsToBrokers' group of the
// StopReplicas without a callback, audit 15): the one naming t-0 waits for its answer, and broker
// 1 stops before it comes, so the answer names no partition.
func TestAudit12StopReplicaAnswerOfAnOfflineReplica(t *testing.T) {
	for _, c := range []struct {
		era  string
		want KafkaError
	}{{"2.1", ErrNone}, {"3.7", ErrKafkaStorage}} {
		t.Run(c.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg(c.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"failDisk","broker":1}`)
			runFor(t, e, 1000)
			e.Drain()
			apply(t, e, `{"do":"shutdown","broker":1}`)
			runFor(t, e, 100)
			answers := eventsOf(e.Drain(), MsgStopReplicaResponse, onBroker(1))
			if len(answers) != 1 || answers[0].T != 2002 {
				t.Fatalf("StopReplica answers %v, want one at 2002", answers)
			}
			r := answers[0].Message.StopReplicaResponse
			if c.era == "2.1" {
				if r.Error != ErrNone || len(r.Partitions) != 0 {
					t.Errorf("StopReplica answer %+v, want NONE for no partition", r)
				}
				return
			}
			if r.Error != ErrNone || len(r.Partitions) != 1 || r.Partitions[0].Error != c.want {
				t.Errorf("StopReplica answer %+v, want NONE with t-0 %s", r, c.want)
			}
		})
	}
}
