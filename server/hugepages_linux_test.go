package server

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/highwater-sim/highwater/server/hugepages"
)

// TestLoadAsksForHugePages loads a cluster of about 150 MB with HIGHWATER_HUGEPAGES=on and
// checks that the session marked that much of the heap for huge pages before building it.
func TestLoadAsksForHugePages(t *testing.T) {
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("this kernel's transparent huge pages are %q, not madvise: nothing to ask", bytes.TrimSpace(mode))
	}
	t.Setenv("HIGHWATER_HUGEPAGES", "on")
	before, err := hugepages.Marked()
	if err != nil {
		t.Fatal(err)
	}
	_, ts, _ := startServer(t, Config{})
	ctx := testCtx(t, 60*time.Second)
	c := dial(t, ctx, ts)
	callOK(t, ctx, c, 1, `{"id":1,"op":"load","noView":true,"scenario":`+bigScenario(20, 50_000)+`}`)
	after, err := hugepages.Marked()
	if err != nil {
		t.Fatal(err)
	}
	if grown := after - before; grown < 128<<20 {
		t.Fatalf("loading 50,000 partitions (RF 3) marked %d MB more for huge pages, want at least 128", grown>>20)
	}
}
