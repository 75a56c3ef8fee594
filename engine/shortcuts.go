package engine

// Where a broker learns something from the cluster without a message, the engine takes a
// shortcut Kafka does not (docs/engine.md, Simplifications). Each shortcut is an interface named
// for the simplification, and broker code reads the cluster only through it: a reader sees at
// the call which knowledge came for free, and modelling the real path (UpdateMetadata, a
// ZooKeeper round trip) means replacing one implementation.

// metadataAtOnce: no UpdateMetadata. A broker knows at once which brokers are registered in
// ZooKeeper and which broker is the active controller; Kafka's broker reads both from its
// metadata cache, which the controller's UpdateMetadata requests fill some milliseconds later.
type metadataAtOnce interface {
	// registered reports whether broker b has a live registration (/brokers/ids/b).
	registered(b int32) bool
	// activeController is the controller's broker id, or -1 while there is none.
	activeController() int32
}

// zookeeperAtOnce: ZooKeeper answers at once. A pre-2.7 leader writes the ISR to ZooKeeper
// itself; it can while its session is registered and connected.
type zookeeperAtOnce interface {
	// canWrite reports whether broker b's ZooKeeper session is registered and connected.
	canWrite(b int32) bool
}

// zookeeper answers both from the engine's ZooKeeper model (sessions) and controller.
type zookeeper struct{ e *Engine }

func (z zookeeper) registered(b int32) bool { return z.e.sessions[b].registered }

func (z zookeeper) activeController() int32 {
	if !z.e.ctrl.active {
		return -1
	}
	return z.e.ctrl.broker
}

func (z zookeeper) canWrite(b int32) bool {
	s := z.e.sessions[b]
	return s.registered && s.connected
}
