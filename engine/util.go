package engine

import (
	"cmp"
	"github.com/highwater-sim/highwater/engine/commitlog"
	"maps"
	"slices"
)

// Limits on what one engine holds. The server may set lower ones per session.
const (
	MaxBrokers      = 1000
	MaxPartitions   = 1_000_000
	MaxProduceCount = 100_000
)

func contains[T comparable](s []T, v T) bool { return slices.Contains(s, v) }

// sortedKeys returns a map's keys in order: no map order may reach state or output.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

type commitlogRecord = commitlog.Record
