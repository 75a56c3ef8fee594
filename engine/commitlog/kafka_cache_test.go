package commitlog

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Ports of Kafka's LeaderEpochFileCacheTest (core/src/test/scala/unit/kafka/server/epoch/
// LeaderEpochFileCacheTest.scala), cases T1–T3, as table tests over literal
// caches. A cache literal is "(epoch,start) (epoch,start) ..." in assignment order.

// cacheOf assigns the literal's entries in order, as Kafka's tests do with cache.assign.
func cacheOf(t *testing.T, lit string) EpochCache {
	t.Helper()
	var c EpochCache
	for _, f := range strings.Fields(lit) {
		var e int32
		var o int64
		if _, err := fmt.Sscanf(f, "(%d,%d)", &e, &o); err != nil {
			t.Fatalf("bad cache literal %q: %v", f, err)
		}
		c.Assign(e, o)
	}
	return c
}

// cacheString renders a cache as a literal.
func cacheString(c *EpochCache) string {
	parts := make([]string, 0, c.Len())
	for _, en := range c.Entries() {
		parts = append(parts, fmt.Sprintf("(%d,%d)", en.Epoch, en.StartOffset))
	}
	return strings.Join(parts, " ")
}

type endOffsetCase struct {
	req        int32
	leo        int64
	wantEpoch  int32
	wantOffset int64
}

func checkEndOffsets(t *testing.T, c *EpochCache, cases []endOffsetCase) {
	t.Helper()
	for _, q := range cases {
		e, o := c.EndOffsetFor(q.req, q.leo)
		if e != q.wantEpoch || o != q.wantOffset {
			t.Errorf("cache [%s]: endOffsetFor(%d, LEO %d) = (%d,%d), want (%d,%d)",
				cacheString(c), q.req, q.leo, e, o, q.wantEpoch, q.wantOffset)
		}
	}
}

// TestKafkaT1EndOffsetFor ports LeaderEpochFileCacheTest
// shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested,
// shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch,
// shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked and the empty-cache case.
func TestKafkaT1EndOffsetFor(t *testing.T) {
	tests := []struct {
		name  string
		cache string
		leo   int64
		cases []endOffsetCase
	}{
		{
			name:  "shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested",
			cache: "(0,10) (2,13) (4,17)",
			leo:   20,
			cases: []endOffsetCase{{1, 20, 0, 13}, {2, 20, 2, 17}, {3, 20, 2, 17}},
		},
		{
			name:  "shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch",
			cache: "(5,11) (6,12) (7,13)",
			leo:   20,
			cases: []endOffsetCase{{4, 20, 4, 11}},
		},
		{
			name:  "shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked",
			cache: "(2,100)",
			leo:   101,
			cases: []endOffsetCase{{3, 101, Undefined, Undefined}},
		},
		{
			name:  "empty cache",
			cache: "",
			leo:   0,
			cases: []endOffsetCase{{0, 0, Undefined, Undefined}, {Undefined, 0, Undefined, Undefined}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheOf(t, tt.cache)
			checkEndOffsets(t, &c, tt.cases)
		})
	}
}

// TestKafkaT2AssignMonotonic ports LeaderEpochFileCacheTest shouldEnforceMonotonicallyIncreasingEpochs,
// shouldTruncateIfMatchingEpochButEarlierStartingOffset and
// shouldEnforceOffsetsIncreaseMonotonically.
func TestKafkaT2AssignMonotonic(t *testing.T) {
	tests := []struct {
		name  string
		cache string // assigned in order
		want  string
		cases []endOffsetCase
	}{
		{
			name:  "shouldEnforceMonotonicallyIncreasingEpochs",
			cache: "(1,5) (2,6) (1,7)",
			want:  "(1,7)",
			cases: []endOffsetCase{{1, 8, 1, 8}, {2, 8, Undefined, Undefined}},
		},
		{
			name:  "shouldTruncateIfMatchingEpochButEarlierStartingOffset",
			cache: "(5,11) (6,12) (7,13) (7,12)",
			want:  "(5,11) (7,12)",
			cases: []endOffsetCase{{5, 20, 5, 12}, {6, 20, 5, 12}},
		},
		{
			name:  "shouldEnforceOffsetsIncreaseMonotonically",
			cache: "(2,6) (3,5)",
			want:  "(3,5)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cacheOf(t, tt.cache)
			if got := cacheString(&c); got != tt.want {
				t.Errorf("after assigning %s: cache [%s], want [%s]", tt.cache, got, tt.want)
			}
			checkEndOffsets(t, &c, tt.cases)
		})
	}
}

// TestKafkaT3Truncation ports LeaderEpochFileCacheTest's truncateFromEnd and truncateFromStart
// cases (shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs and its neighbours),
// from the cache (2,6) (3,8) (4,11).
func TestKafkaT3Truncation(t *testing.T) {
	const start = "(2,6) (3,8) (4,11)"
	tests := []struct {
		op   string
		at   int64
		want string
	}{
		{"truncateFromEnd", 8, "(2,6)"},
		{"truncateFromEnd", 9, "(2,6) (3,8)"},
		{"truncateFromStart", 8, "(3,8) (4,11)"},
		{"truncateFromStart", 9, "(3,9) (4,11)"},
		{"truncateFromStart", 15, "(4,15)"},
		{"truncateFromStart", 6, "(2,6) (3,8) (4,11)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s(%d)", tt.op, tt.at), func(t *testing.T) {
			c := cacheOf(t, start)
			before := slices.Clone(c.Entries())
			if tt.op == "truncateFromEnd" {
				c.TruncateFromEnd(tt.at)
			} else {
				c.TruncateFromStart(tt.at)
			}
			if got := cacheString(&c); got != tt.want {
				t.Errorf("[%s].%s(%d) = [%s], want [%s]", start, tt.op, tt.at, got, tt.want)
			}
			if tt.want == start && !slices.Equal(before, c.Entries()) {
				t.Errorf("cache changed although the truncation should be a no-op")
			}
		})
	}
}

// TestAssignInIsAssign: AssignIn gives the entries Assign gives, and leaves the entries it
// replaced as they were.
func TestAssignInIsAssign(t *testing.T) {
	var a, b EpochCache
	steps := []struct {
		e int32
		o int64
	}{{0, 0}, {0, 5}, {1, 5}, {3, 9}, {2, 9}, {4, 20}, {4, 30}}
	for _, s := range steps {
		old := b.Entries()
		snapshot := append([]EpochEntry(nil), old...)
		a.Assign(s.e, s.o)
		b.AssignIn(make([]EpochEntry, 0, 4), s.e, s.o)
		if !reflect.DeepEqual(a.Entries(), b.Entries()) {
			t.Fatalf("after Assign(%d, %d): %v, AssignIn %v", s.e, s.o, a.Entries(), b.Entries())
		}
		if !reflect.DeepEqual(old, snapshot) && len(old) > 0 {
			t.Fatalf("AssignIn changed the entries it replaced: %v, were %v", old, snapshot)
		}
	}
	// A cache of one entry keeps it in itself: no array, from buf or allocated.
	if n := testing.AllocsPerRun(10, func() {
		var c EpochCache
		c.AssignIn(nil, 7, 3)
		c.Assign(7, 9)
		if c.Latest() != 7 || c.Len() != 1 {
			t.Fatal("a fresh cache's first entry is not its latest")
		}
	}); n != 0 {
		t.Fatalf("a cache of one entry allocates %v times", n)
	}
}

// TestAssignIfNewerIsAssignOf0110: 0.11.0.2 LeaderEpochFileCache.assign appends only an epoch
// above the latest at or after its start; anything else leaves the cache as it is (2.1's
// truncateAndAppend, Assign, would cut it).
func TestAssignIfNewerIsAssignOf0110(t *testing.T) {
	var c EpochCache
	c.AssignIfNewer(0, 0)
	c.AssignIfNewer(1, 11)
	c.AssignIfNewer(0, 16) // older epoch: a warning only
	c.AssignIfNewer(1, 20) // same epoch: nothing
	c.AssignIfNewer(2, 21)
	c.AssignIfNewer(3, 5) // start below the latest's: nothing
	if got := fmt.Sprint(c.Entries()); got != "[{0 0} {1 11} {2 21}]" {
		t.Fatalf("cache %s; want [{0 0} {1 11} {2 21}]", got)
	}
}
