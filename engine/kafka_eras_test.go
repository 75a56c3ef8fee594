package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/highwater-sim/highwater/engine/commitlog"
)

// Each era follows its own Kafka release. These tests are built from that release's code (tags
// 0.10.2.2, 0.11.0.2, 2.1.1, 3.7.0) and name the function; docs/eras.md has the table.

func eraCfg(era string) map[string]string {
	return map[string]string{"inter.broker.protocol.version": fmt.Sprintf("%q", era)}
}

// TestEraDefaults: KafkaConfig.scala's Defaults of each release. zookeeper.session.timeout.ms and
// replica.lag.time.max.ms went 6000 → 18000 and 10000 → 30000 in 2.5 (KIP-537);
// unclean.leader.election.enable went true → false in 0.11.0 (KIP-106). A name the scenario sets
// wins over the era's default. The view also names enable.idempotence before 3.7 (the era's
// client's default, off before 3.0's KIP-679).
func TestEraDefaults(t *testing.T) {
	for _, tc := range []struct {
		era          string
		zk, lag      int64
		unclean      bool
		changedNames int
	}{{"0.10.2", 6000, 10000, true, 4}, {"0.11.0", 6000, 10000, false, 3}, {"2.1", 6000, 10000, false, 3}, {"3.7", 18000, 30000, false, 0}} {
		c, err := NewConfig(map[string]json.RawMessage{"inter.broker.protocol.version": json.RawMessage(fmt.Sprintf("%q", tc.era))})
		if err != nil {
			t.Fatal(err)
		}
		if c.ZookeeperSessionTimeoutMs != tc.zk || c.ReplicaLagTimeMaxMs != tc.lag || c.UncleanLeaderElectionEnable != tc.unclean {
			t.Errorf("%s: zk %d lag %d unclean %v; want %d %d %v", tc.era, c.ZookeeperSessionTimeoutMs, c.ReplicaLagTimeMaxMs,
				c.UncleanLeaderElectionEnable, tc.zk, tc.lag, tc.unclean)
		}
		if got := EraChangedDefaults(c); len(got) != tc.changedNames {
			t.Errorf("%s: the view names %v as changed by the era, want %d names", tc.era, got, tc.changedNames)
		}
	}
	c, err := NewConfig(map[string]json.RawMessage{"zookeeper.session.timeout.ms": json.RawMessage("9000"),
		"inter.broker.protocol.version": json.RawMessage(`"0.10.2"`)})
	if err != nil {
		t.Fatal(err)
	}
	if c.ZookeeperSessionTimeoutMs != 9000 || c.ReplicaLagTimeMaxMs != 10000 {
		t.Errorf("a set name: zk %d lag %d, want 9000 10000", c.ZookeeperSessionTimeoutMs, c.ReplicaLagTimeMaxMs)
	}
	if _, ok := EraChangedDefaults(c)["zookeeper.session.timeout.ms"]; ok {
		t.Error("a name the scenario set is not the era's default")
	}
}

// TestEraSameLeaderLeaderAndIsr: Partition.makeFollower returns false when the leader is unchanged
// (0.10.2.2 and 0.11.0.2: `if (leaderReplicaIdOpt.isDefined && leaderReplicaIdOpt.get ==
// newLeaderBrokerId) false`), so ReplicaManager.makeFollowers neither truncates nor restarts the
// fetcher. From 2.1 (KAFKA-7395) it returns false only for the same epoch: every new epoch
// restarts the fetcher. Follower 1 holds two records above its HW when leader 0 gets a new epoch
// with the same leader.
func TestEraSameLeaderLeaderAndIsr(t *testing.T) {
	for _, tc := range []struct {
		era     string
		restart bool
		leo     int64
	}{{"0.10.2", false, 3}, {"0.11.0", false, 3}, {"2.1", true, 3}, {"3.7", true, 3}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg(tc.era))
			p := e.partitionOf(ktTopic, 0)
			runFor(t, e, 100)
			b1 := e.brokers[1]
			r1 := e.replicaOn(p.pid, 1)
			seedLog(e, r1, 3, 0) // above its HW 0
			req := e.ctrl.LeaderAndIsrFor(1, []int32{p.pid})
			req.Partitions[0].LeaderEpoch = e.ctrl.LeaderEpoch(p.pid) + 1
			e.becomeLeaderOrFollower(b1, req)
			// A restarted fetcher holds the partition in the new epoch; one left alone, in the old.
			f := fetcherOfPartition(b1, p)
			restarted := f != nil && f.State(p.pid).Epoch() == r1.LeaderEpoch()
			if r1.LeaderEpoch() != e.ctrl.LeaderEpoch(p.pid)+1 {
				t.Fatalf("follower's leader epoch %d, want %d (makeFollower takes the epoch either way)", r1.LeaderEpoch(), e.ctrl.LeaderEpoch(p.pid)+1)
			}
			if restarted != tc.restart {
				t.Fatalf("fetcher restarted: %v, want %v", restarted, tc.restart)
			}
			if got := r1.Log().LogEndOffset(); tc.era == "0.10.2" && got != tc.leo {
				t.Fatalf("LEO %d, want %d: no truncation to the HW without a new leader", got, tc.leo)
			}
		})
	}
}

// TestEraEpochCacheBeforeKafka7415: in 0.11.0.2 Partition.makeLeader does not touch the
// leader-epoch cache; the epoch's entry appears with the leader's first append (Log.append:
// leaderEpochCache.assign(batch.partitionLeaderEpoch, batch.baseOffset)). From 2.1 (KAFKA-7415)
// makeLeader assigns (epoch, LEO).
func TestEraEpochCacheBeforeKafka7415(t *testing.T) {
	for _, tc := range []struct{ era, afterElection, afterAppend string }{
		{"0.11.0", "(0,0)", "(0,0) (5,2)"},
		{"2.1", "(0,0) (5,2)", "(0,0) (5,2)"},
	} {
		e, p := newUnitEngine(t, 2, []int32{0, 1}, eraCfg(tc.era))
		r := e.replicaOn(p.pid, 0)
		*r.Log() = logOf(t, "0-1/e0")
		ktLead(e, p, 0, 5, []int32{0, 1}, 1)
		if got := cacheString(r.Log().Cache()); got != tc.afterElection {
			t.Errorf("%s: cache after the election [%s], want [%s]", tc.era, got, tc.afterElection)
		}
		appendLeader(e, r, 1)
		if got := cacheString(r.Log().Cache()); got != tc.afterAppend {
			t.Errorf("%s: cache after the first append [%s], want [%s]", tc.era, got, tc.afterAppend)
		}
	}
}

// TestEraEndOffsetFor011: LeaderEpochFileCache.endOffsetFor in 0.11.0.2: the latest epoch (also -1
// against an empty cache, the bug KAFKA-6857 fixed after 0.11.0.2) → the LEO; an epoch below the
// first entry, or with no entry above it → UNDEFINED_EPOCH_OFFSET; else the start offset of the
// first larger epoch. A 0.11 follower that gets UNDEFINED truncates to its own HW
// (ReplicaFetcherThread.maybeTruncate).
func TestEraEndOffsetFor011(t *testing.T) {
	er := eraFor("0.11.0")
	withEntries := logOf(t, "0-1/e2 2-4/e4 5/e7")
	empty := logOf(t, "")
	for _, tc := range []struct {
		name  string
		log   *commitlog.Log
		asked int32
		want  int64
	}{
		{"latest", &withEntries, 7, 6},
		{"below the first entry", &withEntries, 1, -1},
		{"between entries", &withEntries, 3, 2},
		{"the middle entry", &withEntries, 4, 5},
		{"an epoch it has", &withEntries, 2, 2},
		{"above every entry", &withEntries, 9, -1},
		{"undefined against a non-empty cache", &withEntries, -1, -1},
		{"undefined against an empty cache", &empty, -1, 0},
	} {
		if _, got := er.answerOffsetsForEpoch(tc.log, tc.asked); got != tc.want {
			t.Errorf("%s: endOffsetFor(%d) = %d, want %d", tc.name, tc.asked, got, tc.want)
		}
	}
}

// TestEraIsrExpandBeforeKafka7128: Partition.maybeExpandIsr in 0.10.2.2 and 0.11.0.2 adds a
// follower whose LEO reached the HW (`replica.logEndOffset.offsetDiff(leaderHW) >= 0`); from 2.1
// (KAFKA-7128) it must also reach the leader's epoch start offset. Leader 0 starts epoch 10 at
// offset 5 with HW 1; follower 1 fetches at 1.
func TestEraIsrExpandBeforeKafka7128(t *testing.T) {
	for _, tc := range []struct {
		era  string
		isr  []int32
		join bool
	}{{"0.11.0", []int32{0, 1, 2}, true}, {"2.1", []int32{0, 2}, false}} {
		e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, eraCfg(tc.era))
		r := e.replicaOn(p.pid, 0)
		*r.Log() = logOf(t, "0-4/e8")
		ktLead(e, p, 0, 10, []int32{0, 2}, 3)
		followerFetch(e, p, 2, 1, -1)
		wantHW(t, r, 1, tc.era+": follower 2 fetched at 1")
		followerFetch(e, p, 1, 1, -1)
		if !slices.Equal(r.State().ISR(), tc.isr) {
			t.Errorf("%s: ISR %v after follower 1 fetched at 1 (epoch start 5), want %v", tc.era, r.State().ISR(), tc.isr)
		}
	}
}

// TestEraLeaderWritesIsrToZooKeeper: before AlterIsr (KIP-497, IBP 2.7) Partition.maybeShrinkIsr
// calls updateIsr, which writes the znode itself with the same leader epoch, conditional on its
// cached zkVersion (ReplicationUtils.updateLeaderAndIsr): no AlterPartition, no pending state,
// the HW moves at once. On a zkVersion mismatch it skips the change ("Cached zkVersion [..] not
// equal to that in zookeeper, skip updating ISR").
func TestEraLeaderWritesIsrToZooKeeper(t *testing.T) {
	e, p := newUnitEngine(t, 3, []int32{0, 1, 2}, eraCfg("2.1"))
	r := e.replicaOn(p.pid, 0)
	*r.Log() = logOf(t, "")
	seedLog(e, r, 10, 4)
	ktLead(e, p, 0, 5, []int32{0, 1, 2}, 1)
	followerFetch(e, p, 1, 10, -1)
	runFor(t, e, 10001)
	e.isrShrinkTask(e.brokers[0])
	if n := len(alterPartitions(e)); n != 0 {
		t.Fatalf("%d AlterPartition requests, want 0 (the leader writes ZooKeeper)", n)
	}
	wantISR(t, r, []int32{0, 1}, []int32{0, 1}, "after the shrink")
	wantHW(t, r, 10, "after the shrink")
	if !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) || e.ctrl.LeaderEpoch(p.pid) != 5 || e.ctrl.PartitionEpoch(p.pid) != 2 || r.PartitionEpoch() != 2 {
		t.Fatalf("ZooKeeper: ISR %v leader epoch %d zkVersion %d (leader cached %d); want [0 1], 5, 2, 2", e.ctrl.ISR(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.PartitionEpoch(p.pid), r.PartitionEpoch())
	}
	// Someone else wrote the znode meanwhile: the leader's cached zkVersion is stale.
	e.ctrl.SetStateForTest(p.pid, e.ctrl.Leader(p.pid), e.ctrl.LeaderEpoch(p.pid), e.ctrl.ISR(p.pid), e.ctrl.PartitionEpoch(p.pid)+1)
	followerFetch(e, p, 2, 10, -1)
	if !slices.Equal(r.State().ISR(), []int32{0, 1}) || !slices.Equal(e.ctrl.ISR(p.pid), []int32{0, 1}) {
		t.Fatalf("expand with a stale zkVersion: leader ISR %v, ZooKeeper %v; want both [0 1] (skipped)", r.State().ISR(), e.ctrl.ISR(p.pid))
	}
}

// TestEraRestartBeforeSessionExpiry: before broker epochs (KIP-380, 2.2) a broker restarted while
// its old ZooKeeper session lives cannot register (ZkUtils.registerBrokerInZk: "A broker is already
// registered on the path ... restarted it faster than the zookeeper timeout") and exits; here it
// starts when that session expires, after the controller handled its death. From 2.2 the restart
// registers at once and the controller sees a bounce (a new broker epoch).
func TestEraRestartBeforeSessionExpiry(t *testing.T) {
	for _, tc := range []struct {
		era     string
		upAt    int64 // when broker 1 runs again
		session int64
	}{{"2.1", 7000, 6000}, {"3.7", 2000, 18000}} {
		t.Run(tc.era, func(t *testing.T) {
			e := newKafkaEngine(t, 3, [][]int32{{0, 1, 2}}, eraCfg(tc.era))
			runFor(t, e, 1000)
			apply(t, e, `{"do":"kill","broker":1}`)
			runFor(t, e, 1000)
			apply(t, e, `{"do":"restart","broker":1}`)
			runUntilTrue(t, e, 20000, "broker 1 runs", func() bool { return e.brokers[1].Running() })
			if e.now != tc.upAt {
				t.Fatalf("broker 1 runs again at %d ms, want %d", e.now, tc.upAt)
			}
		})
	}
}

// TestKafkaUnknownLocalPartition: a broker that has not had its first LeaderAndIsr since it
// started has no Partition object for its replicas. From 2.0 a request for one is answered
// NOT_LEADER_OR_FOLLOWER (ReplicaManager.getPartitionAndLeaderReplicaIfLocal: the metadata cache
// knows the topic), which sends clients back to their metadata; before, UNKNOWN_TOPIC_OR_PARTITION
// (getLeaderReplicaIfLocal in 0.10.2 and 0.11.0).
func TestKafkaUnknownLocalPartition(t *testing.T) {
	for _, c := range []struct {
		era  string
		want KafkaError
	}{{"0.10.2", ErrUnknownTopicOrPartition}, {"0.11.0", ErrUnknownTopicOrPartition},
		{"2.1", ErrNotLeaderOrFollower}, {"3.7", ErrNotLeaderOrFollower}} {
		e := newKafkaEngine(t, 2, [][]int32{{0, 1}}, eraCfg(c.era))
		r := e.replicaOn(e.partitionOf(ktTopic, 0).pid, 0)
		if got := r.CheckLeaderRequest(-1, 1, e.era.notLeaderForUnknownLocal); got != ErrNone {
			t.Fatalf("%s: the leader answers %s before the reset", c.era, got)
		}
		r.ResetMemory() // as a restart leaves it until its first LeaderAndIsr
		if got := r.CheckLeaderRequest(-1, 1, e.era.notLeaderForUnknownLocal); got != c.want {
			t.Errorf("%s: a request for a partition without its Partition object is answered %s, want %s", c.era, got, c.want)
		}
	}
}
