package netsim

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestDeliveryFIFO: a link delivers no message before the last one it delivers, whichever
// brokers it joins (the table widens as higher ids appear) and for the client node's links; a
// heal forgets the order of the healed node's links only.
func TestDeliveryFIFO(t *testing.T) {
	var n Network
	n.Init()
	a, b, c := Link{From: 0, To: 1}, Link{From: 3, To: 2}, Link{From: protocol.ClientNode, To: 1}
	for _, l := range []Link{a, b, c} {
		if got := n.DeliveryAt(l, 5); got != 5 {
			t.Fatalf("%v: nothing delivered yet, want 5, got %d", l, got)
		}
	}
	n.Delivers(a, 10)
	n.Delivers(b, 20) // widens the table: a's time must survive
	n.Delivers(c, 30)
	for _, tc := range []struct {
		l        Link
		at, want int64
	}{{a, 5, 10}, {a, 11, 11}, {b, 5, 20}, {Link{From: 2, To: 3}, 5, 5}, {c, 5, 30}} {
		if got := n.DeliveryAt(tc.l, tc.at); got != tc.want {
			t.Errorf("%v at %d: want %d, got %d", tc.l, tc.at, tc.want, got)
		}
	}
	node := int32(3)
	n.Heal(&node)
	if got := n.DeliveryAt(b, 5); got != 5 {
		t.Errorf("healed link %v: want 5, got %d", b, got)
	}
	if got := n.DeliveryAt(a, 5); got != 10 {
		t.Errorf("link %v, not healed: want 10, got %d", a, got)
	}
	n.Heal(nil)
	if got := n.DeliveryAt(a, 5) + n.DeliveryAt(c, 5); got != 10 {
		t.Errorf("after healing all, want both at 5, got a sum of %d", got)
	}
}
