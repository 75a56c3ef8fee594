package broker

import "github.com/highwater-sim/highwater/engine/protocol"

// HandleUpdateMetadata is the broker's side of the controller's UpdateMetadata. From 2.2 a request
// for an older registration of the broker is answered STALE_BROKER_EPOCH and not applied
// (KafkaApis.handleUpdateMetadataRequest's isBrokerEpochStale, KIP-380; 3.7.0 l.364); one from an
// older controller STALE_CONTROLLER_EPOCH (ReplicaManager.maybeUpdateMetadataCache throws
// ControllerMovedException, 0.10.2.2 l.629, 2.1.1 l.1001, 3.7.0 l.1980); otherwise the broker
// takes the request's controller epoch, as a LeaderAndIsr's does, so a LeaderAndIsr from the
// controller it replaced is refused from then on, fills its metadata cache's live brokers
// (metadata_cache.go; the leaders and ISRs it also carries are not modelled) and answers NONE.
func (rm *ReplicaManager) HandleUpdateMetadata(h Host, req *protocol.UpdateMetadataRequest) *protocol.UpdateMetadataResponse {
	resp := &protocol.UpdateMetadataResponse{}
	if resp.Error = rm.checkControllerRequest(h, req.BrokerEpoch, req.ControllerEpoch); resp.Error == protocol.ErrNone {
		rm.metadata.SetAliveBrokers(req.LiveBrokers)
	}
	return resp
}

// checkControllerRequest is the epoch check of a StopReplica or an UpdateMetadata: from 2.2 one
// for an older registration of the broker is STALE_BROKER_EPOCH (KafkaApis' isBrokerEpochStale,
// KIP-380), one from an older controller STALE_CONTROLLER_EPOCH (ReplicaManager's
// ControllerMovedException); otherwise the broker takes the request's controller epoch and it
// is NONE.
func (rm *ReplicaManager) checkControllerRequest(h Host, brokerEpoch int64, controllerEpoch int32) protocol.KafkaError {
	if h.ReplicaRules().BrokerEpochs && brokerEpoch < h.BrokerEpoch() {
		return protocol.ErrStaleBrokerEpoch
	}
	if controllerEpoch < rm.controllerEpoch {
		return protocol.ErrStaleControllerEpoch
	}
	rm.controllerEpoch = controllerEpoch
	return protocol.ErrNone
}
