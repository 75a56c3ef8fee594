package engine

import "slices"

// The shapes of a fetch round's messages. A steady round allocates two objects (issue 12: the
// WebAssembly collector is single-threaded, so garbage costs the page far more than natively): a
// Fetch with its body and the partition it usually carries, and an answer with its body and the
// one or two partitions with news it usually carries. Messages are shared once sent (events and
// the view hold them), so a message sent is reused only without a trace, once its round is over
// (recycle.go; a Fetch's storage is package broker's FetchMessage, which the engine lends the
// fetcher threads: broker_cluster.go's NewFetch and KeepFetch).

// fetchResponseMessage is an answer to a Fetch and its body in one allocation (one per fetch
// round; the body is the message's, as if allocated apart).
type fetchResponseMessage struct {
	m    Message
	body FetchResponse
}

// fetchResponseWithParts is a fetchResponseMessage with room for the partitions a steady
// incremental answer usually carries (one or two: those with news since the last round, such as
// a partition's new records and another's new HW).
type fetchResponseWithParts struct {
	fetchResponseMessage
	parts [2]FetchPartitionData
	// extra holds a reused answer's partitions when they do not fit in parts (recycle.go).
	extra []FetchPartitionData
}

// sendFetchResponse sends the answer to fetch m.
func (e *Engine) sendFetchResponse(b *broker, m *Message, resp FetchResponse) {
	e.sendFetchResponseIn(&fetchResponseMessage{}, b, m, resp)
}

// sendSessionAnswer sends an incremental answer whose partitions are in a scratch buffer: they
// are copied out at their size, with the message when they fit; none (a quiet session's
// answer) allocates nothing more. When messages are reused (recycle.go) the answer always takes
// a reusable wrapper, its partitions in the wrapper's own storage.
func (e *Engine) sendSessionAnswer(b *broker, m *Message, resp FetchResponse) {
	if e.recycling() {
		x := e.answerWrapper()
		if n := len(resp.Partitions); n <= len(x.parts) {
			resp.Partitions = append(x.parts[:0:n], resp.Partitions...)
		} else {
			x.extra = append(x.extra[:0], resp.Partitions...)
			resp.Partitions = x.extra[:n:n]
		}
		e.sendFetchResponseIn(&x.fetchResponseMessage, b, m, resp)
		e.sentAnswer(x)
		return
	}
	switch n := len(resp.Partitions); {
	case n == 0:
		resp.Partitions = []FetchPartitionData{}
	case n <= len(fetchResponseWithParts{}.parts):
		x := &fetchResponseWithParts{}
		resp.Partitions = append(x.parts[:0:n], resp.Partitions...)
		e.sendFetchResponseIn(&x.fetchResponseMessage, b, m, resp)
		return
	default:
		resp.Partitions = slices.Clone(resp.Partitions)
	}
	e.sendFetchResponse(b, m, resp)
}

// sendFetchResponseIn sends the answer to fetch m in x. Field by field: x is new or a reused
// answer (whose other fields are nil, as every answer's), and a whole-struct assignment would
// copy 200 bytes through the write barrier's bulk path.
func (e *Engine) sendFetchResponseIn(x *fetchResponseMessage, b *broker, m *Message, resp FetchResponse) {
	x.body.Error, x.body.SessionID, x.body.Partitions = resp.Error, resp.SessionID, resp.Partitions
	x.m.Type, x.m.From, x.m.To, x.m.ReplyTo = MsgFetchResponse, b.id, m.From, m.ID
	x.m.FetchResponse = &x.body
	e.send(&x.m)
}
