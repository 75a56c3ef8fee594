// Package netsim is the simulated network's state: links (per-direction latency, cut or up),
// each link's FIFO delivery order, and the messages a cut link holds until TCP retransmits them
// (held.go). It owns no node's state and calls no node: the engine's loop asks it when a message
// may pass and when it arrives, and hands arriving messages to their receivers. It imports only
// engine/protocol.
//
// Fault model (what `link`, `isolate` and `kill` do, and whether Kafka tolerates it):
//   - per-direction latency (sim.network.latency.ms, `link latencyMs`) and optional jitter;
//     delivery on a link is FIFO, as on one TCP connection;
//   - a link that is down holds what is sent on it and what arrives on it, and passes it on when
//     it heals, as TCP's retransmissions do (held.go); a requester whose request times out first
//     (request.timeout.ms, brokers' and clients' NetworkClient request timeout) gives up, and what
//     was held of it is discarded: a silent network partition, tolerated;
//   - `isolate` takes every link of a broker down, ZooKeeper's included; clients keep reaching it
//     (the partition leaves the clients on the broker's side, which is how a zombie leader
//     collects writes): tolerated, with acks=all;
//   - a dead broker refuses connections: requests to it fail one round trip later, and requests
//     it had parked are reset.
//
// Messages are never corrupted, duplicated or reordered on one link.
package netsim

import (
	"cmp"
	"maps"
	"slices"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// Link is one direction between two nodes.
type Link struct{ From, To int32 }

type linkState struct {
	latencyMs int64 // -1: the default
	down      bool
}

// lastDelivery is a link's last delivery time, if it has one.
type lastDelivery struct {
	at  int64
	set bool
}

// Network is the links' state and what they hold. The zero value is not ready: call Init.
type Network struct {
	links map[Link]linkState
	// lastDeliver keeps each link FIFO when latency changes or jitter is on: each link's last
	// delivery time (last), in a table by from*width+to between brokers (every send reads and
	// writes it: a map would hash twice per message, in software under WebAssembly), and in
	// otherLast for a link with the client node.
	last      []lastDelivery
	width     int
	otherLast map[Link]int64
	// held are the messages waiting for a cut link, in order per link (held.go).
	held map[Link][]Held
	// resent are the retransmitted copies on their way, with what was held (held.go).
	resent map[*protocol.Message]Held
	// retransmitted is, per link, the arrival of the last held AlterPartition (or answer)
	// retransmitted since the link's last release (Retransmits): those keep their order among
	// themselves, as Kafka sends them one at a time on one connection.
	retransmitted map[Link]int64
}

// Init makes an empty network: every link up, at the default latency.
func (n *Network) Init() {
	n.links = map[Link]linkState{}
	n.last, n.width = nil, 0
	n.otherLast = map[Link]int64{}
	n.resent = map[*protocol.Message]Held{}
	n.retransmitted = map[Link]int64{}
}

// Down reports whether a link was cut (isolation is the engine's: a broker's state).
func (n *Network) Down(l Link) bool { return n.links[l].down }

// LatencyMs is a link's own latency, or def when it has none. Links to and from the client node
// always take the default.
func (n *Network) LatencyMs(l Link, def int64) int64 {
	if l.From == protocol.ClientNode || l.To == protocol.ClientNode {
		return def
	}
	if s, ok := n.links[l]; ok && s.latencyMs >= 0 {
		return s.latencyMs
	}
	return def
}

// SetLink sets a link's latency (nil: keep it) and whether it is cut, and returns its latency
// (def when it has none of its own).
func (n *Network) SetLink(l Link, latency *int64, down bool, def int64) int64 {
	s, ok := n.links[l]
	if !ok {
		s.latencyMs = -1
	}
	if latency != nil {
		s.latencyMs = *latency
	}
	s.down = down
	n.links[l] = s
	if s.latencyMs >= 0 {
		return s.latencyMs
	}
	return def
}

// Heal puts a node's links (every link, when node is nil) back to the default, up, and forgets
// their FIFO order: new connections, so messages still crawling on an old slow link no longer
// hold new ones back.
func (n *Network) Heal(node *int32) {
	touches := func(k Link) bool { return node == nil || k.From == *node || k.To == *node }
	for k := range n.links {
		if touches(k) {
			delete(n.links, k)
		}
	}
	for from := range n.width {
		for to := range n.width {
			if touches(Link{From: int32(from), To: int32(to)}) {
				n.last[from*n.width+to] = lastDelivery{}
			}
		}
	}
	for k := range n.otherLast {
		if touches(k) {
			delete(n.otherLast, k)
		}
	}
}

// DeliveryAt is when a message on a link that would arrive at at does arrive: not before the
// last one on that link (FIFO).
func (n *Network) DeliveryAt(l Link, at int64) int64 {
	var last lastDelivery
	if l.From >= 0 && l.To >= 0 {
		if i := n.lastIndex(l, false); i >= 0 {
			last = n.last[i]
		}
	} else {
		last.at, last.set = n.otherLast[l]
	}
	if last.set && last.at > at {
		return last.at
	}
	return at
}

// Delivers records that a link delivers a message at at, for the FIFO order of the next.
func (n *Network) Delivers(l Link, at int64) {
	if l.From >= 0 && l.To >= 0 {
		n.last[n.lastIndex(l, true)] = lastDelivery{at: at, set: true}
		return
	}
	n.otherLast[l] = at
}

// lastIndex is where link l (between brokers) is in the table, -1 if it is past the table's
// width; grow widens the table to take it.
func (n *Network) lastIndex(l Link, grow bool) int {
	from, to := int(l.From), int(l.To)
	if from >= n.width || to >= n.width {
		if !grow {
			return -1
		}
		w := max(from, to) + 1
		t := make([]lastDelivery, w*w)
		for f := range n.width {
			copy(t[f*w:f*w+n.width], n.last[f*n.width:(f+1)*n.width])
		}
		n.last, n.width = t, w
	}
	return from*n.width + to
}

// SortedLinks returns a link map's keys in (from, to) order: no map order may reach state.
func SortedLinks[V any](m map[Link]V) []Link {
	return slices.SortedFunc(maps.Keys(m), func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
}
