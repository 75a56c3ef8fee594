package engine

// ReuseEvents hands the engine a batch of events that its reader is done with, every element
// cleared, and the next events are recorded into its memory. A long recorded run
// (`highwater run --trace`: a batch per step, 100,000 steps) then stops allocating a batch per
// step and growing it from nothing, which with 288-byte events was most of what tracing cost the
// simulation itself. The engine keeps the batch only while no events wait to be drained.
func (e *Engine) ReuseEvents(buf []Event) {
	if len(e.events) == 0 && cap(buf) > cap(e.events) {
		e.events = buf[:0]
	}
}
