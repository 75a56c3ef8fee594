package broker

import (
	"testing"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TestUpdateMetadataEpochs: ReplicaManager.maybeUpdateMetadataCache (0.10.2.2 l.627, 2.1.1 l.999,
// 3.7.0 l.1978) refuses an UpdateMetadata from an older controller (ControllerMovedException:
// STALE_CONTROLLER_EPOCH) and otherwise takes its controller epoch, so a LeaderAndIsr from the
// controller it replaced is refused after it; from 2.2 KafkaApis.handleUpdateMetadataRequest
// answers one for an older registration STALE_BROKER_EPOCH first (isBrokerEpochStale, KIP-380).
func TestUpdateMetadataEpochs(t *testing.T) {
	for _, epochs := range []bool{false, true} {
		h := &fakeHost{fakeFollower: newFakeFollower(0, 1), book: Rules{Replica: ReplicaRules{BrokerEpochs: epochs, NumReplicaFetchers: 1}}}
		var fetchers FetcherManager
		rm := NewReplicaManager(1, &fetchers)
		if r := rm.HandleUpdateMetadata(h, &protocol.UpdateMetadataRequest{ControllerEpoch: 2, BrokerEpoch: 42}); r.Error != protocol.ErrNone || rm.ControllerEpoch() != 2 {
			t.Fatalf("broker epochs %v: a new controller's UpdateMetadata: %s, controller epoch %d; want NONE, 2", epochs, r.Error, rm.ControllerEpoch())
		}
		if r := rm.HandleUpdateMetadata(h, &protocol.UpdateMetadataRequest{ControllerEpoch: 1, BrokerEpoch: 42}); r.Error != protocol.ErrStaleControllerEpoch {
			t.Errorf("broker epochs %v: an older controller's UpdateMetadata: %s, want STALE_CONTROLLER_EPOCH", epochs, r.Error)
		}
		want := protocol.ErrNone
		if epochs {
			want = protocol.ErrStaleBrokerEpoch
		}
		if r := rm.HandleUpdateMetadata(h, &protocol.UpdateMetadataRequest{ControllerEpoch: 3, BrokerEpoch: 41}); r.Error != want {
			t.Errorf("broker epochs %v: an older registration's UpdateMetadata: %s, want %s", epochs, r.Error, want)
		}
		if resp := rm.BecomeLeaderOrFollower(h, &protocol.LeaderAndIsrRequest{ControllerEpoch: 1, BrokerEpoch: 42}); resp.Error != protocol.ErrStaleControllerEpoch {
			t.Errorf("broker epochs %v: the replaced controller's LeaderAndIsr after the new one's UpdateMetadata: %s, want STALE_CONTROLLER_EPOCH", epochs, resp.Error)
		}
	}
}
