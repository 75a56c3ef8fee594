package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// DelayedProduce is an acks=all produce waiting in the leader's purgatory until the HW commits its
// batch (DelayedProduce.scala), or until it times out.
type DelayedProduce struct {
	req      *protocol.Message
	required int64 // the HW that commits the batch
	base     int64
	done     bool
}

// NewDelayedProduce parks req, whose n records the leader appended at base.
func NewDelayedProduce(req *protocol.Message, base int64, n int) *DelayedProduce {
	return &DelayedProduce{req: req, required: base + int64(n), base: base}
}

// DelayedProduces hands out DelayedProduces in chunks, one allocation for many (a steady acks=all
// load parks a thousand a second). A produce's timeout holds it on the agenda for
// request.timeout.ms, so the produces of one chunk, parked within moments of each other, are
// let go at about the same time: a chunk lives about as long as its produces would apart. The
// zero value is ready.
type DelayedProduces struct{ chunk []DelayedProduce }

// delayedProduceChunk is how many produces a chunk holds.
const delayedProduceChunk = 64

// New is NewDelayedProduce, out of the current chunk.
func (c *DelayedProduces) New(req *protocol.Message, base int64, n int) *DelayedProduce {
	if len(c.chunk) == cap(c.chunk) {
		c.chunk = make([]DelayedProduce, 0, delayedProduceChunk)
	}
	c.chunk = append(c.chunk, DelayedProduce{req: req, required: base + int64(n), base: base})
	return &c.chunk[len(c.chunk)-1]
}

// Request is the produce waiting; RequiredOffset the HW that commits its batch; Done whether it
// has been answered.
func (dp *DelayedProduce) Request() *protocol.Message { return dp.req }
func (dp *DelayedProduce) RequiredOffset() int64      { return dp.required }
func (dp *DelayedProduce) Done() bool                 { return dp.done }

// Expire is DelayedProduce.onExpiration: it reports whether the produce was still waiting (and
// is answered REQUEST_TIMED_OUT by the caller); it is done either way.
func (dp *DelayedProduce) Expire() bool {
	if dp == nil || dp.done {
		return false
	}
	dp.done = true
	return true
}

// ProducePurgatory is the produces parked on one leader replica (Kafka's producer purgatory,
// watched by the partition's key).
type ProducePurgatory struct {
	produces []*DelayedProduce
	// inline holds the produces while one fits: at a produce a millisecond per 100 partitions
	// a leader rarely has two parked, and the array the first made was an allocation for every
	// leader produced to (60,000 of a 100,000-partition run's ten seconds).
	inline [1]*DelayedProduce
}

// Len is how many produces are parked (some may be done, until the next TryComplete).
// A nil purgatory (a replica holding no leader's state: Partition.Produces) has none.
func (p *ProducePurgatory) Len() int {
	if p == nil {
		return 0
	}
	return len(p.produces)
}

// Add parks dp.
func (p *ProducePurgatory) Add(dp *DelayedProduce) {
	if len(p.produces) == 0 {
		p.produces = p.inline[:0] // back in inline (an array grown past it is dropped)
	}
	p.produces = append(p.produces, dp)
}

// Clear drops every parked produce unanswered (the process stopped, the partition was reset).
func (p *ProducePurgatory) Clear() { *p = ProducePurgatory{} }

// ProduceAnswer answers a completed produce: its error and base offset (-1 on error).
type ProduceAnswer func(dp *DelayedProduce, err protocol.KafkaError, base int64)

// TryComplete is DelayedProduce.tryComplete for every produce parked, in the order parked: an
// offline log answers KAFKA_STORAGE_ERROR, a replica that no longer leads NOT_LEADER_OR_FOLLOWER,
// and a HW at the batch's end completes it (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the maximal ISR
// is below minIsr). The rest stay parked.
func (p *ProducePurgatory) TryComplete(offline, leader bool, hw int64, isr *PartitionState, minIsr int, answer ProduceAnswer) {
	if len(p.produces) == 0 {
		return
	}
	kept := p.produces[:0]
	for _, dp := range p.produces {
		if dp.done {
			continue
		}
		switch {
		case offline:
			dp.done = true
			answer(dp, protocol.ErrKafkaStorage, -1)
		case !leader:
			dp.done = true
			answer(dp, protocol.ErrNotLeaderOrFollower, -1)
		case hw >= dp.required:
			dp.done = true
			errName := protocol.ErrNone
			if len(isr.MaximalISR()) < minIsr {
				errName = protocol.ErrNotEnoughReplicasAfterAppend
			}
			answer(dp, errName, dp.base)
		default:
			kept = append(kept, dp)
		}
	}
	clear(p.produces[len(kept):])
	p.produces = kept
}
