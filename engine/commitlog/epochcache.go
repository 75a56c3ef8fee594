package commitlog

// EpochEntry says that leader epoch Epoch started at offset StartOffset.
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
}

// Undefined is Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.
const Undefined = -1

// EpochCache is Kafka's LeaderEpochFileCache: an ordered list of (epoch, start offset) in which
// both epochs and start offsets rise strictly. It is the leader-epoch-checkpoint file's content.
//
// Its latest entry is kept in the cache itself, and a cache of one entry (a partition that has
// had one leader, nearly all of them) keeps no list at all: every append asks whether its epoch
// is the latest one (Assign), and a follower's fetch, its fetcher and a leader's
// OffsetsForLeaderEpoch check ask for the latest epoch. In a Partition the cache is in the line
// the log's chunks are in; a list would be one more allocation, and one more cache miss per cold
// partition. The struct stays 24 bytes, a slice header's size.
type EpochCache struct {
	// latest and latestStart are the last entry's epoch and start offset, when n > 0.
	latest int32
	// n is the number of entries.
	n           int32
	latestStart int64
	// list holds the entries, oldest first, when there are two or more. With none, it tells a
	// cache never assigned or cleared (nil: its Entries are nil) from one emptied (an empty list).
	// A list is never changed once made: copies of a cache may share it.
	list *epochList
}

// epochList is the entries of a cache of more than one, or none.
type epochList struct{ entries []EpochEntry }

// set makes entries (nil: none) the cache's; it keeps the slice only if it holds two or more.
func (c *EpochCache) set(entries []EpochEntry) {
	n := len(entries)
	switch {
	case entries == nil:
		*c = EpochCache{}
	case n == 0:
		*c = EpochCache{list: &epochList{entries: entries}}
	case n == 1:
		*c = EpochCache{latest: entries[0].Epoch, n: 1, latestStart: entries[0].StartOffset}
	default:
		*c = EpochCache{latest: entries[n-1].Epoch, n: int32(n), latestStart: entries[n-1].StartOffset,
			list: &epochList{entries: entries}}
	}
}

// Entries returns the cache's entries, oldest first (made for a cache of one). The slice must
// not be modified.
func (c *EpochCache) Entries() []EpochEntry {
	switch {
	case c.n == 1:
		return []EpochEntry{{Epoch: c.latest, StartOffset: c.latestStart}}
	case c.list == nil:
		return nil
	}
	return c.list.entries
}

// Len returns the number of entries.
func (c *EpochCache) Len() int { return int(c.n) }

// Clone returns an independent copy (the checkpoint on disk is one).
func (c *EpochCache) Clone() EpochCache {
	var d EpochCache
	d.set(append([]EpochEntry(nil), c.Entries()...))
	return d
}

// Latest returns the latest epoch, or Undefined when the cache is empty.
func (c *EpochCache) Latest() int32 {
	if c.n == 0 {
		return Undefined
	}
	return c.latest
}

// Assign records that epoch e starts at offset o. As in Kafka, nothing happens when the latest
// entry already has epoch e with a start ≤ o; otherwise every entry with an epoch ≥ e or a start
// ≥ o is removed from the end first, so epochs and offsets keep rising strictly.
func (c *EpochCache) Assign(e int32, o int64) { c.AssignIn(nil, e, o) }

// AssignIfNewer is 0.11.0.2's LeaderEpochFileCache.assign: epoch e starting at o is appended
// only if e is above the latest epoch and o at or after the latest entry's start; otherwise
// nothing changes (validateAndMaybeWarn only warns). KAFKA-7415 (2.1) made it Assign.
func (c *EpochCache) AssignIfNewer(e int32, o int64) {
	if e < 0 || (c.n > 0 && (e <= c.latest || o < c.latestStart)) {
		return
	}
	c.Assign(e, o)
}

// AssignIn is Assign building the new entries in buf when they are more than one and it has
// room for them: an empty array that nothing else uses. The entries are never changed in place,
// so they may share buf's array with other windows. A cache of one entry needs no array.
func (c *EpochCache) AssignIn(buf []EpochEntry, e int32, o int64) {
	if c.n > 0 && c.latest == e && c.latestStart <= o {
		return
	}
	if c.n == 0 || (c.n == 1 && (c.latest >= e || c.latestStart >= o)) {
		*c = EpochCache{latest: e, n: 1, latestStart: o} // every entry removed: the new one alone
		return
	}
	entries := c.Entries()
	n := len(entries)
	for n > 0 && (entries[n-1].Epoch >= e || entries[n-1].StartOffset >= o) {
		n--
	}
	if n == 0 {
		*c = EpochCache{latest: e, n: 1, latestStart: o}
		return
	}
	if cap(buf) > n {
		buf = append(buf[:0:n+1], entries[:n]...)
		c.set(append(buf, EpochEntry{Epoch: e, StartOffset: o}))
		return
	}
	c.set(append(entries[:n:n], EpochEntry{Epoch: e, StartOffset: o}))
}

// EndOffsetFor answers OffsetsForLeaderEpoch for epoch req given the log end offset leo, with
// Kafka's five rules (LeaderEpochFileCache.endOffsetFor):
//  1. req undefined → (-1, -1);
//  2. req is the latest epoch → (req, leo);
//  3. no entry above req → (-1, -1);
//  4. no entry at or below req → (req, start of the first entry);
//  5. otherwise (the floor epoch, the start of the next higher entry).
func (c *EpochCache) EndOffsetFor(req int32, leo int64) (int32, int64) {
	if req == Undefined || c.n == 0 {
		return Undefined, Undefined
	}
	if req == c.Latest() {
		return req, leo
	}
	entries := c.Entries()
	// higher is the index of the first entry with an epoch above req.
	higher := -1
	for i, en := range entries {
		if en.Epoch > req {
			higher = i
			break
		}
	}
	switch {
	case higher < 0:
		return Undefined, Undefined
	case higher == 0:
		return req, entries[0].StartOffset
	default:
		return entries[higher-1].Epoch, entries[higher].StartOffset
	}
}

// TruncateFromEnd drops every entry that starts at or after offset o (none when the latest
// starts before o: the list is not read).
func (c *EpochCache) TruncateFromEnd(o int64) {
	if c.n == 0 || c.latestStart < o {
		return
	}
	entries := c.Entries()
	n := len(entries)
	for n > 0 && entries[n-1].StartOffset >= o {
		n--
	}
	c.set(entries[:n:n])
}

// TruncateFromStart drops every entry that starts at or before offset o and re-adds the last one
// dropped as starting at o (the log start moved to o inside that epoch).
func (c *EpochCache) TruncateFromStart(o int64) {
	entries := c.Entries()
	last := -1
	for i, en := range entries {
		if en.StartOffset <= o {
			last = i
		}
	}
	if last < 0 {
		return
	}
	c.set(append([]EpochEntry{{Epoch: entries[last].Epoch, StartOffset: o}}, entries[last+1:]...))
}

// Clear empties the cache (a full truncation).
func (c *EpochCache) Clear() { *c = EpochCache{} }
