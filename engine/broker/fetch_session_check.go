package broker

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/highwater-sim/highwater/engine/plural"
	"github.com/highwater-sim/highwater/engine/protocol"
)

// The tests' check of the fetch sessions' dirty reads (LeaderFetchRules.Check set; never in a
// run): an incremental fetch's answer from its dirty partitions must be the answer reading every
// session partition gives, and every clean partition must stay clean (a read would be quiet, a
// follower fetch would change only its times).

// readWholeSession is the answer an incremental fetch of s would give if it read every session
// partition now (without updating follower state or the session).
func (rm *ReplicaManager) readWholeSession(h Host, rules *LeaderFetchRules, s *FetchSession, req *protocol.FetchRequest) *protocol.FetchResponse {
	resp := &protocol.FetchResponse{SessionID: s.ID()}
	lim := newResponseLimit(rules, req)
	idx := make([]int32, len(s.parts))
	for i := range idx {
		idx[i] = int32(i)
	}
	s.inOrder(idx)
	for _, i := range idx {
		cp := &s.parts[i]
		fp := cp.fetchPartition(h)
		d, _ := rm.readPartition(h, rules, cp.pid, cp.r, req, &fp, false, &lim)
		if cp.maybeUpdateResponseData(&d, false) {
			resp.Partitions = append(resp.Partitions, d)
		}
	}
	return resp
}

// compareSessionAnswers reports where the dirty reads' answer differs from whole's, and checks
// the session's clean partitions and its dirty list.
func (rm *ReplicaManager) compareSessionAnswers(h Host, rules *LeaderFetchRules, s *FetchSession, whole *protocol.FetchResponse, got protocol.FetchResponse) {
	where := fmt.Sprintf("at %d, session %d (follower %d, epoch %d)", h.Now(), s.ID(), s.ReplicaID(), s.Epoch())
	if len(whole.Partitions) != len(got.Partitions) {
		rules.Check(fmt.Sprintf("%s: the dirty reads answer %s, every partition's %s", where,
			describePartitions(got.Partitions), describePartitions(whole.Partitions)))
		return
	}
	for i := range got.Partitions {
		w, g := &whole.Partitions[i], &got.Partitions[i]
		if w.TP != g.TP || w.Error != g.Error || w.HighWatermark != g.HighWatermark || w.LogStartOffset != g.LogStartOffset ||
			w.LogEndOffset != g.LogEndOffset || (w.DivergingEpoch == nil) != (g.DivergingEpoch == nil) ||
			(w.DivergingEpoch != nil && *w.DivergingEpoch != *g.DivergingEpoch) || !slices.Equal(w.Records, g.Records) {
			rules.Check(fmt.Sprintf("%s: the dirty reads answer %s, every partition's %s", where,
				DescribeFetchPartition(*g), DescribeFetchPartition(*w)))
		}
	}
	listed := 0
	for i := range s.parts {
		cp := &s.parts[i]
		if cp.dirty {
			listed++
			continue
		}
		fp := cp.fetchPartition(h)
		d, _ := rm.readPartition(h, rules, cp.pid, cp.r, &protocol.FetchRequest{ReplicaID: s.ReplicaID(), BrokerEpoch: s.brokerEpoch}, &fp, false, nil)
		if cp.maybeUpdateResponseData(&d, false) || !s.clean(cp, &d) {
			rules.Check(fmt.Sprintf("%s: partition %d is clean but reads %s", where, cp.pid, DescribeFetchPartition(d)))
		}
	}
	if listed != len(s.dirty) {
		rules.Check(fmt.Sprintf("%s: %d dirty partitions, %d on the dirty list", where, listed, len(s.dirty)))
	}
	seen := make(map[int32]bool, len(s.dirty))
	for _, i := range s.dirty {
		if i < 0 || int(i) >= len(s.parts) || !s.parts[i].dirty || seen[i] {
			rules.Check(fmt.Sprintf("%s: the dirty list holds %d, not a dirty partition's index listed once", where, i))
		}
		seen[i] = true
	}
}

func describePartitions(ds []protocol.FetchPartitionData) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = DescribeFetchPartition(d)
	}
	return fmt.Sprint(out)
}

// DescribeFetchPartition is one partition of a Fetch answer, as the trace's text of the answer
// names it (its error, its divergence, or its records and HW).
func DescribeFetchPartition(d protocol.FetchPartitionData) string {
	switch {
	case d.Error != protocol.ErrNone:
		return fmt.Sprintf("%s-%d %s", d.Topic, d.Partition, d.Error)
	case d.DivergingEpoch != nil:
		return fmt.Sprintf("%s-%d diverging epoch %d at %d", d.Topic, d.Partition, d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset)
	}
	// strconv rather than fmt: a full answer in a large cluster lists thousands.
	return d.Topic + "-" + strconv.Itoa(int(d.Partition)) + " " + plural.Of(len(d.Records), "record") + ", HW " +
		strconv.FormatInt(d.HighWatermark, 10)
}
