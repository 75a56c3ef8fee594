package engine

import (
	"fmt"
	"slices"
	"testing"
)

// Audit 15, the ISR-change notification before IBP 2.7 (engine/broker/isr_change_notification.go,
// engine/controller/isr_change_notification.go). A leader that wrote an ISR change to ZooKeeper
// records it (ReplicaManager.recordIsrChange); its isr-change-propagation task, every 2500 ms
// from the broker's start, writes /isr_change_notification/isr_change_NNN once the last change is
// more than IsrChangePropagationBlackOut (5000 ms) old or the last write more than
// IsrChangePropagationInterval (60000 ms) ago (maybePropagateIsrChanges; the same at 0.10.2.2,
// 0.11.0.2 and 2.1.1); the controller's watch answers with one UpdateMetadata naming the
// partitions to every live or shutting-down broker (0.10.2.2 IsrChangeNotificationListener,
// 0.11.0.2 and 2.1.1 the IsrChangeNotification event: processUpdateNotifications). 3.7 (IBP 2.7+,
// AlterPartition) sends its UpdateMetadata at the AlterPartition instead (processAlterPartition)
// and runs no such task here.

var isrNotifyEras = []string{"0.10.2", "0.11.0", "2.1"}

// isrNotifyEngine is t-0 on [1,3] with broker 0 the controller hosting nothing, 3 ms links and
// the lag time lag; the links between 1 and 3 go down at 100 and a record is produced to t-0 at
// 200 (acks=1), so 1 shrinks 3 out of the ISR at its first check more than lag after 3's
// Fetch at 3 ms (2.1's KAFKA-7152 needs the record: a follower at the leader's LEO stays).
func isrNotifyEngine(t *testing.T, era string, lag int64) *Engine {
	cfg := umdCfg(era)
	cfg["replica.lag.time.max.ms"] = fmt.Sprint(lag)
	e := newKafkaEngine(t, 4, [][]int32{{1, 3}}, cfg)
	runFor(t, e, 100)
	apply(t, e, `{"do":"link","from":1,"to":3,"down":true}`)
	apply(t, e, `{"do":"link","from":3,"to":1,"down":true}`)
	runFor(t, e, 100)
	apply(t, e, `{"do":"produce","topic":"t","partition":0,"count":1,"acks":1}`)
	return e
}

// isrShrinkAt is when leader 1 shrank t-0's ISR (-1: never).
func isrShrinkAt(evs []Event) int64 {
	for _, ev := range eventsOf(evs, EvISRChange, onBroker(1)) {
		return ev.T
	}
	return -1
}

// umdSends lists "time:partitions→broker" for every UpdateMetadata sent from at or after from.
func umdSends(evs []Event, from int64) []string {
	var out []string
	for _, ev := range eventsOf(evs, MsgUpdateMetadata, func(ev Event) bool { return ev.T >= from }) {
		out = append(out, fmt.Sprintf("%d:%d→%d", ev.T, ev.Message.UpdateMetadata.Partitions, ev.Message.To))
	}
	return out
}

// TestAudit15IsrNotificationUpdateMetadata: with replica.lag.time.max.ms 2000 (a check every
// 1000 ms) leader 1 shrinks t-0's ISR at 3000; its propagation task at 5000 and 7500 finds the
// change not older than 5000 ms (`lastIsrChangeMs + IsrChangePropagationBlackOut < now`), at
// 10000 it writes the notification: the controller sends an UpdateMetadata naming t-0 to brokers
// 0, 1, 2 and 3 at 10000, and no other. In 3.7 the controller sends it at the AlterPartition
// (3.7.0 KafkaController.processAlterPartition → sendUpdateMetadataRequest), not later.
func TestAudit15IsrNotificationUpdateMetadata(t *testing.T) {
	for _, era := range append(slices.Clone(isrNotifyEras), "3.7") {
		t.Run(era, func(t *testing.T) {
			e := isrNotifyEngine(t, era, 2000)
			runFor(t, e, 12000)
			evs := e.Drain()
			if era == "3.7" {
				if got := umdSends(evs, 4000); len(got) != 0 {
					t.Errorf("3.7: UpdateMetadata after the AlterPartition's: %v, want none", got)
				}
				return
			}
			if s := isrShrinkAt(evs); s != 3000 {
				t.Fatalf("leader 1 shrank t-0's ISR at %d, want 3000", s)
			}
			want := []string{"10000:1→0", "10000:1→1", "10000:1→2", "10000:1→3"}
			if got := umdSends(evs, 1000); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata after the shrink: %v, want %v", got, want)
			}
			if got := len(eventsOf(evs, EvISRNotification, nil)); got != 1 {
				t.Errorf("%d isr-change-notification events, want 1", got)
			}
		})
	}
}

// TestAudit15IsrNotificationBlackOutIsStrict: with the default lag (10000 ms, a check every
// 5000) leader 1 shrinks at 15000 (at 10000 3's last catch-up at 3 ms is not more than 10000 ms
// ago). The task at 20000 finds lastIsrChangeMs + 5000 == now, which is not `< now`: the
// notification waits for the run at 22500.
func TestAudit15IsrNotificationBlackOutIsStrict(t *testing.T) {
	for _, era := range isrNotifyEras {
		t.Run(era, func(t *testing.T) {
			e := isrNotifyEngine(t, era, 10000)
			runFor(t, e, 24800)
			evs := e.Drain()
			if s := isrShrinkAt(evs); s != 15000 {
				t.Fatalf("leader 1 shrank t-0's ISR at %d, want 15000", s)
			}
			want := []string{"22500:1→0", "22500:1→1", "22500:1→2", "22500:1→3"}
			if got := umdSends(evs, 1000); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata after the shrink: %v, want %v", got, want)
			}
		})
	}
}

// TestAudit15IsrNotificationWaitsForZooKeeper: leader 1 (shrunk at 3000) is isolated at 9000 and
// healed at 11000, before its session expires. Its task's write at 10000 has no ZooKeeper
// connection: it waits (ZkClient.retryUntilConnected in 0.10.2.2 and 0.11.0.2, 2.1.1
// KafkaZkClient.retryRequestUntilConnected) and goes through at the reconnection, 11000, when the
// controller sends its UpdateMetadata.
func TestAudit15IsrNotificationWaitsForZooKeeper(t *testing.T) {
	for _, era := range isrNotifyEras {
		t.Run(era, func(t *testing.T) {
			e := isrNotifyEngine(t, era, 2000)
			runFor(t, e, 8800)
			apply(t, e, `{"do":"isolate","broker":1}`)
			runFor(t, e, 2000)
			apply(t, e, `{"do":"heal","broker":1}`)
			runFor(t, e, 1)
			want := []string{"11000:1→0", "11000:1→1", "11000:1→2", "11000:1→3"}
			if got := umdSends(e.Drain(), 1000); !slices.Equal(got, want) {
				t.Errorf("UpdateMetadata: %v, want %v", got, want)
			}
		})
	}
}

// TestAudit15IsrNotificationAtFailover: controller 0 is killed at 8000; leader 1's notification
// (the shrink at 3000) is written at 10000, when no controller acts on it: it waits in ZooKeeper.
// Broker 1 takes over when 0's session expires (14000). 2.1.1 onControllerFailover deletes the
// waiting notifications ("Deleting isr change notifications", deleteIsrChangeNotifications, from
// KAFKA-5642 in 1.1); 0.10.2.2 and 0.11.0.2 only subscribe to the path
// (registerIsrChangeNotificationListener), so it waits for the next notification.
func TestAudit15IsrNotificationAtFailover(t *testing.T) {
	for _, era := range isrNotifyEras {
		t.Run(era, func(t *testing.T) {
			e := isrNotifyEngine(t, era, 2000)
			runFor(t, e, 7800)
			apply(t, e, `{"do":"kill","broker":0}`)
			runFor(t, e, 2001)
			if got := e.ctrl.IsrChangeNotifications(); got != 1 {
				t.Fatalf("notifications waiting at 10001: %d, want 1", got)
			}
			runFor(t, e, 5000)
			if !e.ctrl.Active() || e.ctrl.Broker() != 1 {
				t.Fatalf("controller at 15001: %d (active %v), want 1", e.ctrl.Broker(), e.ctrl.Active())
			}
			want := 1
			if era == "2.1" {
				want = 0
			}
			if got := e.ctrl.IsrChangeNotifications(); got != want {
				t.Errorf("notifications waiting after the failover: %d, want %d", got, want)
			}
		})
	}
}
