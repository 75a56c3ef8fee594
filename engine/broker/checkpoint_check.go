package broker

import "fmt"

// The tests' check of the HW checkpoint's list (ReplicaRules.CheckpointCheck set; never in a run).
// A checkpoint writes only the replicas on hwMoved; Kafka's checkpointHighWatermarks writes every
// known, online replica's HW. After one, every such replica's checkpoint must hold its HW, or a
// change of HW, log or replica missed its noteHW and a restart would recover from a stale
// checkpoint.
func checkCheckpoints(h Host, report func(problem string)) {
	for _, pid := range h.Hosted() {
		r := h.Replica(pid)
		if hw := r.Log().HighWatermark(); r.Known() && !r.Offline() && r.HWCheckpoint() != hw {
			report(fmt.Sprintf("broker %d at %d ms: partition %d's checkpoint holds %d, its HW is %d: it was not on the checkpoint's list",
				h.BrokerID(), h.Now(), pid, r.HWCheckpoint(), hw))
		}
	}
}
