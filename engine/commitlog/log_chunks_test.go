package commitlog

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refLog is the log as one slice, as it was before its records were chunked: the simple
// version the chunked Log is held to.
type refLog struct {
	records []Record
	start   int64
}

func (r *refLog) leo() int64 { return r.start + int64(len(r.records)) }

func (r *refLog) truncateTo(t int64) {
	switch {
	case t >= r.leo():
	case t < r.start:
		r.records, r.start = nil, t
	default:
		r.records = r.records[: t-r.start : t-r.start]
	}
}

func (r *refLog) setStart(o int64) {
	if o <= r.start {
		return
	}
	o = min(o, r.leo())
	r.records = r.records[o-r.start:]
	r.start = o
}

// TestChunkedLogMatchesSlice drives a chunked Log and the one-slice version with random appends,
// truncations and log start moves: every offset, read and record list agrees (Records' nil too,
// which a trace tells apart), and a read's result never changes afterwards.
func TestChunkedLogMatchesSlice(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var l Log
		var ref refLog
		type kept struct {
			got  []Record
			want []Record
		}
		var reads []kept
		next := int64(1)
		epoch := int32(0)
		for step := range 400 {
			switch op := rng.IntN(20); {
			case op < 8:
				n := rng.IntN(3 * chunkLen / 2)
				if rng.IntN(4) > 0 {
					n = rng.IntN(12)
				}
				ids := make([]int64, n)
				for i := range ids {
					ids[i] = next
					next++
				}
				if rng.IntN(8) == 0 {
					epoch++
				}
				if base := l.AppendAsLeader(epoch, ids); base != ref.leo() {
					t.Fatalf("seed %d step %d: base %d, want %d", seed, step, base, ref.leo())
				}
				for _, id := range ids {
					ref.records = append(ref.records, Record{ID: id, Epoch: epoch})
				}
			case op < 12:
				recs := make([]Record, rng.IntN(2*chunkLen))
				for i := range recs {
					recs[i] = Record{ID: next, Epoch: epoch}
					next++
				}
				l.AppendAsFollower(recs)
				ref.records = append(ref.records, recs...)
			case op < 14:
				to := ref.start + rng.Int64N(int64(len(ref.records))+2) - 1
				want := []Record(nil)
				if to >= ref.start && to < ref.leo() {
					want = append([]Record(nil), ref.records[to-ref.start:]...)
				} else if to < ref.start {
					want = append([]Record(nil), ref.records...)
				}
				if got := l.TruncateTo(to); !slices.Equal(got, want) || (got == nil) != (want == nil) {
					t.Fatalf("seed %d step %d: TruncateTo(%d) cut %v, want %v", seed, step, to, got, want)
				}
				ref.truncateTo(to)
			case op < 15:
				o := rng.Int64N(ref.leo() + 3)
				l.TruncateFullyAndStartAt(o)
				ref.records, ref.start = nil, o
			case op < 17:
				o := ref.start + rng.Int64N(int64(len(ref.records))+2)
				l.SetLogStartOffset(o)
				ref.setStart(o)
			default:
				from := ref.start + rng.Int64N(int64(len(ref.records))+2) - 1
				to := from + rng.Int64N(3*chunkLen)
				got := l.Read(from, to)
				f, e := max(from, ref.start), min(to, ref.leo())
				var want []Record
				if f < e {
					want = ref.records[f-ref.start : e-ref.start]
				}
				if !slices.Equal(got, want) || (got == nil) != (want == nil) {
					t.Fatalf("seed %d step %d: Read(%d, %d) = %v, want %v", seed, step, from, to, got, want)
				}
				reads = append(reads, kept{got, slices.Clone(want)})
			}
			if l.LogStartOffset() != ref.start || l.LogEndOffset() != ref.leo() || l.chunksEnd() != ref.leo() {
				t.Fatalf("seed %d step %d: [%d, %d) (chunks end at %d), want [%d, %d)", seed, step, l.LogStartOffset(), l.LogEndOffset(),
					l.chunksEnd(), ref.start, ref.leo())
			}
			got, want := l.Records(), ref.records[:len(ref.records):len(ref.records)]
			if !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Fatalf("seed %d step %d: Records() = %v, want %v", seed, step, got, want)
			}
			for o := ref.start - 1; o <= ref.leo(); o++ {
				r, ok := l.At(o)
				inside := o >= ref.start && o < ref.leo()
				if ok != inside || (inside && r != ref.records[o-ref.start]) {
					t.Fatalf("seed %d step %d: At(%d) = %v %v", seed, step, o, r, ok)
				}
			}
			for _, k := range reads {
				if !slices.Equal(k.got, k.want) {
					t.Fatalf("seed %d step %d: an earlier read changed: %v, was %v", seed, step, k.got, k.want)
				}
			}
		}
	}
}
