package protocol

import (
	"fmt"
	"slices"
)

// Sets of broker ids (an ISR, a replica list) kept sorted, as the requests carry them and the
// controller, the leaders and the checks compare them. Shared here because every node package
// imports protocol.

// SortedCopy is a sorted copy of s.
func SortedCopy(s []int32) []int32 {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// SortedUnion is the sorted union of a and b.
func SortedUnion(a, b []int32) []int32 {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// SortedMinus is the sorted set of a's ids not in b.
func SortedMinus(a, b []int32) []int32 {
	out := make([]int32, 0, len(a))
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// LeaderName names a partition's leader in narration: its broker id, or "none".
func LeaderName(b int32) string {
	if b < 0 {
		return "none"
	}
	return fmt.Sprint(b)
}
