// Views as deltas (docs/protocol.md, engine/session/delta.go): the page holds the last view and
// applies each reply's patch to it.

// applyPatch turns the last view into the current one (engine/session/delta.go): fields and
// object members replaced, list entries replaced by index, runs of overview letters overwritten.
export function applyPatch(v, p) {
  for (const k of p.unset || []) delete v[k];
  for (const [k, val] of Object.entries(p.set || {})) {
    const dot = k.indexOf(".");
    if (dot < 0) v[k] = val; else v[k.slice(0, dot)][k.slice(dot + 1)] = val;
  }
  for (const name of ["brokers", "partitions"]) {
    const lp = p[name];
    if (!lp) continue;
    const list = (v[name] || []).slice(0, lp.len);
    lp.at.forEach((i, j) => { list[i] = lp.items[j]; });
    v[name] = list;
  }
  if (p.states) {
    let out = "", from = 0;
    const old = v.states;
    p.states.at.forEach((i, j) => { out += old.slice(from, i) + p.states.runs[j]; from = i + p.states.runs[j].length; });
    v.states = out + old.slice(from);
  }
}

// normalize turns the lists Go may send as null (empty slices) into arrays.
export function normalize(v) {
  for (const k of ["partitions", "messages", "violations", "produces", "consumes", "brokers"]) v[k] = v[k] || [];
  for (const p of v.partitions) { p.isr = p.isr || []; p.replicas = p.replicas || []; p.assignment = p.assignment || []; }
  return v;
}
