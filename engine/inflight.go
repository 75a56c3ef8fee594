package engine

import "slices"

// inFlight is the requests awaiting an answer, by message id: Kafka's InFlightRequests, for the
// whole cluster. It is a table indexed by the id's low bits with linear probing. Ids are handed
// out in order, so the requests in flight at once mostly sit in distinct slots, the newest side
// by side, and a lookup is an index and a compare; a Go map hashed, probed and touched a
// scattered group on every request sent, answered and forgotten (issue 12: some 100M
// instructions and a million cache misses over the user path). Nothing reads it in table
// order: ids lists the requests by id.
//
// An id is put once (each send numbers its message anew), so a put takes the first slot free
// or forgotten without looking for the id further on; a forgotten request leaves its id as a
// tombstone (req nil) that lookups probe past, and the table is rebuilt once live requests and
// tombstones fill three quarters of it.
type inFlight struct {
	slots []inFlightSlot
	n     int // requests in flight
	used  int // slots holding an id: the requests in flight and the tombstones
}

// inFlightSlot is one request in flight; id 0 (no message has it: ids start at 1) marks a free
// slot, req nil a forgotten request's.
type inFlightSlot struct {
	id  uint64
	req *Message
}

// get is the request in flight with this id, or nil.
func (f *inFlight) get(id uint64) *Message {
	if f.used == 0 {
		return nil
	}
	mask := uint64(len(f.slots) - 1)
	for i := id & mask; ; i = (i + 1) & mask {
		switch s := &f.slots[i]; s.id {
		case id:
			return s.req
		case 0:
			return nil
		}
	}
}

// put records req, in flight, under its id, which must not have been put before.
func (f *inFlight) put(req *Message) {
	if 4*(f.used+1) > 3*len(f.slots) {
		f.rebuild()
	}
	mask := uint64(len(f.slots) - 1)
	i := req.ID & mask
	for f.slots[i].req != nil {
		i = (i + 1) & mask
	}
	if f.slots[i].id == 0 {
		f.used++
	}
	f.slots[i] = inFlightSlot{req.ID, req}
	f.n++
}

// rebuild drops the tombstones into a table at most a quarter full.
func (f *inFlight) rebuild() {
	old := f.slots
	size := max(1024, len(old))
	for 4*(f.n+1) > size {
		size *= 2
	}
	f.slots, f.n, f.used = make([]inFlightSlot, size), 0, 0
	for i := range old {
		if old[i].req != nil {
			f.put(old[i].req)
		}
	}
}

// remove forgets the request with this id, if it is in flight.
func (f *inFlight) remove(id uint64) {
	if f.used == 0 {
		return
	}
	mask := uint64(len(f.slots) - 1)
	for i := id & mask; ; i = (i + 1) & mask {
		switch s := &f.slots[i]; s.id {
		case id:
			if s.req != nil {
				s.req = nil
				f.n--
			}
			return
		case 0:
			return
		}
	}
}

// ids lists the ids of the requests in flight, ascending.
func (f *inFlight) ids() []uint64 {
	out := make([]uint64, 0, f.n)
	for i := range f.slots {
		if f.slots[i].req != nil {
			out = append(out, f.slots[i].id)
		}
	}
	slices.Sort(out)
	return out
}
