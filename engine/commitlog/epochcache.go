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
type EpochCache struct {
	// entries rise strictly in Epoch and in StartOffset.
	entries []EpochEntry
}

// Entries returns the cache's entries, oldest first. The slice must not be modified.
func (c *EpochCache) Entries() []EpochEntry { return c.entries }

// Len returns the number of entries.
func (c *EpochCache) Len() int { return len(c.entries) }

// Clone returns an independent copy (the checkpoint on disk is one).
func (c *EpochCache) Clone() EpochCache {
	return EpochCache{entries: append([]EpochEntry(nil), c.entries...)}
}

// Latest returns the latest epoch, or Undefined when the cache is empty.
func (c *EpochCache) Latest() int32 {
	if len(c.entries) == 0 {
		return Undefined
	}
	return c.entries[len(c.entries)-1].Epoch
}

// Assign records that epoch e starts at offset o. As in Kafka, nothing happens when the latest
// entry already has epoch e with a start ≤ o; otherwise every entry with an epoch ≥ e or a start
// ≥ o is removed from the end first, so epochs and offsets keep rising strictly.
func (c *EpochCache) Assign(e int32, o int64) { c.AssignIn(nil, e, o) }

// AssignIn is Assign building the new entries in buf when it has room for them: an empty array
// that nothing else uses (a cluster's start cuts every new leader's first entry from one array).
// The entries are never changed in place, so they may share buf's array with other windows.
func (c *EpochCache) AssignIn(buf []EpochEntry, e int32, o int64) {
	if n := len(c.entries); n > 0 && c.entries[n-1].Epoch == e && c.entries[n-1].StartOffset <= o {
		return
	}
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].Epoch >= e || c.entries[n-1].StartOffset >= o) {
		n--
	}
	if cap(buf) > n {
		buf = append(buf[:0:n+1], c.entries[:n]...)
		c.entries = append(buf, EpochEntry{Epoch: e, StartOffset: o})
		return
	}
	c.entries = append(c.entries[:n:n], EpochEntry{Epoch: e, StartOffset: o})
}

// EndOffsetFor answers OffsetsForLeaderEpoch for epoch req given the log end offset leo, with
// Kafka's five rules (LeaderEpochFileCache.endOffsetFor):
//  1. req undefined → (-1, -1);
//  2. req is the latest epoch → (req, leo);
//  3. no entry above req → (-1, -1);
//  4. no entry at or below req → (req, start of the first entry);
//  5. otherwise (the floor epoch, the start of the next higher entry).
func (c *EpochCache) EndOffsetFor(req int32, leo int64) (int32, int64) {
	if req == Undefined || len(c.entries) == 0 {
		return Undefined, Undefined
	}
	if req == c.Latest() {
		return req, leo
	}
	// higher is the index of the first entry with an epoch above req.
	higher := -1
	for i, en := range c.entries {
		if en.Epoch > req {
			higher = i
			break
		}
	}
	switch {
	case higher < 0:
		return Undefined, Undefined
	case higher == 0:
		return req, c.entries[0].StartOffset
	default:
		return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
	}
}

// TruncateFromEnd drops every entry that starts at or after offset o.
func (c *EpochCache) TruncateFromEnd(o int64) {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= o {
		n--
	}
	c.entries = c.entries[:n:n]
}

// TruncateFromStart drops every entry that starts at or before offset o and re-adds the last one
// dropped as starting at o (the log start moved to o inside that epoch).
func (c *EpochCache) TruncateFromStart(o int64) {
	last := -1
	for i, en := range c.entries {
		if en.StartOffset <= o {
			last = i
		}
	}
	if last < 0 {
		return
	}
	kept := append([]EpochEntry{{Epoch: c.entries[last].Epoch, StartOffset: o}}, c.entries[last+1:]...)
	c.entries = kept
}

// Clear empties the cache (a full truncation).
func (c *EpochCache) Clear() { c.entries = nil }
