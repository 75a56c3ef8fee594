// HW and LEO of every replica of one partition over simulated time, drawn with uPlot (pinned in
// web/package.json, copied to vendor/ by `make wasm`). Points are added only when a value changes.

import { tpName } from "./dom.js";

const COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f", "#000000"];

// The minified build is a classic script that defines window.uPlot; it is loaded on first use.
let uPlotPromise = null;
function loadUPlot() {
  if (!uPlotPromise) {
    uPlotPromise = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "vendor/uPlot.iife.min.js";
      s.onload = () => (window.uPlot ? resolve(window.uPlot) : reject(new Error("uPlot missing")));
      s.onerror = () => reject(new Error("vendor/uPlot.iife.min.js did not load"));
      document.head.append(s);
    });
  }
  return uPlotPromise;
}

export class HWChart {
  constructor(container) {
    this.container = container;
    this.tp = null;
    this.brokers = [];
    this.data = null; // [xs, hw0, leo0, hw1, leo1, ...]
    this.plot = null;
    this.lastKey = "";
    this.dirty = false;
    this.failed = null;
  }

  // choose starts a fresh plot for partition tp ({topic, partition}) with the given replica brokers.
  choose(tp, brokers) {
    this.tp = tp;
    this.brokers = brokers;
    this.data = [[], ...brokers.flatMap(() => [[], []])];
    this.lastKey = "";
    this.tail = false;
    this.rebuild();
  }

  async rebuild() {
    let uPlot;
    try {
      uPlot = await loadUPlot();
    } catch (e) {
      this.failed = "the chart library (vendor/uPlot.iife.min.js) did not load: run `make wasm`";
      this.container.textContent = this.failed;
      return;
    }
    if (this.plot) { this.plot.destroy(); this.plot = null; }
    this.container.replaceChildren();
    if (!this.tp) return;
    const series = [{ label: "t (s)" }];
    this.brokers.forEach((b, i) => {
      const c = COLOURS[i % COLOURS.length];
      series.push({ label: `HW ${b}`, stroke: c, width: 2, paths: uPlot.paths.stepped({ align: 1 }) });
      series.push({ label: `LEO ${b}`, stroke: c, width: 1, dash: [4, 4], paths: uPlot.paths.stepped({ align: 1 }) });
    });
    const width = Math.max(240, this.container.clientWidth || 320);
    this.plot = new uPlot({
      width, height: 200, series,
      scales: { x: { time: false } },
      axes: [{ label: "simulated seconds" }, { label: "offset" }],
      legend: { live: false },
    }, this.data, this.container);
    this.plot.root.setAttribute("aria-label", `High watermark and log end offset per replica of ${tpName(this.tp.topic, this.tp.partition)} over time`);
    this.plot.root.setAttribute("role", "img");
  }

  // sample records the partition's values at time t from a view (when they changed).
  sample(view) {
    if (!this.tp || !this.data) return;
    const p = view.partitions.find((q) => q.topic === this.tp.topic && q.partition === this.tp.partition);
    if (!p) return;
    const vals = this.brokers.flatMap((b) => {
      const r = p.replicas.find((x) => x.broker === b);
      return r ? [r.highWatermark, r.logEndOffset] : [null, null];
    });
    const key = vals.join(",");
    const xs = this.data[0];
    const x = view.t / 1000;
    if (key === this.lastKey) {
      // Unchanged: stretch the line to now with one moving tail point.
      if (this.tail && xs.length) xs[xs.length - 1] = x;
      else { xs.push(x); vals.forEach((v, i) => this.data[i + 1].push(v)); this.tail = true; }
      this.dirty = true;
      return;
    }
    this.lastKey = key;
    this.tail = false;
    if (xs.length && xs[xs.length - 1] === x) {
      vals.forEach((v, i) => { this.data[i + 1][xs.length - 1] = v; });
    } else {
      xs.push(x);
      vals.forEach((v, i) => this.data[i + 1].push(v));
    }
    this.dirty = true;
  }

  // cut forgets the samples after time t (after a seek back).
  cut(t) {
    if (!this.data) return;
    const x = t / 1000;
    let n = this.data[0].findIndex((v) => v > x);
    if (n < 0) return;
    for (const s of this.data) s.length = n;
    this.lastKey = "";
    this.tail = false;
    this.dirty = true;
  }

  flush() {
    if (this.dirty && this.plot) { this.plot.setData(this.data); this.dirty = false; }
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: Math.max(240, this.container.clientWidth), height: 200 });
  }
}
