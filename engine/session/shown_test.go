package session

import (
	"fmt"
	"testing"
)

// TestRecordingShownEventsKeepsReplies: a session that records only the events its page is shown
// answers byte for byte as one that records every event and chooses when it replies, through
// advances, actions, focus changes (partitions and brokers), a view without focus and a cluster
// small enough to need no overview. (A seek differs on purpose: its reply carries the last events
// shown before the seek point, not the last 200 of the replay.)
func TestRecordingShownEventsKeepsReplies(t *testing.T) {
	const big = `{"name":"b","seed":3,"brokers":6,"topics":[{"name":"t","partitions":90,"replicationFactor":3}],
	"config":{"sim.network.jitter.ms":2},
	"steps":[{"at":100,"do":"produce","topic":"t","partition":4,"count":5},
	         {"at":700,"do":"kill","broker":1},
	         {"at":1500,"do":"produce","topic":"t","partition":7,"count":2,"acks":1},
	         {"at":2500,"do":"restart","broker":1}]}`
	const small = `{"name":"s","brokers":3,"topics":[{"name":"t","partitions":2,"replicationFactor":3}]}`
	views := []string{
		`"view":{"focus":[{"topic":"t","partition":4}],"delta":true}`,
		`"view":{"focusBrokers":[2],"leaders":true}`,
		``,
		`"view":{"focus":[{"topic":"t","partition":7},{"topic":"t","partition":31}],"focusBrokers":[0]}`,
		`"view":{"detailLimit":100}`,
	}
	for _, sc := range []string{big, small} {
		filtered, all := New(Limits{}), New(Limits{})
		all.shown.all = true
		id := 0
		same := func(req string) {
			t.Helper()
			id++
			full := fmt.Sprintf(`{"id":%d,%s}`, id, req)
			a, b := filtered.HandleJSON([]byte(full)), all.HandleJSON([]byte(full))
			if string(a) != string(b) {
				t.Fatalf("replies to %s differ:\nrecording shown events: %.2000s\nrecording all:          %.2000s", full, a, b)
			}
		}
		same(`"op":"load",` + views[0] + `,"scenario":` + sc)
		for i := range 30 {
			v := views[i%len(views)]
			if v != "" {
				v = "," + v
			}
			switch i % 7 {
			case 3:
				same(`"op":"apply","action":{"do":"produce","topic":"t","partition":1,"count":2}` + v)
			case 5:
				same(`"op":"step"` + v)
			default:
				same(fmt.Sprintf(`"op":"advance","by":%d,"maxEvents":%d%s`, 37+i*53, 20+i*40, v))
			}
		}
	}
}
