// Package plural writes counts in narration: "1 record", "2 records". A newcomer reads the
// narration as sentences, and "1 records" is the kind of slip that makes a teaching tool look
// careless. Every noun the engine counts (record, partition, replica, broker, message) takes "s".
package plural

import "strconv"

// Of is n and noun, with "s" unless n is 1.
func Of[T ~int | ~int32 | ~int64](n T, noun string) string {
	return string(Append(make([]byte, 0, len(noun)+8), n, noun))
}

// Append is Of appended to b, for texts built byte by byte.
func Append[T ~int | ~int32 | ~int64](b []byte, n T, noun string) []byte {
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ' ')
	b = append(b, noun...)
	if n != 1 {
		b = append(b, 's')
	}
	return b
}

// Pick is one when n is 1 and many otherwise: "is"/"are", "its"/"their", a noun without its
// count.
func Pick[T ~int | ~int32 | ~int64](n T, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AppendOffsets appends the n offsets from base, as the narration names a batch's place in a
// log: "offset 4", or "offsets 4..6".
func AppendOffsets(b []byte, base, n int64) []byte {
	if n == 1 {
		b = append(b, "offset "...)
		return strconv.AppendInt(b, base, 10)
	}
	b = append(b, "offsets "...)
	b = strconv.AppendInt(b, base, 10)
	b = append(b, ".."...)
	return strconv.AppendInt(b, base+n-1, 10)
}
