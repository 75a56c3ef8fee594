package engine

import "github.com/highwater-sim/highwater/engine/protocol"

// The wire types' half of AppendEventJSON (event_json.go): each function writes one type of
// engine/protocol in the field order and with the omit rules of its struct tags. An embedded TP
// writes its topic and partition first, as encoding/json promotes them.

func (w *jsonOut) message(m *Message) {
	w.b = append(w.b, `{"id":`...)
	w.uint(m.ID)
	w.b = append(w.b, `,"type":`...)
	w.str(m.Type)
	w.b = append(w.b, `,"from":`...)
	w.int(int64(m.From))
	w.b = append(w.b, `,"to":`...)
	w.int(int64(m.To))
	w.b = append(w.b, `,"sent":`...)
	w.int(m.Sent)
	w.b = append(w.b, `,"deliver":`...)
	w.int(m.Deliver)
	if m.ReplyTo != 0 {
		w.b = append(w.b, `,"replyTo":`...)
		w.uint(m.ReplyTo)
	}
	if m.Omitted != 0 {
		w.b = append(w.b, `,"omitted":`...)
		w.int(int64(m.Omitted))
	}
	if m.Fetch != nil {
		w.b = append(w.b, `,"fetch":`...)
		w.fetch(m.Fetch)
	}
	if m.FetchResponse != nil {
		w.b = append(w.b, `,"fetchResponse":`...)
		w.fetchResponse(m.FetchResponse)
	}
	if m.OffsetsForEpoch != nil {
		w.b = append(w.b, `,"offsetsForLeaderEpoch":{"replicaId":`...)
		w.int(int64(m.OffsetsForEpoch.ReplicaID))
		w.b = append(w.b, `,"partitions":`...)
		arrayOf(w, m.OffsetsForEpoch.Partitions, (*jsonOut).offsetsForEpochPartition)
		w.b = append(w.b, '}')
	}
	if m.OffsetsForEpochResp != nil {
		w.b = append(w.b, `,"offsetsForLeaderEpochResponse":{"partitions":`...)
		arrayOf(w, m.OffsetsForEpochResp.Partitions, (*jsonOut).offsetsForEpochResult)
		w.b = append(w.b, '}')
	}
	if m.ListOffsets != nil {
		w.b = append(w.b, `,"listOffsets":`...)
		w.listOffsets(m.ListOffsets)
	}
	if m.ListOffsetsResponse != nil {
		w.b = append(w.b, `,"listOffsetsResponse":`...)
		w.listOffsetsResponse(m.ListOffsetsResponse)
	}
	if m.LeaderAndIsr != nil {
		w.b = append(w.b, `,"leaderAndIsr":`...)
		w.leaderAndIsr(m.LeaderAndIsr)
	}
	if r := m.LeaderAndIsrResponse; r != nil {
		w.b = append(w.b, `,"leaderAndIsrResponse":{`...)
		w.kafkaError(r.Error)
		if len(r.Partitions) > 0 {
			w.key(`"partitions":`)
			arrayOf(w, r.Partitions, (*jsonOut).partitionError)
		}
		w.b = append(w.b, '}')
	}
	if r := m.StopReplica; r != nil {
		w.b = append(w.b, `,"stopReplica":{"controllerId":`...)
		w.int(int64(r.ControllerID))
		w.b = append(w.b, `,"controllerEpoch":`...)
		w.int(int64(r.ControllerEpoch))
		w.b = append(w.b, `,"brokerEpoch":`...)
		w.int(r.BrokerEpoch)
		w.b = append(w.b, `,"partitions":`...)
		arrayOf(w, r.Partitions, (*jsonOut).tp)
		w.b = append(w.b, '}')
	}
	if r := m.StopReplicaResponse; r != nil {
		w.b = append(w.b, `,"stopReplicaResponse":{`...)
		w.kafkaError(r.Error)
		if len(r.Partitions) > 0 {
			w.key(`"partitions":`)
			arrayOf(w, r.Partitions, (*jsonOut).partitionError)
		}
		w.b = append(w.b, '}')
	}
	if r := m.UpdateMetadata; r != nil {
		w.b = append(w.b, `,"updateMetadata":{"controllerId":`...)
		w.int(int64(r.ControllerID))
		w.b = append(w.b, `,"controllerEpoch":`...)
		w.int(int64(r.ControllerEpoch))
		w.b = append(w.b, `,"brokerEpoch":`...)
		w.int(r.BrokerEpoch)
		w.b = append(w.b, `,"partitions":`...)
		w.int(int64(r.Partitions))
		w.b = append(w.b, `,"liveBrokers":`...)
		w.ids(r.LiveBrokers)
		w.b = append(w.b, '}')
	}
	if r := m.UpdateMetadataResponse; r != nil {
		w.b = append(w.b, `,"updateMetadataResponse":{`...)
		w.kafkaError(r.Error)
		w.b = append(w.b, '}')
	}
	if m.AlterPartition != nil {
		w.b = append(w.b, `,"alterPartition":`...)
		w.alterPartition(m.AlterPartition)
	}
	if m.AlterPartitionResponse != nil {
		w.b = append(w.b, `,"alterPartitionResponse":`...)
		w.alterPartitionResponse(m.AlterPartitionResponse)
	}
	if r := m.ControlledShutdown; r != nil {
		w.b = append(w.b, `,"controlledShutdown":{"brokerId":`...)
		w.int(int64(r.BrokerID))
		w.b = append(w.b, `,"brokerEpoch":`...)
		w.int(r.BrokerEpoch)
		w.b = append(w.b, '}')
	}
	if r := m.ControlledShutdownResp; r != nil {
		w.b = append(w.b, `,"controlledShutdownResponse":{`...)
		w.kafkaError(r.Error)
		w.key(`"remaining":`)
		arrayOf(w, r.Remaining, (*jsonOut).tp)
		w.b = append(w.b, '}')
	}
	if m.Produce != nil {
		w.b = append(w.b, `,"produce":`...)
		w.produce(m.Produce)
	}
	if r := m.ProduceResponse; r != nil {
		w.b = append(w.b, `,"produceResponse":{"op":`...)
		w.int(r.Op)
		w.b = append(w.b, `,"tp":`...)
		w.tp(&r.TP)
		w.kafkaError(r.Error)
		w.b = append(w.b, `,"baseOffset":`...)
		w.int(r.BaseOffset)
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, '}')
}

// arrayOf writes a slice of structs with elem, nil as null (no omit option).
func arrayOf[E any](w *jsonOut, s []E, elem func(*jsonOut, *E)) {
	if s == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i := range s {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		elem(w, &s[i])
	}
	w.b = append(w.b, ']')
}

// tp writes a TP as an object of its own.
func (w *jsonOut) tp(tp *TP) {
	w.b = append(w.b, '{')
	w.tpFields(tp)
	w.b = append(w.b, '}')
}

// tpFields writes an embedded TP's promoted fields, which open their object.
func (w *jsonOut) tpFields(tp *TP) {
	w.b = append(w.b, `"topic":`...)
	w.str(tp.Topic)
	w.b = append(w.b, `,"partition":`...)
	w.int(int64(tp.Partition))
}

func (w *jsonOut) fetch(r *FetchRequest) {
	w.b = append(w.b, `{"replicaId":`...)
	w.int(int64(r.ReplicaID))
	w.b = append(w.b, `,"brokerEpoch":`...)
	w.int(r.BrokerEpoch)
	w.b = append(w.b, `,"maxWaitMs":`...)
	w.int(r.MaxWaitMs)
	w.b = append(w.b, `,"minBytes":`...)
	w.int(r.MinBytes)
	w.b = append(w.b, `,"fetcherId":`...)
	w.int(int64(r.FetcherID))
	w.b = append(w.b, `,"sessionId":`...)
	w.int(int64(r.SessionID))
	w.b = append(w.b, `,"sessionEpoch":`...)
	w.int(int64(r.SessionEpoch))
	w.b = append(w.b, `,"partitions":`...)
	arrayOf(w, r.Partitions, (*jsonOut).fetchPartition)
	if len(r.ForgottenTopicsData) > 0 {
		w.b = append(w.b, `,"forgottenTopicsData":`...)
		arrayOf(w, r.ForgottenTopicsData, (*jsonOut).tp)
	}
	w.b = append(w.b, '}')
}

func (w *jsonOut) fetchPartition(p *FetchPartition) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.b = append(w.b, `,"fetchOffset":`...)
	w.int(p.FetchOffset)
	w.b = append(w.b, `,"logStartOffset":`...)
	w.int(p.LogStartOffset)
	w.b = append(w.b, `,"currentLeaderEpoch":`...)
	w.int(int64(p.CurrentLeaderEpoch))
	w.b = append(w.b, `,"lastFetchedEpoch":`...)
	w.int(int64(p.LastFetchedEpoch))
	if p.MaxRecords != 0 {
		w.b = append(w.b, `,"maxRecords":`...)
		w.int(p.MaxRecords)
	}
	w.b = append(w.b, '}')
}

func (w *jsonOut) fetchResponse(r *FetchResponse) {
	w.b = append(w.b, '{')
	w.kafkaError(r.Error)
	w.key(`"sessionId":`)
	w.int(int64(r.SessionID))
	w.b = append(w.b, `,"partitions":`...)
	arrayOf(w, r.Partitions, (*jsonOut).fetchPartitionData)
	w.b = append(w.b, '}')
}

func (w *jsonOut) fetchPartitionData(p *FetchPartitionData) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.kafkaError(p.Error)
	w.b = append(w.b, `,"highWatermark":`...)
	w.int(p.HighWatermark)
	w.b = append(w.b, `,"logStartOffset":`...)
	w.int(p.LogStartOffset)
	w.b = append(w.b, `,"logEndOffset":`...)
	w.int(p.LogEndOffset)
	if d := p.DivergingEpoch; d != nil {
		w.b = append(w.b, `,"divergingEpoch":{"epoch":`...)
		w.int(int64(d.Epoch))
		w.b = append(w.b, `,"endOffset":`...)
		w.int(d.EndOffset)
		w.b = append(w.b, '}')
	}
	if p.RecordsBefore != 0 {
		w.b = append(w.b, `,"recordsBefore":`...)
		w.int(p.RecordsBefore)
	}
	if len(p.Records) > 0 {
		w.b = append(w.b, `,"records":`...)
		w.records(p.Records)
	}
	w.b = append(w.b, '}')
}

func (w *jsonOut) offsetsForEpochPartition(p *OffsetsForEpochPartition) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.b = append(w.b, `,"currentLeaderEpoch":`...)
	w.int(int64(p.CurrentLeaderEpoch))
	w.b = append(w.b, `,"leaderEpoch":`...)
	w.int(int64(p.LeaderEpoch))
	w.b = append(w.b, '}')
}

func (w *jsonOut) offsetsForEpochResult(p *OffsetsForEpochResult) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.kafkaError(p.Error)
	w.b = append(w.b, `,"leaderEpoch":`...)
	w.int(int64(p.LeaderEpoch))
	w.b = append(w.b, `,"endOffset":`...)
	w.int(p.EndOffset)
	w.b = append(w.b, '}')
}

func (w *jsonOut) listOffsets(r *ListOffsetsRequest) {
	w.b = append(w.b, `{"replicaId":`...)
	w.int(int64(r.ReplicaID))
	w.b = append(w.b, `,"tp":`...)
	w.tp(&r.TP)
	w.b = append(w.b, `,"currentLeaderEpoch":`...)
	w.int(int64(r.CurrentLeaderEpoch))
	w.b = append(w.b, '}')
}

func (w *jsonOut) listOffsetsResponse(r *ListOffsetsResponse) {
	w.b = append(w.b, `{"tp":`...)
	w.tp(&r.TP)
	w.kafkaError(r.Error)
	w.b = append(w.b, `,"logEndOffset":`...)
	w.int(r.LogEndOffset)
	w.b = append(w.b, `,"logStartOffset":`...)
	w.int(r.LogStartOffset)
	w.b = append(w.b, '}')
}

func (w *jsonOut) leaderAndIsr(r *LeaderAndIsrRequest) {
	w.b = append(w.b, `{"controllerId":`...)
	w.int(int64(r.ControllerID))
	w.b = append(w.b, `,"controllerEpoch":`...)
	w.int(int64(r.ControllerEpoch))
	w.b = append(w.b, `,"brokerEpoch":`...)
	w.int(r.BrokerEpoch)
	w.b = append(w.b, `,"partitions":`...)
	arrayOf(w, r.Partitions, (*jsonOut).leaderAndIsrState)
	w.b = append(w.b, `,"liveLeaders":`...)
	w.ids(r.LiveLeaders)
	w.b = append(w.b, '}')
}

func (w *jsonOut) leaderAndIsrState(p *LeaderAndIsrState) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.b = append(w.b, `,"leader":`...)
	w.int(int64(p.Leader))
	w.b = append(w.b, `,"leaderEpoch":`...)
	w.int(int64(p.LeaderEpoch))
	w.b = append(w.b, `,"isr":`...)
	w.ids(p.ISR)
	w.b = append(w.b, `,"partitionEpoch":`...)
	w.int(int64(p.PartitionEpoch))
	w.b = append(w.b, `,"replicas":`...)
	w.ids(p.Replicas)
	w.b = append(w.b, '}')
}

func (w *jsonOut) partitionError(p *PartitionError) {
	w.b = append(w.b, '{')
	w.tpFields(&p.TP)
	w.kafkaError(p.Error)
	w.b = append(w.b, '}')
}

func (w *jsonOut) alterPartition(r *AlterPartitionRequest) {
	w.b = append(w.b, `{"brokerId":`...)
	w.int(int64(r.BrokerID))
	w.b = append(w.b, `,"brokerEpoch":`...)
	w.int(r.BrokerEpoch)
	w.b = append(w.b, `,"tp":`...)
	w.tp(&r.TP)
	w.b = append(w.b, `,"leaderEpoch":`...)
	w.int(int64(r.LeaderEpoch))
	w.b = append(w.b, `,"partitionEpoch":`...)
	w.int(int64(r.PartitionEpoch))
	w.b = append(w.b, `,"newIsr":`...)
	w.ids(r.NewISR)
	w.b = append(w.b, '}')
}

func (w *jsonOut) alterPartitionResponse(r *AlterPartitionResponse) {
	w.b = append(w.b, `{"tp":`...)
	w.tp(&r.TP)
	w.kafkaError(r.Error)
	w.b = append(w.b, `,"leader":`...)
	w.int(int64(r.Leader))
	w.b = append(w.b, `,"leaderEpoch":`...)
	w.int(int64(r.LeaderEpoch))
	w.b = append(w.b, `,"isr":`...)
	w.ids(r.ISR)
	w.b = append(w.b, `,"partitionEpoch":`...)
	w.int(int64(r.PartitionEpoch))
	w.b = append(w.b, '}')
}

func (w *jsonOut) produce(r *ProduceRequest) {
	w.b = append(w.b, `{"op":`...)
	w.int(r.Op)
	w.b = append(w.b, `,"tp":`...)
	w.tp(&r.TP)
	w.b = append(w.b, `,"acks":`...)
	// Acks.MarshalJSON: -1 is "all", the others their number.
	if r.Acks == protocol.Acks(-1) {
		w.b = append(w.b, `"all"`...)
	} else {
		w.int(int64(r.Acks))
	}
	w.b = append(w.b, `,"recordIds":`...)
	w.int64s(r.RecordIDs)
	w.b = append(w.b, `,"timeoutMs":`...)
	w.int(r.TimeoutMs)
	if r.Idempotent {
		w.b = append(w.b, `,"idempotent":true`...)
	}
	if r.Retried {
		w.b = append(w.b, `,"retried":true`...)
	}
	w.b = append(w.b, '}')
}
