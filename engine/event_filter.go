package engine

// EventFilter chooses, as each event is emitted, whether the trace records it. A session on a
// large cluster records only what its page is shown (focused partitions and brokers, cluster-wide
// events) and counts the rest: the first LeaderAndIsr round alone emits one event per replica,
// three million at a million partitions, 288 bytes each. The filter sees every event emitted
// while tracing is on, in order, before its text is made (Narrate); it must not change it. What
// it refuses still counts in Stats().Events.
type EventFilter func(e *Engine, ev *Event) bool

// NewFiltered is New recording, from time 0, only the events keep accepts.
func NewFiltered(sc *Scenario, keep EventFilter) (*Engine, error) {
	return newEngine(sc, true, keep)
}
