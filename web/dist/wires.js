// Messages in flight, drawn on a canvas over the broker cards: each message is a dot travelling
// from its sender's card to its receiver's card, placed by simulated time:
// (display time − sent) / (deliver − sent). With reduced motion the dot sits still at the middle.

import { tpName } from "./dom.js";

export const MESSAGE_KINDS = {
  "fetch": { colour: "#0072b2", label: "Fetch" },
  "fetch-response": { colour: "#56b4e9", label: "Fetch response" },
  "offsets-for-leader-epoch": { colour: "#cc79a7", label: "OffsetsForLeaderEpoch" },
  "offsets-for-leader-epoch-response": { colour: "#cc79a7", label: "OffsetsForLeaderEpoch answer" },
  "list-offsets": { colour: "#999999", label: "ListOffsets" },
  "list-offsets-response": { colour: "#999999", label: "ListOffsets answer" },
  "leader-and-isr": { colour: "#d55e00", label: "LeaderAndIsr" },
  "leader-and-isr-response": { colour: "#d55e00", label: "LeaderAndIsr answer" },
  "stop-replica": { colour: "#d55e00", label: "StopReplica" },
  "alter-partition": { colour: "#e69f00", label: "AlterPartition" },
  "alter-partition-response": { colour: "#e69f00", label: "AlterPartition answer" },
  "controlled-shutdown": { colour: "#7f7f7f", label: "ControlledShutdown" },
  "controlled-shutdown-response": { colour: "#7f7f7f", label: "ControlledShutdown answer" },
  "produce": { colour: "#009e73", label: "Produce" },
  "produce-response": { colour: "#009e73", label: "Produce ack" },
};

// describeMessage returns a short text of what a message carries.
export function describeMessage(m) {
  const k = MESSAGE_KINDS[m.type];
  let label = k ? k.label : m.type;
  const parts = [];
  if (m.fetch) parts.push(m.fetch.partitions.map((p) => `${tpName(p.topic, p.partition)}@${p.fetchOffset}${p.lastFetchedEpoch >= 0 ? " last epoch " + p.lastFetchedEpoch : ""}`).join(", "));
  if (m.fetchResponse) {
    if (m.fetchResponse.error) parts.push(m.fetchResponse.error);
    for (const p of m.fetchResponse.partitions) {
      let s = `${tpName(p.topic, p.partition)} ${(p.records || []).length} records, HW ${p.highWatermark}`;
      if (p.divergingEpoch) s += `, diverging epoch ${p.divergingEpoch.epoch} ends at ${p.divergingEpoch.endOffset}`;
      if (p.error) s += ` ${p.error}`;
      parts.push(s);
    }
  }
  if (m.offsetsForLeaderEpoch) parts.push(m.offsetsForLeaderEpoch.partitions.map((p) => `${tpName(p.topic, p.partition)} epoch ${p.leaderEpoch}`).join(", "));
  if (m.offsetsForLeaderEpochResponse) parts.push(m.offsetsForLeaderEpochResponse.partitions.map((p) => `${tpName(p.topic, p.partition)} epoch ${p.leaderEpoch} ends at ${p.endOffset}${p.error ? " " + p.error : ""}`).join(", "));
  if (m.leaderAndIsr) parts.push(m.leaderAndIsr.partitions.map((p) => `${tpName(p.topic, p.partition)} leader ${p.leader} epoch ${p.leaderEpoch} ISR [${p.isr.join(" ")}]`).join(", "));
  if (m.alterPartition) parts.push(`${tpName(m.alterPartition.tp.topic, m.alterPartition.tp.partition)} ISR [${m.alterPartition.newIsr.join(" ")}]`);
  if (m.alterPartitionResponse) parts.push(m.alterPartitionResponse.error || `ISR [${(m.alterPartitionResponse.isr || []).join(" ")}]`);
  if (m.produce) parts.push(`${m.produce.recordIds.length} records to ${tpName(m.produce.tp.topic, m.produce.tp.partition)} acks=${m.produce.acks}`);
  if (m.produceResponse) {
    if (m.produceResponse.error) { label = "Produce error"; parts.push(m.produceResponse.error); } else parts.push(`base offset ${m.produceResponse.baseOffset}`);
  }
  return parts.length ? `${label} (${parts.join("; ")})` : label;
}

export class Wires {
  constructor(canvas, stage) {
    this.canvas = canvas;
    this.stage = stage;
    this.ctx = canvas.getContext("2d");
    this.reduced = false;
  }

  // centres returns each node's centre (broker id → {x, y}) relative to the stage.
  centres() {
    const base = this.stage.getBoundingClientRect();
    const out = new Map();
    for (const card of this.stage.querySelectorAll("[data-broker]")) {
      const r = card.getBoundingClientRect();
      out.set(Number(card.dataset.broker), { x: r.left - base.left + r.width / 2, y: r.top - base.top + Math.min(r.height / 2, 28), w: r.width, h: r.height });
    }
    return out;
  }

  draw(messages, displayT) {
    const dpr = window.devicePixelRatio || 1;
    const w = this.stage.clientWidth, h = this.stage.clientHeight;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = w + "px";
      this.canvas.style.height = h + "px";
    }
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (!messages || !messages.length) return;
    const pos = this.centres();
    const labels = messages.length <= 10;
    const detailed = messages.length <= 4;
    ctx.font = "11px system-ui, sans-serif";
    for (const m of messages) {
      const a = pos.get(m.from), b = pos.get(m.to);
      if (!a || !b) continue;
      const kind = MESSAGE_KINDS[m.type] || { colour: "#444", label: m.type };
      const span = Math.max(1, m.deliver - m.sent);
      let f = this.reduced ? 0.5 : (displayT - m.sent) / span;
      f = Math.min(1, Math.max(0, f));
      // Requests bow one way and responses the other, so a pair never overlaps.
      const bow = m.replyTo ? -1 : 1;
      let x, y;
      ctx.strokeStyle = kind.colour + "55";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      if (m.from === m.to) {
        const r = 18, cx = a.x, cy = a.y - 22;
        ctx.arc(cx, cy, r, 0, Math.PI * 2);
        const ang = Math.PI / 2 + f * Math.PI * 2;
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
      const error = (m.produceResponse && m.produceResponse.error) || (m.fetchResponse && m.fetchResponse.error);
      const diverging = m.fetchResponse && m.fetchResponse.partitions.some((p) => p.divergingEpoch);
      ctx.fillStyle = error ? "#c00" : kind.colour;
      ctx.beginPath();
      ctx.arc(x, y, diverging ? 8 : 6, 0, Math.PI * 2);
      ctx.fill();
      ctx.strokeStyle = diverging ? "#b3001b" : "#fff";
      ctx.lineWidth = diverging ? 3 : 1.5;
      ctx.stroke();
      if (labels) {
        let text = detailed || diverging ? describeMessage(m) : kind.label;
        if (text.length > 64) text = text.slice(0, 63) + "…";
        const tw = ctx.measureText(text).width;
        // Keep the label on the canvas: flip it to the dot's left near the right edge.
        const lx = x + 8 + tw + 6 > w ? Math.max(0, x - 8 - tw - 6) : x + 8;
        ctx.fillStyle = "rgba(255,255,255,0.9)";
        ctx.fillRect(lx, y - 8, tw + 6, 15);
        ctx.fillStyle = "#111";
        ctx.fillText(text, lx + 3, y + 3);
      }
    }
  }
}

// legend returns [label, colour] pairs, one per message family, for the key under the stage.
export function legend() {
  const seen = new Map();
  for (const k of Object.values(MESSAGE_KINDS)) {
    const family = k.label.replace(/ (response|answer|ack)$/, "");
    if (!seen.has(family)) seen.set(family, k.colour);
  }
  return [...seen];
}
