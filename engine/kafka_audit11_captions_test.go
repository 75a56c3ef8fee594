package engine

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Audit of the presets' guided tours (docs/scenarios.md, "Captions"): a caption is read while the
// page animates the run, so what it states about the cluster must be what the run shows around
// it. The engine's rules move from session to session (an election gains a leader-epoch bump, a
// retry leaves later), and a caption written for the old run then names an epoch or a broker
// the run no longer shows. These tests hold every preset's captions to the run.

// captionWindow is what the run shows while one caption is on screen, read from the events from
// the previous caption's time to the next caption's (the run's end after the last): the leader
// epochs, ISRs and controller epochs the cluster had at some moment of it, and the brokers a
// leader change made leader in it.
type captionWindow struct {
	epochs, controllerEpochs map[int64]bool
	isrs                     map[string]bool
	elected                  map[int32]bool
	// down and up are the brokers that went down (killed, stopped, isolated, beginning a
	// controlled shutdown) and came back (started, healed) in the window.
	down, up map[int32]bool
}

// captionWindows runs the preset and returns, for each caption in trace order, its text and its
// window. The state at a window's start (the leader epoch and ISR each partition had, the
// controller epoch) counts as shown, so a caption may name the state it explains.
func captionWindows(t *testing.T, sc *Scenario) ([]string, []captionWindow) {
	t.Helper()
	var evs []Event
	e, res, err := Run(sc, func(b []Event) { evs = append(evs, b...) })
	if err != nil || !res.OK() {
		t.Fatalf("run: %v %v", err, res.Failures)
	}
	type state struct {
		epoch int64
		isr   string
	}
	cur := map[string]state{} // by partition name, as the controller has it
	for pid := range int32(e.PartitionCount()) {
		p := e.partitions[pid]
		cur[p.name()] = state{0, isrKey(p.hosts)} // at time 0 every replica is in the ISR, at leader epoch 0
	}
	controllerEpoch := int64(1)
	var capT []int64
	var texts []string
	for _, ev := range evs {
		if ev.Type == EvCaption {
			capT, texts = append(capT, ev.T), append(texts, ev.Text)
		}
	}
	wins := make([]captionWindow, len(capT))
	for i := range wins {
		wins[i] = captionWindow{map[int64]bool{}, map[int64]bool{}, map[string]bool{}, map[int32]bool{}, map[int32]bool{}, map[int32]bool{}}
	}
	// inWins lists the windows an event at time at belongs to.
	inWins := func(at int64) []int {
		var out []int
		for i := range capT {
			from, to := int64(0), res.End
			if i > 0 {
				from = capT[i-1]
			}
			if i+1 < len(capT) {
				to = capT[i+1]
			}
			if at >= from && at <= to {
				out = append(out, i)
			}
		}
		return out
	}
	// snapshot adds the state as it stands to the windows open at time at.
	snapshot := func(at int64) {
		for _, i := range inWins(at) {
			for _, s := range cur {
				wins[i].epochs[s.epoch] = true
				wins[i].isrs[s.isr] = true
			}
			wins[i].controllerEpochs[controllerEpoch] = true
		}
	}
	snapshot(0)
	for _, ev := range evs {
		name := ev.Topic + "-" + strconv.Itoa(int(ev.Partition.V))
		switch {
		case ev.Type == EvLeaderChange || ev.Type == EvISRChange:
			s := cur[name]
			if ev.Epoch.Set {
				s.epoch = ev.Epoch.V
			}
			if ev.ISR != nil {
				s.isr = isrKey(ev.ISR)
			}
			cur[name] = s
			if ev.Type == EvLeaderChange && ev.To.Set {
				for _, i := range inWins(ev.T) {
					wins[i].elected[int32(ev.To.V)] = true
				}
			}
		case ev.Type == EvRole && ev.Epoch.Set:
			// A LeaderAndIsr that changes neither leader nor ISR (a reassignment's) shows its epoch
			// only where a broker takes it.
			for _, i := range inWins(ev.T) {
				wins[i].epochs[ev.Epoch.V] = true
			}
		case ev.Type == EvController && ev.Epoch.Set:
			controllerEpoch = ev.Epoch.V
		case ev.Type == EvBrokerDown || ev.Type == EvIsolate || ev.Type == EvShutdown:
			for _, i := range inWins(ev.T) {
				wins[i].down[ev.Broker.V] = true
			}
			continue
		case ev.Type == EvBrokerUp || ev.Type == EvHeal:
			for _, i := range inWins(ev.T) {
				if ev.Broker.Set {
					wins[i].up[ev.Broker.V] = true
				} else { // every link healed
					for b := range int32(sc.Brokers) {
						wins[i].up[b] = true
					}
				}
			}
			continue
		case ev.Type == EvCaption:
		default:
			continue
		}
		snapshot(ev.T)
	}
	return texts, wins
}

func isrKey(isr []int32) string {
	s := slices.Clone(isr)
	slices.Sort(s)
	return fmt.Sprint(s)
}

var (
	// "leader epoch 2", "in epoch 3", "at epoch 1": a partition's leader epoch.
	captionEpoch = regexp.MustCompile(`\b(?:leader epoch|in epoch|at epoch) (\d+)`)
	// A broker going down or coming back: "Broker 0 crashes", "Leader 0 stops", "Broker 1 comes
	// back", "Broker 0, the last ISR member, returns".
	captionDown = regexp.MustCompile(`(?:[Bb]roker|[Ff]ollower|[Ll]eader) (\d+)(?:,[^,.]*,)? (?:crashes|dies|is killed|loses power|stops|is stopped|is isolated|begins a controlled shutdown)(?: receiving| fetching)?`)
	captionUp   = regexp.MustCompile(`(?:[Bb]roker|[Ff]ollower|[Ll]eader) (\d+)(?:,[^,.]*,)? (?:restarts|returns|comes back|is restarted)`)
	// "controller epoch 2".
	captionControllerEpoch = regexp.MustCompile(`controller epoch (\d+)`)
	// "the ISR [0 2]", "ISR shrinks to [0]", "ISR (the in-sync replicas, here [0 1 2])".
	captionISR = regexp.MustCompile(`ISR[^.\[\]]{0,40}\[([\d ]+)\]`)
	// An election that names whom it elects: "elects broker 2", "makes broker 0 leader",
	// "elects the first live ISR member: broker 2", "new leaders ... (brokers 6 and 7)", "moves
	// leadership to broker 1", "see them move to broker 6".
	captionElects = []*regexp.Regexp{
		regexp.MustCompile(`elects (?:broker )?(\d+)`),
		regexp.MustCompile(`makes broker (\d+) leader`),
		regexp.MustCompile(`elects [^.]*?: broker (\d+)`),
		regexp.MustCompile(`elects [^.;:]*?\(brokers? (\d+)(?: and (\d+))?\)`),
		regexp.MustCompile(`mov\w* (?:leadership )?(?:back )?to brokers? (\d+)(?: and (\d+))?`),
	}
)

// TestAudit11PresetCaptionsMatchRun: every preset has 6 to 12 captions (docs/scenarios.md), and
// each leader epoch, controller epoch, ISR, elected broker and broker going down or coming back
// that a caption names is one the run shows while that caption is on screen; the description's are
// held to the whole run. It caught the large-cluster tour and description electing "brokers 6
// and 7" (each partition broker 5 led is [5 6 7]: broker 6, first live in each list, takes them
// all).
func TestAudit11PresetCaptionsMatchRun(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ParseScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			texts, wins := captionWindows(t, sc)
			if n := len(texts); n < 6 || n > 12 {
				t.Errorf("%d captions; a tour has 6 to 12", n)
			}
			for i, text := range texts {
				checkCaptionClaims(t, fmt.Sprintf("caption %d", i), text, wins[i])
			}
			// The description tells the whole run: its claims are held to all of it.
			all := captionWindow{map[int64]bool{}, map[int64]bool{}, map[string]bool{}, map[int32]bool{}, map[int32]bool{}, map[int32]bool{}}
			for _, w := range wins {
				maps.Copy(all.epochs, w.epochs)
				maps.Copy(all.controllerEpochs, w.controllerEpochs)
				maps.Copy(all.isrs, w.isrs)
				maps.Copy(all.elected, w.elected)
				maps.Copy(all.down, w.down)
				maps.Copy(all.up, w.up)
			}
			checkCaptionClaims(t, "the description", sc.Description, all)
		})
	}
}

// checkCaptionClaims holds what text (a caption, or the description, labelled label) names to
// what the run shows in w.
func checkCaptionClaims(t *testing.T, label, text string, w captionWindow) {
	t.Helper()
	short := text[:min(len(text), 70)]
	for _, m := range captionEpoch.FindAllStringSubmatch(text, -1) {
		if n, _ := strconv.ParseInt(m[1], 10, 64); !w.epochs[n] {
			t.Errorf("%s (%q…) says %q; the run shows leader epochs %v", label, short, m[0], keysOf(w.epochs))
		}
	}
	for _, m := range captionControllerEpoch.FindAllStringSubmatch(text, -1) {
		if n, _ := strconv.ParseInt(m[1], 10, 64); !w.controllerEpochs[n] {
			t.Errorf("%s (%q…) says %q; the run shows controller epochs %v", label, short, m[0], keysOf(w.controllerEpochs))
		}
	}
	for _, m := range captionISR.FindAllStringSubmatch(text, -1) {
		var isr []int32
		for _, f := range strings.Fields(m[1]) {
			b, _ := strconv.Atoi(f)
			isr = append(isr, int32(b))
		}
		if !w.isrs[isrKey(isr)] {
			t.Errorf("%s (%q…) says %q; the run shows ISRs %v", label, short, m[0], keysOf(w.isrs))
		}
	}
	for _, c := range []struct {
		re    *regexp.Regexp
		seen  map[int32]bool
		event string
	}{{captionDown, w.down, "goes down"}, {captionUp, w.up, "comes back"}} {
		for _, m := range c.re.FindAllStringSubmatch(text, -1) {
			if strings.HasSuffix(m[0], "receiving") || strings.HasSuffix(m[0], "fetching") {
				continue // "broker 1 stops receiving records": a link, not the broker
			}
			if b, _ := strconv.Atoi(m[1]); !c.seen[int32(b)] {
				t.Errorf("%s (%q…) says %q; in the run meanwhile only %v %s", label, short, m[0], keysOf(c.seen), c.event)
			}
		}
	}
	for _, re := range captionElects {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			for _, g := range m[1:] {
				if g == "" {
					continue
				}
				if b, _ := strconv.Atoi(g); !w.elected[int32(b)] {
					t.Errorf("%s (%q…) says %q; the run elects %v meanwhile", label, short, m[0], keysOf(w.elected))
				}
			}
		}
	}
}

func keysOf[K int64 | int32 | string](m map[K]bool) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
