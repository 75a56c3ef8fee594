package session

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/highwater-sim/highwater/engine/view"
)

// View deltas. A page that asks for them (view.delta) gets, after its first full view, only what
// changed since the view it was last sent: replaced top-level fields, changed brokers and
// partitions by index, and changed runs of the overview's state letters. Every view sent carries a
// sequence number and every patch names the one it applies to, so a page that lost track asks for
// a full view instead of drawing a wrong one.

// ViewPatch turns the previous view (sequence Base) into the current one (sequence Seq).
type ViewPatch struct {
	Base int64 `json:"base"`
	Seq  int64 `json:"seq"`
	// Set replaces view fields whole, by their JSON names: a top-level field ("t"), or a member of an
	// object field ("summary.offline").
	Set map[string]json.RawMessage `json:"set,omitempty"`
	// Unset lists top-level fields the view no longer has (ones left out when empty).
	Unset      []string     `json:"unset,omitempty"`
	Brokers    *ListPatch   `json:"brokers,omitempty"`
	Partitions *ListPatch   `json:"partitions,omitempty"`
	States     *StringPatch `json:"states,omitempty"`
	Leaders    *StringPatch `json:"leaders,omitempty"`
}

// ListPatch resizes a list to Len and replaces the entries at the indexes At with Items.
type ListPatch struct {
	Len   int               `json:"len"`
	At    []int             `json:"at"`
	Items []json.RawMessage `json:"items"`
}

// StringPatch overwrites an overview string (states, leaders) from each index At[i] with Runs[i].
type StringPatch struct {
	At   []int    `json:"at"`
	Runs []string `json:"runs"`
}

// sentView is the last view sent to a page that takes deltas, in pieces.
type sentView struct {
	seq        int64
	fields     map[string]json.RawMessage
	brokers    []json.RawMessage
	partitions []json.RawMessage
	states     string
	leaders    string
}

// split encodes a view in the pieces a patch compares.
func split(v *view.View, seq int64) (*sentView, error) {
	s := &sentView{seq: seq, states: v.States, leaders: v.Leaders}
	rest := *v
	rest.Brokers, rest.Partitions, rest.States, rest.Leaders = nil, nil, "", ""
	raw, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &s.fields); err != nil {
		return nil, err
	}
	delete(s.fields, "brokers")
	delete(s.fields, "partitions")
	if s.brokers, err = encodeEach(v.Brokers); err != nil {
		return nil, err
	}
	if s.partitions, err = encodeEach(v.Partitions); err != nil {
		return nil, err
	}
	return s, nil
}

func encodeEach[T any](list []T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(list))
	for i := range list {
		b, err := json.Marshal(list[i])
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// patch returns what turns old into cur.
func patch(old, cur *sentView) *ViewPatch {
	p := &ViewPatch{Base: old.seq, Seq: cur.seq}
	set := func(k string, v json.RawMessage) {
		if p.Set == nil {
			p.Set = map[string]json.RawMessage{}
		}
		p.Set[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(cur.fields)) {
		v, was := cur.fields[k], old.fields[k]
		if string(v) == string(was) {
			continue
		}
		// An object field (summary, traffic, stats…) changes a few of its members at a time:
		// send those, as "field.member".
		if members, ok := changedMembers(was, v); ok {
			for _, m := range slices.Sorted(maps.Keys(members)) {
				set(k+"."+m, members[m])
			}
			continue
		}
		set(k, v)
	}
	for _, k := range slices.Sorted(maps.Keys(old.fields)) {
		if _, ok := cur.fields[k]; !ok {
			p.Unset = append(p.Unset, k)
		}
	}
	p.Brokers = listPatch(old.brokers, cur.brokers)
	p.Partitions = listPatch(old.partitions, cur.partitions)
	p.States = stringPatch("states", old.states, cur.states, set)
	p.Leaders = stringPatch("leaders", old.leaders, cur.leaders, set)
	return p
}

// changedMembers returns the members of object cur that differ from object old's, when both are
// objects with the same members.
func changedMembers(old, cur json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(old) == 0 || len(cur) == 0 || old[0] != '{' || cur[0] != '{' {
		return nil, false
	}
	var o, c map[string]json.RawMessage
	if json.Unmarshal(old, &o) != nil || json.Unmarshal(cur, &c) != nil || len(o) != len(c) {
		return nil, false
	}
	changed := map[string]json.RawMessage{}
	for k, v := range c {
		w, ok := o[k]
		if !ok {
			return nil, false
		}
		if string(v) != string(w) {
			changed[k] = v
		}
	}
	return changed, true
}

func listPatch(old, cur []json.RawMessage) *ListPatch {
	var lp *ListPatch
	for i, item := range cur {
		if i < len(old) && string(old[i]) == string(item) {
			continue
		}
		if lp == nil {
			lp = &ListPatch{}
		}
		lp.At = append(lp.At, i)
		lp.Items = append(lp.Items, item)
	}
	if lp == nil && len(old) == len(cur) {
		return nil
	}
	if lp == nil {
		lp = &ListPatch{At: []int{}, Items: []json.RawMessage{}}
	}
	lp.Len = len(cur)
	return lp
}

// stringPatch returns the patch of an overview string: nil when unchanged; the runs of
// characters that differ (runs closer than 8 merge); or, when the lengths differ or the runs would
// be longer than a quarter of the string, nil after setting the string whole.
func stringPatch(name, old, cur string, set func(string, json.RawMessage)) *StringPatch {
	if old == cur {
		return nil
	}
	if sp := runsPatch(old, cur); sp != nil {
		return sp
	}
	whole, _ := json.Marshal(cur)
	set(name, whole)
	return nil
}

func runsPatch(old, cur string) *StringPatch {
	if len(old) != len(cur) {
		return nil
	}
	const gap = 8
	sp := &StringPatch{}
	size := 0
	for i := 0; i < len(cur); i++ {
		if old[i] == cur[i] {
			continue
		}
		start, end := i, i+1
		for j := i + 1; j < len(cur) && j < end+gap; j++ {
			if old[j] != cur[j] {
				end = j + 1
			}
		}
		sp.At = append(sp.At, start)
		sp.Runs = append(sp.Runs, cur[start:end])
		size += end - start + 8
		if size > len(cur)/4 {
			return nil
		}
		i = end - 1
	}
	return sp
}
