// The overview of a large cluster beyond the partition grid (cluster.js): live counters, a
// heatmap of brokers (click one to drill into it), the fetch traffic between brokers as a
// follower × leader matrix, and the events the engine counted instead of sending in full.

import { el, setText, brokerHue, gridMove, plural } from "./dom.js";

const fmt = (n) => Math.round(n).toLocaleString("en-US");

export class OverviewPanel {
  // toggleBroker(id) adds a broker to the drill-down focus or takes it out.
  constructor({ counters, brokers, traffic, trafficNote, elsewhere }, { toggleBroker }) {
    this.countersEl = counters;
    this.brokersEl = brokers;
    this.canvas = traffic;
    this.trafficNote = trafficNote;
    this.elsewhereEl = elsewhere;
    this.toggleBroker = toggleBroker;
    this.tiles = [];
    this.elsewhere = {}; // event type → count since the last reset
    this.prev = null; // the last traffic sample: { t, fetches: Map, records: Map }
    this.rates = new Map(); // "from>to" → { fetches/s, records/s }
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    // The tiles are one tab stop; arrow keys move between them (as in the partition grid).
    this.active = 0;
    this.brokersEl.addEventListener("keydown", (e) => {
      const i = gridMove(e.key, this.tiles.length, this.active, (j) => this.tiles[j].tile);
      if (i < 0) return;
      e.preventDefault();
      this.moveTo(i);
      this.tiles[i].tile.focus();
    });
  }

  reset() {
    this.elsewhere = {};
    this.prev = null;
    this.rates = new Map();
    this.tiles = [];
    this.brokersEl.replaceChildren();
  }

  // count adds a reply's aggregated events (what the engine did not send in full).
  count(aggregated) {
    for (const [type, n] of Object.entries(aggregated || {})) this.elsewhere[type] = (this.elsewhere[type] || 0) + n;
  }

  render(view, focusBrokers) {
    if (!view.states) return;
    const s = view.summary;
    setText(this.countersEl, [
      `ISR shrinks ${fmt(s.isrShrinks)} · expands ${fmt(s.isrExpands)}`, `leader changes ${fmt(s.leaderChanges)}`,
      `HW lag ${fmt(s.hwLag)} records uncommitted in ${fmt(s.lagging)} partitions (max ${fmt(s.maxHwLag)})`,
    ].join(" · "));
    const types = Object.keys(this.elsewhere).sort((a, b) => this.elsewhere[b] - this.elsewhere[a]);
    setText(this.elsewhereEl, types.length
      ? "Counted, not sent in full: " + types.map((k) => `${fmt(this.elsewhere[k])} ${k}`).join(", ") + "."
      : "");
    this.renderBrokers(view, focusBrokers, !!view.leaders);
    this.renderTraffic(view);
  }

  // renderBrokers draws a tile per broker; with the grid coloured by leader each tile carries its
  // broker's hue, the key to the grid's colours.
  renderBrokers(view, focusBrokers, hued) {
    const bs = view.brokers;
    if (this.tiles.length !== bs.length) {
      this.tiles = bs.map((b, i) => {
        const tile = el("button", { type: "button", class: "btile", "data-broker": b.id, tabindex: i === 0 ? 0 : -1,
          onclick: () => { this.moveTo(i); this.toggleBroker(b.id); } });
        return { tile, sig: "" };
      });
      this.active = 0;
      this.brokersEl.replaceChildren(...this.tiles.map((x) => x.tile));
    }
    const most = Math.max(1, ...bs.map((b) => b.leaders));
    for (let i = 0; i < bs.length; i++) {
      const b = bs[i], x = this.tiles[i];
      const focused = focusBrokers.includes(b.id);
      const controller = view.controller.active && view.controller.broker === b.id;
      const st = b.state !== "running" ? b.state : b.isolated ? "isolated" : b.diskFailed ? "disk-failed" : b.underReplicated > 0 ? "urp" : "ok";
      const sig = [st, b.leaders, b.underReplicated, focused, controller, hued].join();
      if (x.sig === sig) continue;
      x.sig = sig;
      x.tile.className = `btile bt-${st}${controller ? " controller" : ""}${hued ? " hued" : ""}`;
      x.tile.style.setProperty("--hue", String(brokerHue(b.id)));
      x.tile.style.setProperty("--lead", String(0.25 + 0.75 * (b.leaders / most)));
      x.tile.textContent = String(b.id);
      x.tile.setAttribute("aria-pressed", String(focused));
      const label = `Broker ${b.id}: ${b.state}${b.isolated ? ", isolated" : ""}${b.diskFailed ? ", disk failed" : ""}${controller ? ", controller" : ""}; leads ${plural(b.leaders, "partition")}, ${b.underReplicated} of them under-replicated` + (focused ? "; shown in detail" : "; click to show its fetchers, purgatory and messages");
      x.tile.setAttribute("aria-label", label);
      x.tile.title = label;
    }
  }

  moveTo(i) {
    this.tiles[this.active].tile.tabIndex = -1;
    this.active = i;
    this.tiles[i].tile.tabIndex = 0;
  }

  // renderTraffic draws fetches per second from each follower (row) to each leader (column),
  // from the change in the engine's run-wide counts since the last sample.
  renderTraffic(view) {
    const tr = view.traffic, n = view.brokers.length, t = view.t;
    if (!tr) return;
    const fetches = new Map(), records = new Map();
    for (let i = 0; i < tr.from.length; i++) {
      const k = tr.from[i] + ">" + tr.to[i];
      fetches.set(k, tr.fetches[i]);
      records.set(k, tr.records[i]);
    }
    const prev = this.prev;
    // Rates over at least half a second of simulated time, so a 100 ms step does not flicker.
    if (prev && t - prev.t >= 500) {
      const dt = (t - prev.t) / 1000;
      this.rates = new Map();
      for (const [k, f] of fetches) {
        this.rates.set(k, { fetches: (f - (prev.fetches.get(k) || 0)) / dt, records: (records.get(k) - (prev.records.get(k) || 0)) / dt });
      }
      this.prev = { t, fetches, records };
    } else if (!prev || t < prev.t) {
      this.prev = { t, fetches, records };
    }
    const cell = Math.max(2, Math.min(8, Math.floor(400 / Math.max(1, n))));
    const size = cell * n;
    const c = this.canvas;
    if (c.width !== size) {
      c.width = size;
      c.height = size;
      c.style.width = c.style.height = `${Math.min(300, n * 24)}px`;
    }
    this.cell = cell;
    const g = c.getContext("2d");
    g.fillStyle = "#f4f4f4";
    g.fillRect(0, 0, size, size);
    let maxF = 0, maxR = 0, totalF = 0, totalR = 0;
    for (const r of this.rates.values()) { maxF = Math.max(maxF, r.fetches); maxR = Math.max(maxR, r.records); totalF += r.fetches; totalR += r.records; }
    for (const [k, r] of this.rates) {
      if (r.fetches <= 0 && r.records <= 0) continue;
      const [from, to] = k.split(">").map(Number);
      // Records flowing: orange, by records/s; only fetching (nothing new): blue, by fetches/s.
      g.fillStyle = r.records > 0
        ? `rgba(213, 94, 0, ${0.3 + 0.7 * r.records / Math.max(1, maxR)})`
        : `rgba(0, 114, 178, ${0.3 + 0.7 * r.fetches / Math.max(1, maxF)})`;
      g.fillRect(to * cell, from * cell, cell, cell);
    }
    g.fillStyle = "rgba(179, 0, 27, 0.18)";
    for (const b of view.brokers) {
      if (b.state === "running" && !b.isolated) continue;
      g.fillRect(0, b.id * cell, size, cell);
      g.fillRect(b.id * cell, 0, cell, size);
    }
    const ax = document.getElementById("ax-x"), ay = document.getElementById("ax-y");
    if (ax) setText(ax, `leader broker → (0 … ${n - 1})`);
    if (ay) setText(ay, `follower broker ↓ (0 … ${n - 1})`);
    setText(this.trafficNote, `${totalF.toFixed(1)} fetches/s, ${fmt(totalR)} records/s between ${this.rates.size} follower → leader pairs` +
      " (rows: follower, columns: leader; orange carries records, blue only polls; red: a broker down or cut off)");
    c.setAttribute("aria-label", this.trafficNote.textContent);
  }

  hover(e) {
    if (!this.cell) return;
    const r = this.canvas.getBoundingClientRect();
    const scale = this.canvas.width / r.width;
    const to = Math.floor(((e.clientX - r.left) * scale) / this.cell), from = Math.floor(((e.clientY - r.top) * scale) / this.cell);
    const x = this.rates.get(from + ">" + to);
    this.canvas.title = x ? `broker ${from} fetches from broker ${to}: ${x.fetches.toFixed(1)} fetches/s, ${fmt(x.records)} records/s`
      : `broker ${from} → broker ${to}: no replica fetching`;
  }
}
