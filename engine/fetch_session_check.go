package engine

import (
	"fmt"
	"slices"
)

// The tests' check of the fetch sessions' dirty reads (e.sessionCheck set; never in a run): an
// incremental fetch's answer from its dirty partitions must be the answer reading every session
// partition gives, and every clean partition must stay clean (a read would be quiet, a follower
// fetch would change only its times).

// readWholeSession is the answer an incremental fetch of s would give if it read every session
// partition now (without updating follower state or the session).
func (e *Engine) readWholeSession(s *fetchSession, req *FetchRequest) *FetchResponse {
	resp := &FetchResponse{SessionID: s.ID()}
	for i := range s.parts {
		cp := &s.parts[i]
		fp := cp.fetchPartition(e)
		d, _ := e.readPartition(cp.r, req, &fp, false)
		if cp.maybeUpdateResponseData(&d, false) {
			resp.Partitions = append(resp.Partitions, d)
		}
	}
	return resp
}

// compareSessionAnswers reports where the dirty reads' answer differs from whole's, and checks
// the session's clean partitions and its dirty list.
func (e *Engine) compareSessionAnswers(s *fetchSession, whole *FetchResponse, got FetchResponse) {
	where := fmt.Sprintf("at %d, session %d (follower %d, epoch %d)", e.now, s.ID(), s.ReplicaID(), s.Epoch())
	if len(whole.Partitions) != len(got.Partitions) {
		e.sessionCheck(fmt.Sprintf("%s: the dirty reads answer %s, every partition's %s", where,
			describePartitions(got.Partitions), describePartitions(whole.Partitions)))
		return
	}
	for i := range got.Partitions {
		w, g := &whole.Partitions[i], &got.Partitions[i]
		if w.TP != g.TP || w.Error != g.Error || w.HighWatermark != g.HighWatermark || w.LogStartOffset != g.LogStartOffset ||
			w.LogEndOffset != g.LogEndOffset || (w.DivergingEpoch == nil) != (g.DivergingEpoch == nil) ||
			(w.DivergingEpoch != nil && *w.DivergingEpoch != *g.DivergingEpoch) || !slices.Equal(w.Records, g.Records) {
			e.sessionCheck(fmt.Sprintf("%s: the dirty reads answer %s, every partition's %s", where,
				describeFetchPart(*g), describeFetchPart(*w)))
		}
	}
	listed := 0
	for i := range s.parts {
		cp := &s.parts[i]
		if cp.dirty {
			listed++
			continue
		}
		fp := cp.fetchPartition(e)
		d, _ := e.readPartition(cp.r, &FetchRequest{ReplicaID: s.ReplicaID(), BrokerEpoch: s.brokerEpoch}, &fp, false)
		if cp.maybeUpdateResponseData(&d, false) || !e.clean(s, cp, &d) {
			e.sessionCheck(fmt.Sprintf("%s: partition %d is clean but reads %s", where, cp.pid, describeFetchPart(d)))
		}
	}
	if listed != len(s.dirty) {
		e.sessionCheck(fmt.Sprintf("%s: %d dirty partitions, %d on the dirty list", where, listed, len(s.dirty)))
	}
	seen := make(map[int32]bool, len(s.dirty))
	for _, i := range s.dirty {
		if i < 0 || int(i) >= len(s.parts) || !s.parts[i].dirty || seen[i] {
			e.sessionCheck(fmt.Sprintf("%s: the dirty list holds %d, not a dirty partition's index listed once", where, i))
		}
		seen[i] = true
	}
}

func describePartitions(ds []FetchPartitionData) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = describeFetchPart(d)
	}
	return fmt.Sprint(out)
}
