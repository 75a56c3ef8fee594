package engine

import "testing"

// TestHWCheckpointList: a HW checkpoint visits only the replicas whose HW moved since the last
// one (package broker's ReplicaManager.hwMoved); with the check on (e.rules.Replica.CheckpointCheck), after
// every checkpoint each known, online replica's checkpoint holds its HW, as Kafka's walk over
// every replica would leave it. On the presets and seeds of every sweep mode: kills, bounces,
// power losses, controlled shutdowns, isolation, disk failures, each era's truncation rules.
func TestHWCheckpointList(t *testing.T) {
	cases := presetCases(t, "")
	cases = append(cases, sweepCases(t, append([]*sweepMode{&sweepDefault}, sweepModes...), 6)...)
	checked := 0
	for _, c := range cases {
		problems := 0
		runWith(t, c.sc, func(e *Engine) {
			e.rules.Replica.CheckpointCheck = func(p string) {
				if problems++; problems <= 3 {
					t.Errorf("%s: %s", c.name, p)
				}
			}
		})
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d runs checked", checked)
	}
}
