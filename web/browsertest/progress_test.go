//go:build !js

package browsertest

import (
	"fmt"
	"testing"
	"time"
)

// TestNativePartialAdvance: a native server that stops an advance at its request budget says how
// far it got; the page shows the progress and asks again until it reaches the time asked for.
func TestNativePartialAdvance(t *testing.T) {
	p := newPageAt(t, budgetURL, "?backend=native&scenario=testdata/three-brokers.json", 1280, 900)
	p.loaded()
	replies := evalJS[int](p, `window.highwater.replies`)
	p.advance(5000)
	if n := evalJS[int](p, `window.highwater.replies`) - replies; n < 3 {
		t.Fatalf("reached 5 s in %d replies; a 1 ns budget should cut the advance into several", n)
	}
	if status := evalJS[string](p, `document.getElementById("status").textContent`); status != "simulated to 5.000 s" {
		t.Fatalf("status = %q, want the end of the progress line", status)
	}
}

// starOnLeaderRow is JS that reports whether partition card tp's ★ sits on its leader's row.
func starOnLeaderRow(tp string) string {
	return fmt.Sprintf(`(() => {
		const card = document.querySelector('.partition[data-tp="%s"]');
		const row = card && card.querySelector('.replica[data-broker="' + card.dataset.leader + '"]');
		const star = card && card.querySelector('.leader-mark');
		if (!row || !star || star.hidden) return false;
		const r = row.getBoundingClientRect(), s = star.getBoundingClientRect();
		return s.top >= r.top - 2 && s.bottom <= r.bottom + 2;
	})()`, tp)
}

// TestLeaderStarFollowsLeader: the ★ of a partition card sits on its leader's row after an
// election, and in a thousand-partition page a card scrolled into view has its ★ placed too
// (off-screen cards are not measured: measuring them cost seconds).
func TestLeaderStarFollowsLeader(t *testing.T) {
	p := newPage(t, "?scenario=testdata/three-brokers.json", 1280, 900)
	p.loaded()
	p.wait("the star on the leader's row", starOnLeaderRow("orders-0"))
	p.advance(1000)
	p.click(`button[aria-label="Kill broker 0"]`)
	p.advance(19000)
	p.wait("a new leader", `document.querySelector('.partition[data-tp="orders-0"]').dataset.leader === "1"`)
	p.wait("the star on the new leader's row", starOnLeaderRow("orders-0"))

	big := newPageFor(t, srvURL, "?scenario=testdata/thousand.json&detail=all", 1280, 900, time.Minute)
	big.waitFor(time.Minute, "the partitions", `document.querySelectorAll(".partition").length === 1000`)
	big.wait("the first card's star", starOnLeaderRow("big-0"))
	// big-999 is on brokers 3, 4, 5: shutting 3 down moves its leadership to the second row
	// while the card is off screen (drawn once, not refreshed there).
	big.click(`button[aria-label="Shut down broker 3 (controlled shutdown)"]`)
	big.advance(3000)
	evalJS[bool](big, `document.querySelector('.partition[data-tp="big-999"]').scrollIntoView(), true`)
	big.wait("big-999 led by broker 4", `document.querySelector('.partition[data-tp="big-999"]').dataset.leader === "4"`)
	big.wait("big-999's star on broker 4's row, scrolled into view", starOnLeaderRow("big-999"))
}
