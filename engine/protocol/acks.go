package protocol

import (
	"fmt"
	"strings"
)

// Acks is a producer's acks setting: -1 (all), 0 or 1.
type Acks int8

// UnmarshalJSON accepts "all", -1, 0 and 1.
func (a *Acks) UnmarshalJSON(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case `"all"`, `-1`, `"-1"`:
		*a = -1
	case `1`, `"1"`:
		*a = 1
	case `0`, `"0"`:
		*a = 0
	default:
		return fmt.Errorf(`acks: want "all", 1 or 0, got %s`, b)
	}
	return nil
}

// MarshalJSON writes "all", 1 or 0.
func (a Acks) MarshalJSON() ([]byte, error) {
	if a == -1 {
		return []byte(`"all"`), nil
	}
	return []byte(fmt.Sprint(int8(a))), nil
}
