package protocol

import "strconv"

// Opt is an optional id or number in events and violations: broker 0 and offset 0 are real values, so "absent"
// cannot be the zero of the number itself. With `omitzero` an unset Opt is left out of JSON.
type Opt[T ~int32 | ~int64] struct {
	V   T
	Set bool
}

// Some returns a set Opt.
func Some[T ~int32 | ~int64](v T) Opt[T] { return Opt[T]{V: v, Set: true} }

// IsZero reports whether the value is unset (used by encoding/json's omitzero).
func (o Opt[T]) IsZero() bool { return !o.Set }

// MarshalJSON writes the number, or null when unset.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if !o.Set {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(o.V), 10), nil
}

// UnmarshalJSON reads a number, or null as unset.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Opt[T]{}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return err
	}
	*o = Some(T(v))
	return nil
}
