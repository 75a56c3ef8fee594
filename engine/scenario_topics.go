package engine

import "fmt"

// validateTopic checks topic i of the scenario and returns its partition count. Errors name the
// topic by its index in the file (topics[2].name: ...).
func (sc *Scenario) validateTopic(i int) (int, error) {
	t := &sc.Topics[i]
	at := fmt.Sprintf("topics[%d]", i)
	if t.Name == "" {
		return 0, fmt.Errorf("%s.name: required", at)
	}
	for j := range i {
		if sc.Topics[j].Name == t.Name {
			return 0, fmt.Errorf("%s.name: topic %q is defined twice", at, t.Name)
		}
	}
	if t.Assignment != nil {
		if len(t.Assignment) == 0 {
			return 0, fmt.Errorf("%s.assignment: must list at least one partition", at)
		}
		if err := t.assignmentMatches(at); err != nil {
			return 0, err
		}
		for p, reps := range t.Assignment {
			if len(reps) == 0 {
				return 0, fmt.Errorf("%s.assignment[%d]: no replicas", at, p)
			}
			for k, b := range reps {
				if b < 0 || int(b) >= sc.Brokers {
					return 0, fmt.Errorf("%s.assignment[%d][%d]: broker %d is out of range 0..%d", at, p, k, b, sc.Brokers-1)
				}
				if contains(reps[:k], b) {
					return 0, fmt.Errorf("%s.assignment[%d]: broker %d is listed twice", at, p, b)
				}
			}
		}
		return len(t.Assignment), nil
	}
	if t.Partitions < 1 {
		return 0, fmt.Errorf("%s.partitions: want ≥ 1, got %d", at, t.Partitions)
	}
	if t.ReplicationFactor < 1 || t.ReplicationFactor > sc.Brokers {
		return 0, fmt.Errorf("%s.replicationFactor: want 1..%d (the broker count), got %d", at, sc.Brokers, t.ReplicationFactor)
	}
	return t.Partitions, nil
}

// count returns the topic's number of partitions.
func (t Topic) count() int {
	if t.Assignment != nil {
		return len(t.Assignment)
	}
	return t.Partitions
}

// assignmentMatches checks the partitions and replicationFactor given next to an assignment:
// the contract offers either form, and a file that gives both is read as one topic when they
// agree (partitions the assignment's length, replicationFactor every list's length); when they
// do not, the error says which. Kafka's CreateTopics refuses both together
// (AdminManager.createTopics, "Both cannot be used at the same time"); the scenario file is more
// lenient where the two say the same.
func (t *Topic) assignmentMatches(at string) error {
	if t.Partitions != 0 && t.Partitions != len(t.Assignment) {
		return fmt.Errorf("%s.partitions: %d, but the assignment lists %d partitions", at, t.Partitions, len(t.Assignment))
	}
	if t.ReplicationFactor != 0 {
		for p, reps := range t.Assignment {
			if len(reps) != t.ReplicationFactor {
				return fmt.Errorf("%s.replicationFactor: %d, but assignment[%d] lists %d replicas", at, t.ReplicationFactor, p, len(reps))
			}
		}
	}
	return nil
}
