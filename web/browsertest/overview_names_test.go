//go:build !js

package browsertest

import "testing"

// TestOverviewGridNamesAcrossTopics: the overview grid names each cell's partition from its id
// (its place in topic order) without a list of every name: the first cells are topic a's, the
// rest topic b's, and a cell of the second topic shows that partition when clicked.
func TestOverviewGridNamesAcrossTopics(t *testing.T) {
	p := newPage(t, "?scenario=testdata/two-topics.json", 1280, 900)
	p.wait("the overview", `!document.getElementById("overview").hidden && document.querySelectorAll("#overview-grid .cell").length === 100`)
	names := evalJS[[]string](p, `[...document.querySelectorAll("#overview-grid .cell")].map(b => b.dataset.tp)`)
	for i, want := range map[int]string{0: "a-0", 29: "a-29", 30: "b-0", 99: "b-69"} {
		if names[i] != want {
			t.Errorf("cell %d is %q, want %q", i, names[i], want)
		}
	}
	p.click(`#overview-grid .cell[data-tp="b-5"]`)
	p.wait("b-5 in detail", `document.querySelector('.partition[data-tp="b-5"]') !== null`)
}
