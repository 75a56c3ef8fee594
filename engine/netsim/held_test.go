package netsim

import "testing"

// TestNextRetransmit: TCP retransmits 200 ms after the first send, then doubles the wait, up to
// 120 s between tries.
func TestNextRetransmit(t *testing.T) {
	for _, c := range []struct{ sent, now, want int64 }{
		{1001, 1001, 1001},     // healed at once: nothing to wait for
		{1001, 1100, 1201},     // first retransmission
		{1001, 11_000, 13_601}, // 200+400+…+6,400 = 12,600 ms after the send
		{0, 200_000, 204_600},  // 200·(2^10 − 1): the tenth wait is 102.4 s
		{0, 250_000, 324_600},  // the eleventh would be 204.8 s; it is capped at 120 s
	} {
		if got := NextRetransmit(c.sent, c.now); got != c.want {
			t.Errorf("NextRetransmit(%d, %d) = %d, want %d", c.sent, c.now, got, c.want)
		}
	}
}
