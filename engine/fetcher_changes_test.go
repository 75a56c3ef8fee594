package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// The fetcher threads look only at what changed (fetcher_changes.go); Kafka's walk every
// partition at every turn. These tests hold the two to the same result.

var followerCases struct {
	once  sync.Once
	cases []determinismCase
}

// followerChangeCases are dirtyReadCases (every preset, a dozen sweep seeds of 3.7, 3.7-harsh
// and 2.1) and half a dozen seeds of each era with a truncation phase and no fetch sessions
// (0.11.0, 0.10.2), whose every Fetch is full.
func followerChangeCases(t *testing.T) []determinismCase {
	t.Helper()
	base := dirtyReadCases(t)
	followerCases.once.Do(func() {
		cases := append([]determinismCase(nil), base...)
		for _, m := range sweepModes {
			if m.name != "0.11.0" && m.name != "0.10.2" {
				continue
			}
			for seed := uint64(1); seed <= 6; seed++ {
				s := newSweepRunMode(t, seed, m)
				s.run()
				cases = append(cases, determinismCase{name: fmt.Sprintf("%s/seed=%d", m.name, seed), sc: s.scenario()})
			}
		}
		followerCases.cases = cases
	})
	if len(followerCases.cases) == 0 {
		t.Fatal("no cases (their generation failed in an earlier test)")
	}
	return followerCases.cases
}

// runFollowers plays sc on an engine set up by prepare and returns its JSONL trace and, every
// simulated second and at the end, every fetcher thread's state.
func runFollowers(t *testing.T, sc *Scenario, prepare func(*Engine)) ([]byte, string) {
	t.Helper()
	e, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	prepare(e)
	var trace bytes.Buffer
	enc := json.NewEncoder(&trace)
	var fetchers strings.Builder
	lastDump := int64(-1)
	if _, err := e.RunSteps(sc, func(evs []Event) {
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if e.now/1000 != lastDump {
			lastDump = e.now / 1000
			dumpFetchers(&fetchers, e)
		}
	}); err != nil {
		t.Fatal(err)
	}
	dumpFetchers(&fetchers, e)
	return trace.Bytes(), fetchers.String()
}

// dumpFetchers writes every thread's state but its change list, which the two ways keep
// differently.
func dumpFetchers(w *strings.Builder, e *Engine) {
	fmt.Fprintf(w, "at %d\n", e.now)
	for _, b := range e.brokers {
		for _, f := range *b.fetchers {
			fmt.Fprintf(w, "%d→%d/%d inflight %d wake %d last %d session %+v parts", f.Owner(), f.Leader(), f.ID(),
				f.InFlight(), f.WakeAt(), f.LastSent(), *f.Session())
			for i := range f.Len() {
				st := f.At(i)
				sentEpoch, sentOffset := st.Sent()
				fmt.Fprintf(w, " %+v/%+v/%d/%d", fetchInfo(st), st.Session(), sentEpoch, sentOffset)
			}
			fmt.Fprintln(w)
		}
	}
}

// TestFollowerChanges: with the check on (e.rules.Fetcher.Check), before every incremental Fetch build
// every partition off its thread's change list is as the last build left it, and the thread's
// counts of Truncating and session partitions are right.
func TestFollowerChanges(t *testing.T) {
	for _, c := range followerChangeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			problems := 0
			runFollowers(t, c.sc, func(e *Engine) {
				e.rules.Fetcher.Check = func(p string) {
					if problems++; problems <= 5 {
						t.Error(p)
					}
				}
			})
		})
	}
}

// TestFollowerChangesMatchWalkingAll: a run whose fetcher threads walk every partition at every
// turn and check answers against a list of what each Fetch carried, as Kafka's do
// (e.rules.Fetcher.WalkAll), has the same trace, event for event, and the same fetcher state every
// simulated second, as the engine's run.
func TestFollowerChangesMatchWalkingAll(t *testing.T) {
	for _, c := range followerChangeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			changes, changesFetchers := runFollowers(t, c.sc, func(*Engine) {})
			all, allFetchers := runFollowers(t, c.sc, func(e *Engine) { e.rules.Fetcher.WalkAll = true })
			if !bytes.Equal(changes, all) {
				t.Fatalf("the traces differ (first: change lists, second: every partition walked); %s", firstDiff(changes, all))
			}
			if changesFetchers != allFetchers {
				t.Fatalf("fetcher state differs (first: change lists, second: every partition walked); %s",
					firstDiff([]byte(changesFetchers), []byte(allFetchers)))
			}
		})
	}
}

// followerInFlight is TestFollowerChangesInFlight's script. While a Fetch carrying t-0..t-4 is in
// flight: the leader appends to t-0..t-2; t-0's fetch state is replaced at a new leader epoch
// (addFetcher); t-1 leaves the thread and comes back; t-2 leaves it; the leader's log start of
// t-3 moves up; t-4's leader moves to a new epoch, and so does t-4's fetch state (replaced), with
// nothing for the answer to carry. It returns the trace and the fetcher's state.
func followerInFlight(t *testing.T, prepare func(*Engine)) (string, *sessionSetup) {
	t.Helper()
	s := newSessionSetup(t, "3.7", 5, nil)
	prepare(s.e)
	leader := func(i int) *replica { return s.e.replicaOn(s.parts[i].pid, 0) }
	follower := func(i int) *replica { return s.e.replicaOn(s.parts[i].pid, 1) }
	restart := func(i int, epoch int32) {
		st := s.e.era.initialFetchState(follower(i).Log(), s.parts[i].pid, epoch)
		s.e.addFetcher(s.b, 0, st)
	}
	for i := range s.parts {
		appendLeader(s.e, leader(i), 3)
	}
	for range 4 {
		s.doWork(t)
	}
	if s.f.InFlight() == 0 || s.e.pending.get(s.f.InFlight()).Type != MsgFetch || s.f.SentCount() != 5 {
		t.Fatalf("want a Fetch of the 5 partitions in flight, have #%d carrying %d", s.f.InFlight(), s.f.SentCount())
	}
	for i := range 3 {
		appendLeader(s.e, leader(i), 2)
	}
	restart(0, follower(0).LeaderEpoch()+1)
	s.e.removeFetcherForPartitions(s.b, []int32{s.parts[1].pid, s.parts[2].pid})
	restart(1, follower(1).LeaderEpoch())
	leader(3).Log().SetLogStartOffset(2)
	leader(3).SessionsChanged()
	leader(4).SetLeaderEpoch(leader(4).LeaderEpoch() + 1) // quietly: the session's partition stays clean
	restart(4, leader(4).LeaderEpoch())
	for range 4 {
		s.doWork(t)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for i := range s.e.events {
		if err := enc.Encode(&s.e.events[i]); err != nil {
			t.Fatal(err)
		}
	}
	dumpFetchers(&b, s.e)
	return b.String(), s
}

// TestFollowerChangesInFlight: what the presets and sweeps rarely or never do while a Fetch is in
// flight (followerInFlight) gives the same trace as walking every partition, with the change
// lists checked.
func TestFollowerChangesInFlight(t *testing.T) {
	changes, s := followerInFlight(t, func(e *Engine) {
		e.rules.Fetcher.Check = func(p string) { t.Error(p) }
	})
	all, _ := followerInFlight(t, func(e *Engine) { e.rules.Fetcher.WalkAll = true })
	if changes != all {
		t.Fatalf("the traces differ (first: change lists, second: every partition walked); %s", firstDiff([]byte(changes), []byte(all)))
	}
	// The script did what it says: the answer was applied to the replaced and the rejoined
	// partitions, and later Fetches sent t-3's new log start and t-4's new epoch.
	if leo0, leo1 := s.e.replicaOn(s.parts[0].pid, 1).Log().LogEndOffset(), s.e.replicaOn(s.parts[1].pid, 1).Log().LogEndOffset(); leo0 != 5 || leo1 != 5 {
		t.Errorf("the follower's LEOs of t-0 and t-1: %d and %d, want 5 (the in-flight answer applied)", leo0, leo1)
	}
	if start := s.e.replicaOn(s.parts[3].pid, 1).Log().LogStartOffset(); start != 2 {
		t.Errorf("the follower's log start of t-3: %d, want 2", start)
	}
	sentStart, sentEpoch := false, false
	for _, ev := range s.e.events {
		if m := ev.Message; m != nil && m.Fetch != nil && m.From == 1 {
			for _, fp := range m.Fetch.Partitions {
				sentStart = sentStart || (fp.Partition == 3 && fp.LogStartOffset == 2)
				sentEpoch = sentEpoch || (fp.Partition == 4 && fp.CurrentLeaderEpoch == s.e.replicaOn(s.parts[4].pid, 0).LeaderEpoch())
			}
		}
	}
	if !sentStart || !sentEpoch {
		t.Errorf("a Fetch sent t-3's new log start: %v, t-4's new epoch: %v; want both", sentStart, sentEpoch)
	}
}
