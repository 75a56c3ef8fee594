package engine

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// The leader's fetch sessions read only their dirty partitions (fetch_session.go); Kafka's leader
// reads every session partition at every fetch. These tests hold the two to the same result.

// dirtyCases caches dirtyReadCases for the two tests (the sweep seeds take a while to generate).
var dirtyCases struct {
	once  sync.Once
	cases []determinismCase
}

// dirtyReadCases are every preset and a dozen sweep seeds of each era with fetch sessions.
func dirtyReadCases(t *testing.T) []determinismCase {
	t.Helper()
	dirtyCases.once.Do(func() { dirtyCases.cases = makeDirtyReadCases(t) })
	if len(dirtyCases.cases) == 0 {
		t.Fatal("no cases (their generation failed in an earlier test)")
	}
	return dirtyCases.cases
}

func makeDirtyReadCases(t *testing.T) []determinismCase {
	t.Helper()
	// 3.7, 3.7-harsh, 2.1
	return append(presetCases(t, ""), sweepCases(t, []*sweepMode{&sweepDefault, sweepModes[0], sweepModes[1]}, 12)...)
}

// runWith plays sc on an engine set up by prepare and returns its JSONL trace and, at the end,
// what every leader knows of its followers.
func runWith(t *testing.T, sc *Scenario, prepare func(*Engine)) ([]byte, string) {
	t.Helper()
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	prepare(e)
	trace := stepsJSONL(t, e, sc)
	var followers bytes.Buffer
	for pid := range e.PartitionCount() {
		for _, r := range e.Partition(int32(pid)).Replicas() {
			fmt.Fprintf(&followers, "%d %+v\n", pid, r.Followers())
		}
	}
	return trace, followers.String()
}

// TestFetchSessionDirtyReads: with the session check on (e.rules.LeaderFetch.Check), every incremental
// fetch's answer from its dirty partitions, and every parked incremental fetch's completion check,
// equal what reading every session partition gives, and every clean partition reads quiet.
func TestFetchSessionDirtyReads(t *testing.T) {
	for _, c := range dirtyReadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			problems := 0
			runWith(t, c.sc, func(e *Engine) {
				e.rules.LeaderFetch.Check = func(p string) {
					if problems++; problems <= 5 {
						t.Error(p)
					}
				}
			})
		})
	}
}

// TestFetchSessionDirtyReadsMatchReadingAll: a run whose leaders read every session partition at
// every fetch, as Kafka's do (e.rules.LeaderFetch.ReadAll), has the same trace, event for event, and ends
// with the same follower state (last fetch and caught-up times included) as the engine's run.
func TestFetchSessionDirtyReadsMatchReadingAll(t *testing.T) {
	for _, c := range dirtyReadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dirty, dirtyFollowers := runWith(t, c.sc, func(*Engine) {})
			all, allFollowers := runWith(t, c.sc, func(e *Engine) { e.rules.LeaderFetch.ReadAll = true })
			if !bytes.Equal(dirty, all) {
				t.Fatalf("the traces differ (first: dirty reads, second: every partition read); %s", firstDiff(dirty, all))
			}
			if dirtyFollowers != allFollowers {
				t.Fatalf("follower state differs:\n dirty reads:\n%s every partition read:\n%s", dirtyFollowers, allFollowers)
			}
		})
	}
}
