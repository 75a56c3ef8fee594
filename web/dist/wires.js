// Messages in flight. With the broker cards in one row (small clusters) they travel in lanes on a
// band above the cards: one lane per pair of cards (pairs that do not overlap share a lane), each
// lane with a row for requests (filled dots, solid line) and a row for responses (rings, dashed
// line). Labels stay in their row, never over a card, and many similar messages on one link
// collapse into one label ("Fetch ×3"). With cards in a grid (large clusters) they fly over the
// stage between card edges as before.
//
// Where a message is along its way comes from the caller: progress(m) in [0, 1] (simulated time
// at the real-time speeds; wall time in story mode, so every flight takes the same time).

import { tpName, plural } from "./dom.js";

export const MESSAGE_KINDS = {
  "fetch": { colour: "#0072b2", label: "Fetch" },
  "fetch-response": { colour: "#0072b2", label: "Fetch response" },
  "offsets-for-leader-epoch": { colour: "#cc79a7", label: "OffsetsForLeaderEpoch" },
  "offsets-for-leader-epoch-response": { colour: "#cc79a7", label: "OffsetsForLeaderEpoch answer" },
  "list-offsets": { colour: "#777777", label: "ListOffsets" },
  "list-offsets-response": { colour: "#777777", label: "ListOffsets answer" },
  "leader-and-isr": { colour: "#d55e00", label: "LeaderAndIsr" },
  "leader-and-isr-response": { colour: "#d55e00", label: "LeaderAndIsr answer" },
  "stop-replica": { colour: "#d55e00", label: "StopReplica" },
  "stop-replica-response": { colour: "#d55e00", label: "StopReplica answer" },
  "update-metadata": { colour: "#d55e00", label: "UpdateMetadata" },
  "update-metadata-response": { colour: "#d55e00", label: "UpdateMetadata answer" },
  "alter-partition": { colour: "#b07800", label: "AlterPartition" },
  "alter-partition-response": { colour: "#b07800", label: "AlterPartition answer" },
  "controlled-shutdown": { colour: "#666666", label: "ControlledShutdown" },
  "controlled-shutdown-response": { colour: "#666666", label: "ControlledShutdown answer" },
  "produce": { colour: "#00805d", label: "Produce" },
  "produce-response": { colour: "#00805d", label: "Produce ack" },
};

const isResponse = (m) => Boolean(m.replyTo) || /-response$/.test(m.type);

// describeMessage returns a short text of what a message carries.
export function describeMessage(m) {
  const k = MESSAGE_KINDS[m.type];
  let label = k ? k.label : m.type;
  const parts = [];
  if (m.fetch) parts.push(m.fetch.partitions.map((p) => `${tpName(p.topic, p.partition)}@${p.fetchOffset}${p.lastFetchedEpoch >= 0 ? " last epoch " + p.lastFetchedEpoch : ""}`).join(", "));
  if (m.fetchResponse) {
    if (m.fetchResponse.error) parts.push(m.fetchResponse.error);
    for (const p of m.fetchResponse.partitions) {
      let s = `${tpName(p.topic, p.partition)} ${plural((p.records || []).length, "record")}, HW ${p.highWatermark}`;
      if (p.divergingEpoch) s += `, diverging epoch ${p.divergingEpoch.epoch} ends at ${p.divergingEpoch.endOffset}`;
      if (p.error) s += ` ${p.error}`;
      parts.push(s);
    }
  }
  if (m.offsetsForLeaderEpoch) parts.push(m.offsetsForLeaderEpoch.partitions.map((p) => `${tpName(p.topic, p.partition)} epoch ${p.leaderEpoch}`).join(", "));
  if (m.offsetsForLeaderEpochResponse) parts.push(m.offsetsForLeaderEpochResponse.partitions.map((p) => `${tpName(p.topic, p.partition)} epoch ${p.leaderEpoch} ends at ${p.endOffset}${p.error ? " " + p.error : ""}`).join(", "));
  if (m.leaderAndIsr) parts.push(m.leaderAndIsr.partitions.map((p) => `${tpName(p.topic, p.partition)} leader ${p.leader} epoch ${p.leaderEpoch} ISR [${p.isr.join(" ")}]`).join(", "));
  if (m.stopReplica) parts.push(m.stopReplica.partitions.map((p) => tpName(p.topic, p.partition)).join(", "));
  if (m.stopReplicaResponse && m.stopReplicaResponse.error) parts.push(m.stopReplicaResponse.error);
  if (m.updateMetadata) parts.push(`${plural(m.updateMetadata.partitions, "partition state")}, live brokers ${(m.updateMetadata.liveBrokers || []).join(" ")}`);
  if (m.updateMetadataResponse && m.updateMetadataResponse.error) parts.push(m.updateMetadataResponse.error);
  if (m.alterPartition) parts.push(`${tpName(m.alterPartition.tp.topic, m.alterPartition.tp.partition)} ISR [${m.alterPartition.newIsr.join(" ")}]`);
  if (m.alterPartitionResponse) parts.push(m.alterPartitionResponse.error || `ISR [${(m.alterPartitionResponse.isr || []).join(" ")}]`);
  if (m.produce) parts.push(`${plural(m.produce.recordIds.length, "record")} to ${tpName(m.produce.tp.topic, m.produce.tp.partition)} acks=${m.produce.acks}`);
  if (m.produceResponse) {
    if (m.produceResponse.error) { label = "Produce error"; parts.push(m.produceResponse.error); } else parts.push(`base offset ${m.produceResponse.baseOffset}`);
  }
  return parts.length ? `${label} (${parts.join("; ")})` : label;
}

// shortLabel is a message's label in a lane: what a newcomer needs (the kind, the offset asked
// for, how many records came back, a diverging epoch, an error).
export function shortLabel(m) {
  const k = MESSAGE_KINDS[m.type];
  const label = k ? k.label : m.type;
  if (m.fetch && m.fetch.partitions.length === 1) {
    const p = m.fetch.partitions[0];
    return `${label} from offset ${p.fetchOffset}${p.lastFetchedEpoch >= 0 ? ", last epoch " + p.lastFetchedEpoch : ""}`;
  }
  if (m.fetchResponse) {
    if (m.fetchResponse.error) return `${label}: ${m.fetchResponse.error}`;
    const p = m.fetchResponse.partitions[0];
    if (p && p.divergingEpoch) return `${label}: diverging! epoch ${p.divergingEpoch.epoch} ended at ${p.divergingEpoch.endOffset}`;
    if (p && p.error) return `${label}: ${p.error}`;
    if (p) { const n = (p.records || []).length; return `${label}: ${n} record${n === 1 ? "" : "s"}, HW ${p.highWatermark}`; }
  }
  if (m.produce) return `${label} ${m.produce.recordIds.length} record${m.produce.recordIds.length === 1 ? "" : "s"}, acks=${m.produce.acks}`;
  if (m.produceResponse) return m.produceResponse.error ? `Produce error: ${m.produceResponse.error}` : `${label}: offset ${m.produceResponse.baseOffset}`;
  if (m.leaderAndIsr && m.leaderAndIsr.partitions.length === 1) {
    const p = m.leaderAndIsr.partitions[0];
    return `${label}: leader ${p.leader}, epoch ${p.leaderEpoch}`;
  }
  if (m.alterPartition) return `${label}: ISR [${m.alterPartition.newIsr.join(" ")}]`;
  return label;
}

const LANE_ROW = 18; // px per row (a lane has a request row and a response row)
const BAND_PAD = 6;
const MAX_LANES = 6;

export class Wires {
  // lanes: the band canvas above the cards (in the page flow); overlay: the canvas over the
  // stage (grid layouts); stage: the element holding the cards.
  constructor(overlay, stage, lanes) {
    this.canvas = overlay;
    this.stage = stage;
    this.lanes = lanes;
    this.ctx = overlay.getContext("2d");
    this.lctx = lanes ? lanes.getContext("2d") : null;
    this.reduced = false;
    this.laneCount = 1; // grows with the lanes needed (so the band does not jump), reset on load
    this.boxes = []; // label boxes drawn (page coordinates, for the tests)
  }

  reset() { this.laneCount = 1; }

  // cards returns each shown card's box (broker id → rect) and whether they sit in one row.
  cards() {
    const out = new Map();
    let top = null, row = true;
    for (const card of this.stage.querySelectorAll(".brokers > [data-broker]")) {
      const r = card.getBoundingClientRect();
      if (!r.width) continue;
      out.set(Number(card.dataset.broker), r);
      if (top === null) top = r.top; else if (Math.abs(r.top - top) > 4) row = false;
    }
    return { rects: out, row: row && out.size > 1 };
  }

  draw(messages, progress) {
    this.boxes = [];
    const { rects, row } = this.cards();
    const useLanes = this.lanes && row;
    this.stage.classList.toggle("laned", Boolean(useLanes));
    if (useLanes) {
      this.clear(this.canvas, this.ctx, 0, 0);
      this.drawLanes(messages || [], progress, rects);
    } else {
      if (this.lanes) this.clear(this.lanes, this.lctx, 0, 0);
      this.drawOverlay(messages || [], progress, rects);
    }
  }

  clear(canvas, ctx, w, h) {
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = w + "px";
      canvas.style.height = h + "px";
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
  }

  // ---- lanes ----

  drawLanes(messages, progress, rects) {
    const canvas = this.lanes, ctx = this.lctx;
    const w = canvas.parentElement.clientWidth;
    const base = canvas.getBoundingClientRect();
    const xs = new Map();
    for (const [id, r] of rects) xs.set(id, r.left - base.left + r.width / 2);
    // Group by link (unordered pair) and by direction and kind: one label per group.
    const links = new Map();
    const selfMsgs = [];
    for (const m of messages) {
      if (!xs.has(m.from) || !xs.has(m.to)) continue;
      if (m.from === m.to) { selfMsgs.push(m); continue; }
      const a = Math.min(m.from, m.to), b = Math.max(m.from, m.to);
      const key = a + ":" + b;
      let link = links.get(key);
      if (!link) { link = { key, x0: Math.min(xs.get(a), xs.get(b)), x1: Math.max(xs.get(a), xs.get(b)), groups: new Map() }; links.set(key, link); }
      const resp = isResponse(m);
      const gk = `${m.from}>${m.to}:${m.type}`;
      let g = link.groups.get(gk);
      if (!g) { g = { from: m.from, to: m.to, type: m.type, resp, msgs: [] }; link.groups.set(gk, g); }
      g.msgs.push(m);
    }
    // Lanes: pairs whose spans overlap get different lanes (greedy, widest first), so a line
    // never runs through another link's line.
    const sorted = [...links.values()].sort((p, q) => (q.x1 - q.x0) - (p.x1 - p.x0) || p.x0 - q.x0);
    const laneSpans = [];
    for (const link of sorted) {
      let lane = laneSpans.findIndex((spans) => spans.every(([s0, s1]) => link.x1 + 40 < s0 || link.x0 > s1 + 40));
      if (lane < 0) { lane = laneSpans.length; laneSpans.push([]); }
      laneSpans[lane].push([link.x0, link.x1]);
      link.lane = Math.min(lane, MAX_LANES - 1);
    }
    this.laneCount = Math.min(MAX_LANES, Math.max(this.laneCount, laneSpans.length));
    const h = BAND_PAD * 2 + this.laneCount * 2 * LANE_ROW;
    this.clear(canvas, ctx, w, h);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // Ports: a short tick down to each card, so a lane's end points at its card.
    ctx.strokeStyle = "#c9c9c4";
    ctx.lineWidth = 1;
    for (const x of xs.values()) { ctx.beginPath(); ctx.moveTo(x, h - 4); ctx.lineTo(x, h); ctx.stroke(); }
    const placed = []; // label boxes in canvas coordinates
    // A broker's message to itself (the controller's LeaderAndIsr to its own broker): a dot
    // rising and falling on its card's port, labelled beside it.
    for (const m of selfMsgs) {
      const kind = MESSAGE_KINDS[m.type] || { colour: "#444", label: m.type };
      const x = xs.get(m.from), f = this.reduced ? 0.5 : Math.min(1, Math.max(0, progress(m)));
      const y = h - 6 - Math.sin(f * Math.PI) * (h - 14);
      ctx.strokeStyle = kind.colour + "88"; ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.moveTo(x, h); ctx.lineTo(x, 8); ctx.stroke();
      this.dot(ctx, m, kind, x, y, isResponse(m));
      const text = shortLabel(m) + " (to itself)";
      const tw = ctx.measureText(text).width + 8;
      const box = { x: Math.max(2, Math.min(x + 10, w - tw - 2)), y: h - 22, w: tw, h: 16 };
      if (placed.some((p) => overlaps(p, box))) continue;
      placed.push(box);
      ctx.fillStyle = "#fff"; ctx.fillRect(box.x, box.y, box.w, box.h);
      ctx.strokeStyle = kind.colour; ctx.lineWidth = 1; ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
      ctx.fillStyle = "#111"; ctx.fillText(text, box.x + 4, box.y + 8);
      this.boxes.push({ left: base.left + box.x, top: base.top + box.y, right: base.left + box.x + box.w, bottom: base.top + box.y + box.h, text });
    }
    for (const link of links.values()) {
      for (const g of link.groups.values()) {
        const y = BAND_PAD + link.lane * 2 * LANE_ROW + (g.resp ? LANE_ROW * 1.5 : LANE_ROW * 0.5);
        const kind = MESSAGE_KINDS[g.type] || { colour: "#444", label: g.type };
        const xa = xs.get(g.from), xb = xs.get(g.to);
        // The link's line, with an arrowhead at the receiver and ticks down to both cards.
        ctx.strokeStyle = kind.colour + "88";
        ctx.lineWidth = 1.5;
        ctx.setLineDash(g.resp ? [5, 4] : []);
        ctx.beginPath(); ctx.moveTo(xa, y); ctx.lineTo(xb, y); ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath(); ctx.moveTo(xa, y); ctx.lineTo(xa, h); ctx.moveTo(xb, y); ctx.lineTo(xb, h); ctx.strokeStyle = "#00000022"; ctx.stroke();
        const dir = Math.sign(xb - xa) || 1;
        ctx.fillStyle = kind.colour;
        ctx.beginPath(); ctx.moveTo(xb, y); ctx.lineTo(xb - dir * 7, y - 4); ctx.lineTo(xb - dir * 7, y + 4); ctx.closePath(); ctx.fill();
        let lead = null, leadF = -1;
        for (const m of g.msgs) {
          const f = this.reduced ? 0.5 : Math.min(1, Math.max(0, progress(m)));
          const x = xa + (xb - xa) * f;
          this.dot(ctx, m, kind, x, y, g.resp);
          if (f > leadF) { leadF = f; lead = { m, x }; }
        }
        // The label follows the leading dot, stays in its row and on the band, and never
        // covers another label (it moves along the row, or is left out and counted).
        const n = g.msgs.length;
        const diverging = g.msgs.some(divergingOf);
        let text = n > 1 ? `${kind.label} ×${n}` : shortLabel(g.msgs[0]);
        if (n > 1 && diverging) text = shortLabel(g.msgs.find(divergingOf)) + ` (+${n - 1})`;
        const avail = Math.max(60, w - 8);
        while (ctx.measureText(text).width + 8 > avail && text.length > 8) text = text.slice(0, -2) + "…";
        const tw = ctx.measureText(text).width + 8;
        let lx = dir > 0 ? lead.x - tw - 10 : lead.x + 10; // behind the dot, on the line already travelled
        if (lx < 2) lx = Math.min(lead.x + 10, w - tw - 2);
        if (lx + tw > w - 2) lx = Math.max(2, lead.x - tw - 10);
        lx = Math.max(2, Math.min(lx, w - tw - 2));
        const box = { x: lx, y: y - 8, w: tw, h: 16 };
        for (let tries = 0; tries < 8 && placed.some((p) => overlaps(p, box)); tries++) {
          const hit = placed.find((p) => overlaps(p, box));
          box.x = hit.x + hit.w + 4;
          if (box.x + box.w > w - 2) box.x = Math.max(2, hit.x - box.w - 4);
        }
        if (placed.some((p) => overlaps(p, box))) continue;
        placed.push(box);
        ctx.fillStyle = g.resp ? "#f3f6fa" : "#fff";
        ctx.strokeStyle = diverging ? "#b3001b" : kind.colour;
        ctx.lineWidth = diverging ? 2 : 1;
        ctx.fillRect(box.x, box.y, box.w, box.h);
        ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
        ctx.fillStyle = diverging ? "#8a0015" : "#111";
        ctx.font = (g.resp ? "italic " : "") + "12px system-ui, sans-serif";
        ctx.fillText(text, box.x + 4, y);
        ctx.font = "12px system-ui, sans-serif";
        this.boxes.push({ left: base.left + box.x, top: base.top + box.y, right: base.left + box.x + box.w, bottom: base.top + box.y + box.h, text });
      }
    }
  }

  // dot draws one message: a request is a filled dot, a response a ring; a diverging-epoch answer
  // has a red ring, an error is red.
  dot(ctx, m, kind, x, y, resp) {
    const error = (m.produceResponse && m.produceResponse.error) || (m.fetchResponse && m.fetchResponse.error);
    const diverging = divergingOf(m);
    ctx.beginPath();
    ctx.arc(x, y, diverging ? 7 : 5.5, 0, Math.PI * 2);
    if (resp) {
      ctx.fillStyle = "#fff"; ctx.fill();
      ctx.lineWidth = 3; ctx.strokeStyle = error || diverging ? "#b3001b" : kind.colour; ctx.stroke();
    } else {
      ctx.fillStyle = error ? "#b3001b" : kind.colour; ctx.fill();
      ctx.lineWidth = 1.5; ctx.strokeStyle = "#fff"; ctx.stroke();
    }
  }

  // ---- overlay (cards in a grid) ----

  drawOverlay(messages, progress, rects) {
    const w = this.stage.clientWidth, h = this.stage.clientHeight;
    this.clear(this.canvas, this.ctx, w, h);
    if (!messages.length) return;
    const ctx = this.ctx;
    const base = this.stage.getBoundingClientRect();
    const pos = new Map();
    for (const [id, r] of rects) pos.set(id, { x: r.left - base.left + r.width / 2, y: r.bottom - base.top - 4 });
    const labels = messages.length <= 10;
    ctx.font = "11px system-ui, sans-serif";
    const placed = [];
    for (const m of messages) {
      const a = pos.get(m.from), b = pos.get(m.to);
      if (!a || !b) continue;
      const kind = MESSAGE_KINDS[m.type] || { colour: "#444", label: m.type };
      const f = this.reduced ? 0.5 : Math.min(1, Math.max(0, progress(m)));
      const resp = isResponse(m);
      const bow = resp ? -1 : 1;
      let x, y;
      ctx.strokeStyle = kind.colour + "55";
      ctx.lineWidth = 1.5;
      ctx.setLineDash(resp ? [5, 4] : []);
      ctx.beginPath();
      if (m.from === m.to) {
        const r = 18, cx = a.x, cy = a.y + 22;
        ctx.arc(cx, cy, r, 0, Math.PI * 2);
        const ang = -Math.PI / 2 + f * Math.PI * 2;
        x = cx + r * Math.cos(ang); y = cy + r * Math.sin(ang);
      } else {
        const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
        const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
        const off = Math.min(60, len / 4) * bow;
        const cx = mx - (dy / len) * off, cy = my + (dx / len) * off;
        ctx.moveTo(a.x, a.y);
        ctx.quadraticCurveTo(cx, cy, b.x, b.y);
        const u = 1 - f;
        x = u * u * a.x + 2 * u * f * cx + f * f * b.x;
        y = u * u * a.y + 2 * u * f * cy + f * f * b.y;
      }
      ctx.stroke();
      ctx.setLineDash([]);
      this.dot(ctx, m, kind, x, y, resp);
      if (labels) {
        let text = shortLabel(m);
        if (text.length > 48) text = text.slice(0, 47) + "…";
        const tw = ctx.measureText(text).width + 6;
        const box = { x: x + 8 + tw > w ? Math.max(0, x - 8 - tw) : x + 8, y: y - 8, w: tw, h: 15 };
        if (placed.some((p) => overlaps(p, box))) continue;
        placed.push(box);
        ctx.fillStyle = "rgba(255,255,255,0.92)";
        ctx.fillRect(box.x, box.y, box.w, box.h);
        ctx.fillStyle = "#111";
        ctx.fillText(text, box.x + 3, y + 3);
        this.boxes.push({ left: base.left + box.x, top: base.top + box.y, right: base.left + box.x + box.w, bottom: base.top + box.y + box.h, text });
      }
    }
  }
}

function divergingOf(m) { return Boolean(m.fetchResponse && m.fetchResponse.partitions.some((p) => p.divergingEpoch)); }

function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }

// legend returns [label, colour] pairs, one per message family, for the key beside the stage.
export function legend() {
  const seen = new Map();
  for (const k of Object.values(MESSAGE_KINDS)) {
    const family = k.label.replace(/ (response|answer|ack)$/, "");
    if (!seen.has(family)) seen.set(family, k.colour);
  }
  return [...seen];
}
