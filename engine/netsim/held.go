package netsim

import "github.com/highwater-sim/highwater/engine/protocol"

// Messages on a cut link. A network partition drops packets, but TCP does not give up: it keeps
// retransmitting what it has not had acknowledged, waiting 200 ms (Linux's minimum retransmission
// timeout on a fast network) and then twice as long each time, up to 120 s. So a message sent on
// (or still crossing) a cut link is held, and once the link heals it gets through with the next
// retransmission, in order with the rest of its connection: after a 10 s cut, a message sent at
// its start arrives at about 12.6 s. The requester still gives up when its request times out
// (request.timeout.ms; AlterPartition's controller.socket.timeout.ms): Kafka's NetworkClient then closes the
// connection, and whatever of that request was held is discarded. A peer that crashed meanwhile
// takes its connection with it. (Who gave up and who crashed is the engine's to judge: it knows
// the requests in flight and the brokers.)
//
// Simplification: the retransmission timeout is the fixed 200 ms doubling series (no RTT
// estimate), counted from the message's first transmission.

// Held is a message waiting for its link: when it was first sent, and both ends' incarnations
// when it was held.
type Held struct {
	M              *protocol.Message
	Sent           int64
	FromGen, ToGen uint64
}

// TCP's retransmission timeout: the first, and the largest it doubles up to (Linux's
// TCP_RTO_MIN and TCP_RTO_MAX).
const (
	RTOMinMs = 200
	RTOMaxMs = 120_000
)

// NextRetransmit is the first retransmission of a segment first sent at sent that happens at or
// after now: sent + 200, then each timeout twice the last, up to 120 s.
func NextRetransmit(sent, now int64) int64 {
	t, rto := sent, int64(RTOMinMs)
	for t < now {
		t += rto
		rto = min(2*rto, RTOMaxMs)
	}
	return t
}

// Hold keeps a message its link will not pass now, after what the link already holds.
func (n *Network) Hold(h Held) {
	if n.held == nil {
		n.held = map[Link][]Held{}
	}
	l := Link{h.M.From, h.M.To}
	n.held[l] = append(n.held[l], h)
}

// HeldLinks are the links holding messages, in (from, to) order.
func (n *Network) HeldLinks() []Link { return SortedLinks(n.held) }

// TakeHeld returns what a link holds, in order, and forgets it; their retransmissions
// (Retransmits) follow one another from here.
func (n *Network) TakeHeld(l Link) []Held {
	h := n.held[l]
	delete(n.held, l)
	delete(n.retransmitted, l)
	return h
}

// Retransmits is when held message m, retransmitted on its healed link and due to arrive at at,
// does arrive. Every connection between brokers carries one request at a time and its answer (a
// fetcher thread's ReplicaFetcherBlockingSend / BrokerBlockingSender, the controller's
// RequestSendThread, KafkaServer.controlledShutdown's client), and each kind has its own
// NetworkClient: two held messages of one link are on different connections, each with its own
// TCP retransmission timer, so none waits for another (a zombie leader's AlterPartition, sent into
// the cut on its alter-partition channel, does not wait for a fetch answer it held for the
// controller's broker's fetcher). Only AlterPartition keeps the order among its held requests,
// and among their answers: Kafka's AlterPartitionManager has one request in flight and batches
// the partitions waiting behind it (3.7.0 DefaultAlterPartitionManager.maybePropagateIsrChanges),
// where the engine sends one request per partition. It does not set the link's FIFO order
// (Delivers) for messages sent after the heal: those go on new connections (Heal forgot the old
// order), or wait for an answer to the held request on the same one. A held answer to a fetcher
// thread stopped meanwhile (ReplicaFetcherThread.initiateShutdown closes its connection) thus no
// longer holds back the first request of the broker's new fetcher.
func (n *Network) Retransmits(m *protocol.Message, at int64) int64 {
	if m.Type != protocol.MsgAlterPartition && m.Type != protocol.MsgAlterPartitionResponse {
		return at
	}
	l := Link{From: m.From, To: m.To}
	if last, ok := n.retransmitted[l]; ok && last > at {
		at = last
	}
	n.retransmitted[l] = at
	return at
}

// Resent notes that c is the retransmitted copy of a held message, on its way.
func (n *Network) Resent(c *protocol.Message, h Held) { n.resent[c] = h }

// TakeResent reports whether an arriving message is a retransmitted copy, and what was held of
// it, and forgets it.
func (n *Network) TakeResent(m *protocol.Message) (Held, bool) {
	if len(n.resent) == 0 {
		return Held{}, false
	}
	h, ok := n.resent[m]
	if ok {
		delete(n.resent, m)
	}
	return h, ok
}
