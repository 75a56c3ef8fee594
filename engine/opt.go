package engine

import "github.com/highwater-sim/highwater/engine/protocol"

// Opt is an optional id or number in events (protocol.Opt): broker 0 and offset 0 are real
// values, so "absent" cannot be the zero of the number itself.
type Opt[T ~int32 | ~int64] = protocol.Opt[T]

// Some returns a set Opt.
func Some[T ~int32 | ~int64](v T) Opt[T] { return protocol.Some(v) }
