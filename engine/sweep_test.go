package engine

// The seeded random fault sweep (VOPR-style, see docs/testing.md). For each seed the test draws a
// cluster and a swarm configuration, then drives the engine through a fault phase and a liveness
// phase, and requires that no invariant breaks and that the cluster converges.
//
// Fault model. Every fault below is one Kafka promises to tolerate with RF 3,
// min.insync.replicas 2, acks=all and unclean.leader.election.enable false, as long as at most
// min.insync.replicas−1 = 1 replica of a partition is faulty at a time:
//   - kill: the process dies and restarts later (1–40 s); the log on disk survives;
//   - bounce: kill, then restart before the ZooKeeper session expires (0–2 s);
//   - power loss: kill with loseUnflushed (the page cache is lost), restart later (0–30 s);
//   - isolate: every link of the broker is cut, ZooKeeper's included; heal later (0.5–40 s);
//   - shutdown: controlled shutdown, restart later (1–30 s);
//   - preferred and operator-chosen elections (clean: the target must be in the ISR);
//   - slow link: one direction between two brokers gets 20–1500 ms of latency for 1–30 s. Not a
//     replica fault (messages stay in order and arrive within every timeout), so it is allowed
//     at any time; it only moves the timing.
// The load is acks=all produces and consumes. Faults never stack on a partition. A broker is
// *settled* when it runs, is not isolated, holds a ZooKeeper session, no recovery of it is scheduled, and a usable controller has processed its
// current registration (controller.live equals the session's broker epoch). A new fault may hit
// broker b only when every replica of every partition b hosts is settled and in the controller's
// ISR, and the partition has a leader. So a restarted or healed replica counts as faulty until it
// is back in the ISR: the ISR as ZooKeeper holds it is what elections use, and a replica that
// lost its page cache is not a safe candidate before it has caught up. While no usable controller
// exists (its broker died or is isolated and the session has not expired yet), the ISR in
// ZooKeeper may be stale, so no new fault starts at all. Partitions that a broker does not host
// do not restrict faults on it.
//
// Beyond the model, and never generated here: two replicas of one partition down at once, unclean
// elections, failed disks and asymmetric link faults. TestSweepEras runs the older protocol eras
// (each with the fault mix it survives) and a harsher 3.7 generator; see sweepModes.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// sweepFaultPhaseMs is how long faults and load go on.
	sweepFaultPhaseMs = 120_000
	// sweepLivenessMs bounds the time from the heal to convergence.
	sweepLivenessMs = 60_000
	// sweepProbeMs is how often convergence is checked in the liveness phase.
	sweepProbeMs = 100
	// sweepFinalProduceMs bounds the time an acks=all produce after convergence may take.
	sweepFinalProduceMs = 30_000
	// sweepTailEvents is how many event texts a failure prints.
	sweepTailEvents = 40
	// sweepDefaultSeeds is the number of seeds `go test` runs without HIGHWATER_SWEEP_SEEDS.
	sweepDefaultSeeds = 300
)

// sweepSeeds returns how many seeds to run: HIGHWATER_SWEEP_SEEDS, else the mode's default.
func sweepSeeds(t *testing.T, m *sweepMode) int {
	s := os.Getenv("HIGHWATER_SWEEP_SEEDS")
	if s == "" {
		return m.defaultSeeds
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("HIGHWATER_SWEEP_SEEDS=%q: want a positive number of seeds", s)
	}
	return n
}

// sweepTotals adds up the per-seed counters for the summary line.
type sweepTotals struct {
	mu         sync.Mutex
	seeds      int
	failed     int
	faults     map[string]int
	produced   int
	acked      int
	consumes   int
	violations int
	liveness   int
	maxConvMs  int64
	events     uint64
	// byInvariant counts, per invariant name, the seeds that broke it; anomalies counts the
	// seeds of a measuring mode (0.10.2) that broke anything, liveness and log checks included.
	byInvariant map[string]int
	anomalies   int
	// stuck counts the seeds caught in a liveness failure of Kafka's own (staleEpochLoop).
	stuck int
}

func (tt *sweepTotals) add(s *sweepRun) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.seeds++
	if s.failed {
		tt.failed++
	}
	for k, n := range s.faults {
		tt.faults[k] += n
	}
	tt.produced += s.produced
	tt.acked += s.acked
	tt.consumes += s.consumes
	tt.violations += len(s.e.Violations())
	for _, name := range s.e.ViolationNames() {
		tt.byInvariant[name]++
	}
	if s.anomaly != "" {
		tt.anomalies++
	}
	if s.livenessFailed {
		tt.liveness++
	}
	if s.stuck != "" {
		tt.stuck++
	}
	tt.maxConvMs = max(tt.maxConvMs, s.convergedMs)
	tt.events += s.e.Stats().Events
}

func (tt *sweepTotals) line(m *sweepMode, elapsed time.Duration) string {
	total := 0
	var kinds []string
	for _, k := range append(slices.Clone(m.faultKinds), sweepFaultKind{name: "slow-link"}) {
		total += tt.faults[k.name]
		kinds = append(kinds, fmt.Sprintf("%s %d", k.name, tt.faults[k.name]))
	}
	var byName []string
	for _, name := range slices.Sorted(maps.Keys(tt.byInvariant)) {
		byName = append(byName, fmt.Sprintf("%s %d (%.1f per 1000 seeds)", name, tt.byInvariant[name],
			1000*float64(tt.byInvariant[name])/float64(max(tt.seeds, 1))))
	}
	inv := "none"
	if len(byName) > 0 {
		inv = strings.Join(byName, ", ")
	}
	head := "sweep:"
	if m.name != sweepDefault.name {
		head = fmt.Sprintf("sweep: mode %s (era %s):", m.name, m.eraName())
	}
	line := fmt.Sprintf("%s %d seeds, %d faults injected (%s), %d produces, %d acked, %d consumes, %d events, "+
		"%d violations, seeds per invariant: %s, %d liveness failures, %d seeds failed, slowest convergence %d ms, %.1f s",
		head, tt.seeds, total, strings.Join(kinds, ", "), tt.produced, tt.acked, tt.consumes, tt.events,
		tt.violations, inv, tt.liveness, tt.failed, tt.maxConvMs, elapsed.Seconds())
	if tt.stuck > 0 {
		line += fmt.Sprintf(", %d seeds stuck as Kafka %s is (KAFKA-10706's epoch loop)", tt.stuck, m.eraName())
	}
	if m.measure {
		line += fmt.Sprintf(", seeds with an anomaly %d (%.1f per 1000 seeds)", tt.anomalies,
			1000*float64(tt.anomalies)/float64(max(tt.seeds, 1)))
	}
	return line
}

// TestSweep runs the seeded fault sweep. Replay one seed with
// `go test./engine -run '^TestSweep$/^seed=N$'` (add HIGHWATER_SWEEP_SEEDS=M when N > 300).
func TestSweep(t *testing.T) {
	sweepMany(t, &sweepDefault)
}

// TestSweepEras runs the sweep in each mode other than the default one: the older protocol eras,
// each with the fault mix it is known to survive, 0.10.2 with the KIP-101 triggers (measured, not
// required to pass), and the harsher 3.7 generator. Replay one seed with
// `go test./engine -run '^TestSweepEras$/^MODE$/^seed=N$'`.
func TestSweepEras(t *testing.T) {
	for _, m := range sweepModes {
		t.Run(m.name, func(t *testing.T) {
			sweepMany(t, m)
		})
	}
}

// sweepMany runs seeds 1..N of a mode in parallel and prints the mode's summary line.
func sweepMany(t *testing.T, m *sweepMode) {
	n := sweepSeeds(t, m)
	totals := &sweepTotals{faults: map[string]int{}, byInvariant: map[string]int{}}
	start := time.Now()
	t.Cleanup(func() {
		line := totals.line(m, time.Since(start))
		t.Log(line)
		fmt.Println(line) // at the start of a line, for `make sim`'s grep
		// Counted over the seeds that ran (a -run filter may pick a few).
		if m.measure && m.minSeedsForAnomaly > 0 && totals.seeds >= m.minSeedsForAnomaly && totals.anomalies == 0 && !t.Failed() {
			t.Errorf("era %s: no anomaly in %d seeds with the KIP-101 triggers; the checker is blind", m.eraName(), totals.seeds)
		}
	})
	for seed := 1; seed <= n; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			s := newSweepRunMode(t, uint64(seed), m)
			defer totals.add(s)
			s.run()
		})
	}
}

// sweepFaultKind is one kind of fault and how long until it is undone.
type sweepFaultKind struct {
	name   string
	weight int
	// recoverMinMs and recoverMaxMs bound the delay until the restart or heal.
	recoverMinMs, recoverMaxMs int64
}

var sweepFaultKinds = []sweepFaultKind{
	{name: "kill", weight: 20, recoverMinMs: 1_000, recoverMaxMs: 40_000},
	{name: "bounce", weight: 20, recoverMinMs: 0, recoverMaxMs: 2_000},
	{name: "power-loss", weight: 15, recoverMinMs: 0, recoverMaxMs: 30_000},
	{name: "isolate", weight: 20, recoverMinMs: 500, recoverMaxMs: 40_000},
	{name: "shutdown", weight: 15, recoverMinMs: 1_000, recoverMaxMs: 30_000},
}

// The KIP-101 triggers:
//   - kip101: an acks=all produce to a healthy partition; 0–3 ms after it is acknowledged (the
//     followers' HW still lags one fetch round, up to replica.fetch.wait.max.ms) the operator
//     elects another ISR member, and 0–10 ms after that (before or just after its
//     LeaderAndIsr reaches the others, so they cannot fetch the records back) the new leader is
//     killed. Before KIP-101 the remaining follower truncates to its lagging HW on the new leader
//     epoch and may be elected without the acked records (TruncateToHW). One faulty
//     replica and a clean election: within Kafka's guarantees from 0.11.0 on;
//   - kip101-3: kip101, then 0–50 ms after the kill the operator elects the remaining follower
//     (clean: it is in the ISR). Before KIP-101 it has truncated to its lagging HW, so the acked
//     records are gone, and the old leader truncates to it (OFFSET_OUT_OF_RANGE). Three leader
//     epochs in well under a second: the fast consecutive leader changes of KIP-279, so
//     not drawn in 0.11.0;
//   - power-loss-2: two replicas of one partition lose power together and restart 0–5 s apart in
//     either order. Beyond min.insync.replicas−1, so measured only in 0.10.2.
var (
	sweepKip101      = sweepFaultKind{name: "kip101", weight: 20, recoverMinMs: 1_000, recoverMaxMs: 40_000}
	sweepKip101x3    = sweepFaultKind{name: "kip101-3", weight: 20, recoverMinMs: 1_000, recoverMaxMs: 40_000}
	sweepPowerLoss2  = sweepFaultKind{name: "power-loss-2", weight: 10, recoverMinMs: 0, recoverMaxMs: 5_000}
	sweepKindsKip101 = append(slices.Clone(sweepFaultKinds), sweepKip101)
	// kip101-3 as well: the eras with KIP-279 (2.1) and 0.10.2 (measured).
	sweepKindsKip101x3 = append(slices.Clone(sweepKindsKip101), sweepKip101x3)
	// 0.11.0's mix and power-loss-2 (10 of 120 fault draws), for both eras.
	sweepKindsPowerLoss2 = append(slices.Clone(sweepKindsKip101), sweepPowerLoss2)
)

// sweepMode is one generator: the protocol era and the faults and elections it draws.
type sweepMode struct {
	name string
	// era is inter.broker.protocol.version; "" keeps the default (3.7) and the scenario's config
	// as it always was (the golden trace hashes of sweep seeds 1–4).
	era        string
	faultKinds []sweepFaultKind
	// oneLeaderChange: a partition is healthy only when every replica has also applied the
	// controller's current leader epoch and finished its truncation in it (a follower has applied
	// a fetch response in the epoch, or in 0.10.2 truncated to its HW: hwConfirmed), and elections need a healthy partition too; the
	// auto rebalance is off. So no replica misses a leader epoch, and no leader is elected holding
	// records of an older epoch above the start of one it never saw: the KIP-279 trigger.
	oneLeaderChange bool
	// harsh: half the faults aimed at a partition's current leader, one produce in five acks=1.
	harsh bool
	// spareController: no fault on the controller's broker. Before 2.3 (KAFKA-3143) a controller
	// failover leaves the replicas of dead brokers in the ISR, so a failover while a replica is
	// down or behind can elect a leader without acknowledged records: outside what those releases
	// survive, and measured on its own (the -failover modes).
	spareController bool
	// measure: violations are counted, not failures (an era known to break); the run fails only
	// if minSeedsForAnomaly seeds or more show no anomaly at all.
	measure            bool
	minSeedsForAnomaly int
	defaultSeeds       int
}

func (m *sweepMode) eraName() string {
	if m.era == "" {
		return "3.7"
	}
	return m.era
}

// sweepDefault is TestSweep's generator (docs/testing.md).
var sweepDefault = sweepMode{name: "3.7", faultKinds: sweepFaultKinds, defaultSeeds: sweepDefaultSeeds}

// sweepModes are TestSweepEras' generators. Why each era gets its mix: docs/testing.md, "Eras".
var sweepModes = []*sweepMode{
	{name: "3.7-harsh", faultKinds: sweepFaultKinds, harsh: true, defaultSeeds: 40},
	{name: "2.1", era: "2.1", faultKinds: sweepKindsKip101x3, spareController: true, defaultSeeds: 40},
	{name: "0.11.0", era: "0.11.0", faultKinds: sweepKindsKip101, oneLeaderChange: true, spareController: true, defaultSeeds: 40},
	// The same mixes with faults on the controller's broker too: measured, for the stale ISR a
	// failover leaves before 2.3.
	{name: "2.1-failover", era: "2.1", faultKinds: sweepKindsKip101x3, measure: true, defaultSeeds: 40},
	{name: "0.11.0-failover", era: "0.11.0", faultKinds: sweepKindsKip101, oneLeaderChange: true, measure: true, defaultSeeds: 40},
	// 0.11.0's mix and kip101-3, within Kafka's guarantees from 2.1 on (kip101 from 0.11.0).
	{name: "0.10.2", era: "0.10.2", faultKinds: sweepKindsKip101x3, oneLeaderChange: true,
		measure: true, minSeedsForAnomaly: 40, defaultSeeds: 60},
	// Beyond the guarantees (two replicas lose power together): measured in both eras, to
	// show what KIP-101 changes there (committed-divergence only before it).
	{name: "0.10.2-power-loss", era: "0.10.2", faultKinds: sweepKindsPowerLoss2, oneLeaderChange: true,
		measure: true, defaultSeeds: 20},
	{name: "0.11.0-power-loss", era: "0.11.0", faultKinds: sweepKindsPowerLoss2, oneLeaderChange: true,
		measure: true, defaultSeeds: 20},
}

// sweepRecovery is a restart or heal due at a time, or the end of a slow link.
type sweepRecovery struct {
	at     int64
	broker int32
	heal   bool
	// link: the link broker → to gets its default latency back.
	link bool
	to   int32
}

// sweepRun is one seed's run.
type sweepRun struct {
	t    *testing.T
	seed uint64
	mode *sweepMode
	// rng drives every choice of the test; the engine has its own PRNG, seeded from sc.Seed.
	rng   *rand.Rand
	sc    *Scenario
	e     *Engine
	steps []Step
	// recoveries are the scheduled restarts and heals, in time order.
	recoveries []sweepRecovery
	// tail holds the last event texts; violationTail freezes it at the first violation.
	tail          []string
	violationTail []string
	// textLog, when HIGHWATER_SWEEP_TRACE names a file, gets every event text of the run.
	textLog *os.File
	// sink, if set, gets every event (the determinism tests record the trace with it).
	sink func([]Event)
	// parts lists (topic, partition) in pid order.
	parts []sweepPart

	faults         map[string]int
	produced       int
	acked          int
	consumes       int
	failed         bool
	livenessFailed bool
	// stuck: the seed stopped converging as Kafka's own era does (staleEpochLoop), counted apart.
	stuck       string
	convergedMs int64
	// anomaly is the first failure of a measuring mode, which is counted instead of failing.
	anomaly string
}

type sweepPart struct {
	topic string
	index int32
}

func newSweepRun(t *testing.T, seed uint64) *sweepRun { return newSweepRunMode(t, seed, &sweepDefault) }

func newSweepRunMode(t *testing.T, seed uint64, m *sweepMode) *sweepRun {
	s := &sweepRun{t: t, seed: seed, mode: m, rng: rand.New(rand.NewPCG(seed, 0x7377656570)), faults: map[string]int{}}
	s.sc = sweepScenario(s.rng, seed, m)
	for _, tp := range s.sc.Topics {
		for i := range sweepTopicPartitions(tp) {
			s.parts = append(s.parts, sweepPart{topic: tp.Name, index: int32(i)})
		}
	}
	e, err := New(s.sc)
	if err != nil {
		t.Fatalf("seed %d: the generated scenario is invalid: %v", seed, err)
	}
	s.e = e
	if path := os.Getenv("HIGHWATER_SWEEP_TRACE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		s.textLog = f
	}
	return s
}

func sweepTopicPartitions(tp Topic) int {
	if tp.Assignment != nil {
		return len(tp.Assignment)
	}
	return tp.Partitions
}

// sweepScenario draws the cluster and the swarm configuration for a seed: 3–5 brokers, 1–4
// partitions of RF 3 in one or two topics, min.insync.replicas 2, and timeouts, latencies and
// flush settings varied within Kafka's guarantees.
func sweepScenario(rng *rand.Rand, seed uint64, m *sweepMode) *Scenario {
	brokers := 3 + rng.IntN(3)
	partitions := 1 + rng.IntN(4)
	sc := &Scenario{
		Name:        fmt.Sprintf("sweep seed %d", seed),
		Description: "A schedule generated by the fault sweep (engine/sweep_test.go); faults stay within Kafka's guarantees.",
		Seed:        rng.Uint64N(1 << 31),
		Brokers:     brokers,
	}
	topics := 1
	if partitions > 1 && rng.IntN(3) == 0 {
		topics = 2
	}
	for ti := range topics {
		n := partitions / topics
		if ti == 0 {
			n += partitions % topics
		}
		tp := Topic{Name: fmt.Sprintf("t%d", ti)}
		if rng.IntN(2) == 0 {
			tp.Partitions, tp.ReplicationFactor = n, 3
		} else {
			for range n {
				tp.Assignment = append(tp.Assignment, sweepReplicas(rng, brokers))
			}
		}
		sc.Topics = append(sc.Topics, tp)
	}
	pick := func(vals ...string) json.RawMessage { return json.RawMessage(vals[rng.IntN(len(vals))]) }
	sc.Config = map[string]json.RawMessage{
		"min.insync.replicas":                           json.RawMessage("2"),
		"unclean.leader.election.enable":                json.RawMessage("false"),
		"zookeeper.session.timeout.ms":                  pick("6000", "10000", "18000"),
		"replica.lag.time.max.ms":                       pick("10000", "30000"),
		"replica.fetch.wait.max.ms":                     pick("100", "500"),
		"replica.high.watermark.checkpoint.interval.ms": pick("1000", "5000"),
		"num.replica.fetchers":                          pick("1", "1", "2"),
		"sim.network.latency.ms":                        pick("1", "2", "5"),
		"sim.network.jitter.ms":                         pick("0", "0", "3"),
		"leader.imbalance.check.interval.seconds":       pick("300", "20"),
		// Small fetches (100-byte records) make followers catch up over several rounds.
		"replica.fetch.max.bytes":          pick("1048576", "1048576", "300"),
		"replica.fetch.response.max.bytes": pick("10485760", "10485760", "500"),
	}
	if v := pick("0", "0", "1", "5"); string(v) != "0" {
		sc.Config["log.flush.interval.messages"] = v
	}
	if m.era != "" {
		sc.Name = fmt.Sprintf("sweep %s seed %d", m.name, seed)
		sc.Config["inter.broker.protocol.version"] = json.RawMessage(strconv.Quote(m.era))
	}
	if m.oneLeaderChange {
		sc.Config["auto.leader.rebalance.enable"] = json.RawMessage("false")
	}
	return sc
}

// sweepReplicas draws an RF-3 replica list: three distinct brokers in random order.
func sweepReplicas(rng *rand.Rand, brokers int) []int32 {
	perm := rng.Perm(brokers)
	out := make([]int32, 3)
	for i := range out {
		out[i] = int32(perm[i])
	}
	return out
}
