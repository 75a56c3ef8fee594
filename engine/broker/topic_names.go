package broker

import (
	"fmt"

	"github.com/highwater-sim/highwater/engine/protocol"
)

// TopicNames translates between the wire's partition names and pids: each topic's partitions
// are the pids first..first+count-1, in topic order. It is the static table every broker knows
// (no topic is created or deleted mid-run), handed to a Broker once (Cluster.Names) so that
// PidOf and TP, asked millions of times a run, are plain calls rather than ones through the
// embedded Cluster and the engine's adapter (issue 12).
type TopicNames struct {
	topics []topicName
}

type topicName struct {
	name         string
	first, count int32
}

// Add appends a topic of count partitions, numbered after the topics added before it.
func (n *TopicNames) Add(name string, count int32) {
	first := int32(0)
	if k := len(n.topics); k > 0 {
		first = n.topics[k-1].first + n.topics[k-1].count
	}
	n.topics = append(n.topics, topicName{name: name, first: first, count: count})
}

// PidOf is the pid of the partition tp names, or -1 if there is none. A cluster of one topic is
// answered without the loop, whose state the compiler saves around each string comparison's call.
func (n *TopicNames) PidOf(tp protocol.TP) int32 {
	if len(n.topics) == 1 {
		return n.topics[0].pidOf(tp)
	}
	for i := range n.topics {
		if t := &n.topics[i]; t.name == tp.Topic {
			return t.pidOf(tp)
		}
	}
	return -1
}

// pidOf is the pid of tp if it names one of t's partitions, else -1.
func (t *topicName) pidOf(tp protocol.TP) int32 {
	if t.name != tp.Topic || tp.Partition < 0 || tp.Partition >= t.count {
		return -1
	}
	return t.first + tp.Partition
}

// Partitions is the partition count of the topic called name, or -1 if there is none.
func (n *TopicNames) Partitions(name string) int {
	for _, t := range n.topics {
		if t.name == name {
			return int(t.count)
		}
	}
	return -1
}

// TP is partition pid's names (pid must be a partition's).
func (n *TopicNames) TP(pid int32) protocol.TP {
	t := &n.topics[0]
	if len(n.topics) > 1 {
		t = n.topicOf(pid)
	}
	return protocol.TP{Topic: t.name, Partition: pid - t.first}
}

func (n *TopicNames) topicOf(pid int32) *topicName {
	for i := range n.topics {
		if t := &n.topics[i]; pid < t.first+t.count {
			return t
		}
	}
	panic(fmt.Sprintf("no partition %d", pid))
}
