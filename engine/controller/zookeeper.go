package controller

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// ZooKeeper as the cluster uses it: each partition's znodes, the brokers' sessions and
// registrations (/brokers/ids/N), and the watches that run the controller. ZooKeeper never fails
// and answers at once (docs/simplifications.md).
type zooKeeper struct {
	partitions []znode // by pid
	sessions   []session
	zxid       int64
	// isrChanges are the children of /isr_change_notification, oldest first: each a broker's
	// notification, the partitions it names (isr_change_notification.go).
	isrChanges [][]int32
}

// znode is a partition's state in ZooKeeper: /brokers/topics/<topic>/partitions/<n>/state (leader,
// leader epoch, ISR, its version) and the topic's assignment of the partition.
type znode struct {
	// assignment is the controller's (possibly reordered) replica list whose head is the
	// preferred leader.
	assignment     []int32
	leader         int32
	leaderEpoch    int32
	isr            []int32 // sorted; replaced, never changed in place
	partitionEpoch int32   // the znode version (zkVersion)
	// recovering is set by an unclean election (KIP-704's RECOVERING).
	recovering bool
}

// session is a broker's ZooKeeper session and registration (/brokers/ids/N).
type session struct {
	registered bool
	epoch      int64
	connected  bool
	gen        uint64 // a pending expiry is for this generation
	expiresAt  int64  // when a disconnected session's pending expiry is due
}

// RegisterBroker is a broker's registration at start-up (KafkaZkClient.registerBroker): a new
// ZooKeeper session and registration with a new broker epoch, which it returns. The broker keeps
// its epoch, then NotifyRegistered runs what the registration sets off.
func (k *Controller) RegisterBroker(b int32) int64 {
	if k.broker == b {
		k.unregistered = false
	}
	k.zk.zxid++
	s := &k.zk.sessions[b]
	s.registered = true
	s.connected = true
	s.epoch = 0x100000000 + k.zk.zxid // a czxid-like broker epoch, rising at every registration
	s.gen++
	return s.epoch
}

// ElectBeforeRegistration is 0.10.2's start order (KafkaServer.startup calls
// kafkaController.startup() before kafkaHealthcheck.startup() registers the broker; after a
// session expiry the controller's SessionExpirationListener, subscribed first, re-elects before
// KafkaHealthcheck's re-registers): broker b, up and about to register, runs for controller.
// With no controller it takes over at once (ZookeeperLeaderElector.elect runs
// onControllerFailover in the call), counting only the registered brokers alive, itself not:
// a partition it led is offline (initializePartitionState) and is elected only at the broker
// change its registration then sets off (onBrokerStartup's triggerOnlinePartitionStateChange),
// one leader epoch later than when it registers first.
func (k *Controller) ElectBeforeRegistration(b int32) {
	if k.active || k.live == nil {
		return
	}
	if _, alive := k.c.Process(b); !alive {
		return
	}
	k.unregistered = true
	k.onControllerFailover(b)
}

// NotifyRegistered runs what broker b's new registration sets off: the event, then the watches.
func (k *Controller) NotifyRegistered(b int32) {
	s := k.zk.sessions[b]
	k.c.Emit(Event{Type: EvZKRegister, Broker: protocol.Some(b), Epoch: protocol.Some(s.epoch),
		Text: fmt.Sprintf("broker %d registered in ZooKeeper with broker epoch %d", b, s.epoch)})
	k.zkChanged()
}

// Disconnect cuts a broker from ZooKeeper; its session expires unless it comes back in time.
func (k *Controller) Disconnect(b int32) {
	s := &k.zk.sessions[b]
	if !s.connected {
		return
	}
	s.connected = false
	s.gen++
	s.expiresAt = k.c.Now() + k.c.Settings().ZookeeperSessionTimeoutMs
	k.c.SessionExpiryAt(s.expiresAt, b, s.gen)
}

// SessionExpired is a session's expiry timer: if broker b's session is still generation gen and
// disconnected, its registration goes, and so does every other session whose expiry is due at
// the same instant; then the watches run once. ZooKeeper's session tracker expires the sessions
// of one tick together, and the controller's broker change reads /brokers/ids after its watch
// fired, so it sees them gone in one change (onBrokerFailure with every dead broker: the
// elections leave them all out). It returns the brokers whose sessions expired, in broker order;
// none if b's had not. (A later timer of one already expired finds it gone.)
func (k *Controller) SessionExpired(b int32, gen uint64) []int32 {
	if s := k.zk.sessions[b]; s.gen != gen || s.connected || !s.registered {
		return nil
	}
	now := k.c.Now()
	var gone []int32
	for i := range int32(k.brokers) {
		s := &k.zk.sessions[i]
		if i != b && (s.connected || !s.registered || s.expiresAt != now) {
			continue
		}
		s.registered = false
		gone = append(gone, i)
		k.c.Emit(Event{Type: EvZKSession, Broker: protocol.Some(i),
			Text: fmt.Sprintf("ZooKeeper session of broker %d expired after %d ms", i, k.c.Settings().ZookeeperSessionTimeoutMs)})
	}
	k.zkChanged()
	return gone
}

// CloseSession closes a session at once (clean shutdown).
func (k *Controller) CloseSession(b int32) {
	s := &k.zk.sessions[b]
	s.registered = false
	s.connected = false
	s.gen++
	k.zkChanged()
}

// Reconnect brings an isolated broker back to ZooKeeper: if its session is still registered it
// is connected again (a controller catches up on what it missed) and Reconnect reports true;
// otherwise the broker must register anew.
func (k *Controller) Reconnect(b int32) bool {
	s := &k.zk.sessions[b]
	if !s.registered {
		return false
	}
	s.connected = true
	s.gen++
	if k.active && k.broker == b {
		k.zkChanged() // the controller catches up on what it missed
		// ZooKeeper fires, at the reconnection, the watches whose znodes changed meanwhile: a
		// waiting reassignment's ISR may be complete now.
		for _, pid := range sortedKeys(k.reassigning) {
			k.ReassignmentIsrChanged(pid)
		}
		k.runDeferredElections(false) // and it acts on the elections asked meanwhile
		k.watchIsrChanges()           // and the ISR-change notifications written meanwhile
	}
	return true
}

// IsrWrite is the outcome of a leader's own ISR write (UpdateIsr).
type IsrWrite struct {
	// Connected: the leader's session is registered and connected; without it the write fails.
	Connected bool
	// Written: the write succeeded (the cached zkVersion matched).
	Written bool
	// Version is the znode's version: the new one after a write, ZooKeeper's current one after a
	// version mismatch.
	Version int32
	// LeaderEpoch is the znode's leader epoch; Old and ISR the ISR before and after a write
	// (shared: not to be changed).
	LeaderEpoch int32
	Old, ISR    []int32
}

// UpdateIsr is the write of a leader before AlterIsr (KIP-497, IBP 2.7): Partition.updateIsr
// writes partition pid's znode with its own leader and leader epoch (no bump), conditional on the
// zkVersion it cached (ReplicationUtils.updateLeaderAndIsr). Broker b must hold a connected
// session. The controller hears of the change through isr_change_notification and sends only
// UpdateMetadata (isr_change_notification.go).
func (k *Controller) UpdateIsr(b, pid int32, isr []int32, zkVersion int32) IsrWrite {
	s := k.zk.sessions[b]
	p := &k.zk.partitions[pid]
	if !s.registered || !s.connected {
		return IsrWrite{Version: p.partitionEpoch, LeaderEpoch: p.leaderEpoch}
	}
	if zkVersion != p.partitionEpoch {
		return IsrWrite{Connected: true, Version: p.partitionEpoch, LeaderEpoch: p.leaderEpoch}
	}
	old := p.isr
	p.isr = protocol.SortedCopy(isr)
	p.partitionEpoch++
	if k.reassigning[pid] {
		k.c.ReassignmentWatchAt(k.c.Now(), pid)
	}
	return IsrWrite{Connected: true, Written: true, Version: p.partitionEpoch, LeaderEpoch: p.leaderEpoch, Old: old, ISR: p.isr}
}

// zkChanged runs the watches: controller election when the controller's registration is gone,
// then the controller's broker-change handling.
func (k *Controller) zkChanged() {
	if k.live == nil {
		return // cluster start-up: the controller comes up after the brokers register
	}
	if k.active && !k.zk.sessions[k.broker].registered {
		k.active = false
		k.c.Emit(Event{Type: EvController, Broker: protocol.Some(k.broker),
			Text: fmt.Sprintf("broker %d is no longer controller (its ZooKeeper registration is gone)", k.broker)})
	}
	if !k.active {
		for i := range int32(k.brokers) {
			if s := k.zk.sessions[i]; s.registered && s.connected {
				if _, alive := k.c.Process(i); alive {
					k.onControllerFailover(i)
					break
				}
			}
		}
		return
	}
	if k.usable() {
		k.processBrokerChange()
		if inc, _ := k.c.Process(k.broker); inc != k.incarnation {
			// NB: the controller's broker restarted before its session expired (a bounce). The
			// engine's restart no longer does this (the controller's own broker waits for its old
			// session to expire, as Kafka's new process cannot register: engine/broker.go
			// restart); kept as a guard. The controller lived in the old process and died with it,
			// LeaderAndIsr requests it was still retrying included. As after any controller death,
			// a controller is elected with the next epoch and sends every broker its partitions
			// (onControllerFailover).
			k.active = false
			k.c.Emit(Event{Type: EvController, Broker: protocol.Some(k.broker),
				Text: fmt.Sprintf("broker %d is no longer controller (its process restarted)", k.broker)})
			k.zkChanged()
		}
	}
}
