package engine

// Protocol code states facts as they happen (a message left, a high watermark moved, a log was
// cut, a leader was elected); it never checks an invariant or counts a tally. Observers hear the
// facts in the order they happen and read the state they need: the checker (checker.go) and the
// tallies (tallies.go). The facts are calls, not events, because they must be heard
// with the trace off too (a run without a trace still checks its invariants), and because
// building an event's text costs more than the step it describes.
type observer interface {
	// sent: m left its sender.
	sent(m *Message)
	// hwMoved: broker b's replica of partition pid moved its high watermark from old to what
	// its log holds now. The replica's facts name it by ids, as the broker states them
	// (brk.Cluster): an observer reads what it needs through its own view of the cluster.
	hwMoved(pid, b int32, old int64)
	// hwConfirmed: replica r learned a high watermark in its current leader epoch for the first
	// time. The broker holds r as it states the fact, so it is handed on, not looked up again.
	hwConfirmed(r *replica)
	// logCut: b's replica of pid lost its records from offset from on (a truncation or a power
	// loss).
	logCut(pid, b int32, from int64)
	// ackedAll: the producer got an acks=all acknowledgement for a batch at offset base of
	// partition pid (by id, as the replicas' facts: the partition object is cold by then).
	ackedAll(pid int32, base int64)
	// consumed: a consumer's read of partition pid from offset from was recorded (the answer
	// reached it).
	consumed(pid int32, from int64)
	// partitionWritten: the controller wrote p's leader and ISR; the leader epoch was old.
	partitionWritten(p *partition, oldEpoch int32)
	// isrChanged: p's committed ISR changed from old to isr (ZooKeeper's, written by the
	// controller or, before 2.7, by the leader).
	isrChanged(p *partition, old, isr []int32)
	// elected: p has a new leader (or an offline partition's leader was elected again).
	elected(p *partition)
}

// ignores is an observer that hears nothing; observers embed it and override what they need.
type ignores struct{}

func (ignores) sent(*Message)                           {}
func (ignores) hwMoved(int32, int32, int64)             {}
func (ignores) hwConfirmed(*replica)                    {}
func (ignores) logCut(int32, int32, int64)              {}
func (ignores) ackedAll(int32, int64)                   {}
func (ignores) consumed(int32, int64)                   {}
func (ignores) partitionWritten(*partition, int32)      {}
func (ignores) isrChanged(*partition, []int32, []int32) {}
func (ignores) elected(*partition)                      {}

// The facts, as protocol code states them: each goes to every observer, in a fixed order (the
// checker, then the tallies), by a direct call rather than through a list of observers: a large
// run states millions of facts, most of which one of the two ignores, and a call to an ignores
// method compiles to nothing where a call through the interface costs a dispatch each.

// Both are observers: each hears every fact, ignoring those it does not need.
var (
	_ observer = checkObserver{}
	_ observer = (*tallies)(nil)
)

func (e *Engine) noteSent(m *Message) {
	e.checks.sent(m)
	e.tally.sent(m)
}

func (e *Engine) noteHWMoved(pid, b int32, old int64) {
	e.checks.hwMoved(pid, b, old)
	e.tally.hwMoved(pid, b, old)
}

func (e *Engine) noteHWConfirmed(r *replica) {
	e.checks.hwConfirmed(r)
	e.tally.hwConfirmed(r)
}

func (e *Engine) noteLogCut(pid, b int32, from int64) {
	e.checks.logCut(pid, b, from)
	e.tally.logCut(pid, b, from)
}

func (e *Engine) noteAckedAll(pid int32, base int64) {
	e.checks.ackedAll(pid, base)
	e.tally.ackedAll(pid, base)
}

func (e *Engine) noteConsumed(pid int32, from int64) {
	e.checks.consumed(pid, from)
	e.tally.consumed(pid, from)
}

func (e *Engine) notePartitionWritten(p *partition, oldEpoch int32) {
	e.checks.partitionWritten(p, oldEpoch)
	e.tally.partitionWritten(p, oldEpoch)
}

func (e *Engine) noteISRChanged(p *partition, old, isr []int32) {
	e.checks.isrChanged(p, old, isr)
	e.tally.isrChanged(p, old, isr)
}

func (e *Engine) noteElected(p *partition) {
	e.checks.elected(p)
	e.tally.elected(p)
}
