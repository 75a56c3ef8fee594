import { fmtTime, tpName } from "./dom.js";

// Plain-language explanations of the engine's invariants (docs/scenarios.md).
export const INVARIANTS = {
  "acked-write-lost": "A record the producer was told was safely written (acks=all) is no longer in the leader's log: an acknowledged write was lost.",
  "consumed-record-changed": "A consumer already read a record at this offset, and the leader now holds a different record there: readers saw history change.",
  "committed-divergence": "Two replicas hold different records below both their high watermarks: data both consider committed disagrees.",
  "hw-regression": "The leader's high watermark went down without a leader change: committed data was un-committed.",
  "epoch-regression": "The partition's leader epoch went down: fencing by epoch no longer holds.",
};

// lostRecords lists the acknowledged records the engine's verdicts call lost (absent: none).
export function lostRecords(v) {
  const out = [];
  for (const p of v.partitions) for (const x of p.verdicts || []) if (x.verdict === "lost") out.push({ ...x, tp: tpName(p.topic, p.partition) });
  return out;
}

// ViolationBanner is the alert a new invariant violation raises: the engine's text in plain
// words, its cause (the event that made it) and the records lost, with "Jump to it" and "Jump to
// cause".
export class ViolationBanner {
  // els: {box, text, cause}; onFirst() runs when the first violation of a run shows (it pauses).
  constructor({ box, text, cause }, { onFirst }) {
    this.box = box;
    this.text = text;
    this.causeBtn = cause;
    this.onFirst = onFirst;
    this.count = 0; // violations shown so far in this run
    this.last = null; // the first of the latest batch: what the jumps go to
  }

  reset() { this.count = 0; this.box.hidden = true; }

  check(v) {
    const vs = v.violations;
    if (vs.length > this.count) {
      const fresh = vs.slice(this.count);
      this.last = fresh[0];
      // The engine names the event that made the violation (the truncation, the election).
      const cause = fresh[0].cause;
      this.causeBtn.hidden = !cause;
      if (cause) this.causeBtn.title = `${fmtTime(cause.t)}: ${cause.text}`;
      const lost = lostRecords(v);
      this.text.textContent = (fresh.length > 1 ? `${fresh.length} invariants broken. ` : "Invariant broken. ") +
        fresh.map((x) => `At ${fmtTime(x.t)} — ${x.name} on ${tpName(x.topic, x.partition)}: ${INVARIANTS[x.name] || ""} (${x.text})`).join(" ") +
        (cause ? ` Cause, at ${fmtTime(cause.t)}: ${cause.text}.` : "") +
        (lost.length ? ` Lost: ${lost.map((x) => `record m${x.id} (offset ${x.offset} of ${x.tp})`).join(", ")}, marked ✗ in its partition.` : "");
      this.box.hidden = false;
      if (this.count === 0) this.onFirst();
    }
    this.count = vs.length;
  }
}
