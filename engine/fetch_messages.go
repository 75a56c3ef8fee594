package engine

import "slices"

// The shapes of a fetch round's messages. A steady round allocates two objects (issue 12: the
// WebAssembly collector is single-threaded, so garbage costs the page far more than natively): a
// Fetch with its body and the partition it usually carries, and an answer with its body and the
// one or two partitions with news it usually carries. Messages are shared once sent (events and
// the view hold them), so none sent is ever reused (a Fetch built but not sent is kept for the
// next build: package broker's fetcher_work.go).

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
}

// sendFetchResponse sends the answer to fetch m.
func (e *Engine) sendFetchResponse(b *broker, m *Message, resp FetchResponse) {
	e.sendFetchResponseIn(&fetchResponseMessage{}, b, m, resp)
}

// sendSessionAnswer sends an incremental answer whose partitions are in a scratch buffer: they
// are copied out at their size, with the message when they fit; none (a quiet session's
// answer) allocates nothing more.
func (e *Engine) sendSessionAnswer(b *broker, m *Message, resp FetchResponse) {
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

// sendFetchResponseIn sends the answer to fetch m in x.
func (e *Engine) sendFetchResponseIn(x *fetchResponseMessage, b *broker, m *Message, resp FetchResponse) {
	x.body = resp
	x.m = Message{Type: MsgFetchResponse, From: b.id, To: m.From, ReplyTo: m.ID, FetchResponse: &x.body}
	e.send(&x.m)
}
