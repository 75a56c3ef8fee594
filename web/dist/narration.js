// The narration: every event's text in an ARIA live log, filterable by category, type and text.

import { el, fmtTime } from "./dom.js";

export const CATEGORIES = [
  { id: "fetch", label: "fetch traffic", on: false, types: ["fetch", "fetch-response", "offsets-for-leader-epoch", "offsets-for-leader-epoch-response", "list-offsets", "list-offsets-response"] },
  { id: "controller", label: "controller and ISR", on: true, types: ["leader-and-isr", "leader-and-isr-response", "stop-replica", "stop-replica-response", "update-metadata", "update-metadata-response", "alter-partition", "alter-partition-response", "controlled-shutdown", "controlled-shutdown-response", "controller-change", "leader-change", "isr-change", "isr-pending", "zk-session-expired", "zk-register", "election-failed"] },
  { id: "log", label: "logs and replicas", on: true, types: ["append", "truncate", "high-watermark", "hw-checkpoint", "become-leader-or-follower", "fetcher", "partition-failed", "log-dir-failure"] },
  { id: "brokers", label: "brokers and network", on: true, types: ["broker-down", "broker-up", "isolate", "heal", "link", "message-dropped", "message-held", "message-released", "config"] },
  { id: "clients", label: "producers and consumers", on: true, types: ["produce", "produce-response", "produce-result", "consume-result"] },
  { id: "checks", label: "violations and checks", on: true, types: ["violation", "expect", "page"] },
];

function categoryOf(type) {
  for (const c of CATEGORIES) if (c.types.includes(type)) return c.id;
  return "other";
}

const KEEP = 2000; // events kept in memory
const SHOW = 300; // events shown

export class Narration {
  // list is the <ol> the events go in; scroller the element that scrolls (the live region).
  constructor({ list, scroller, filters, typeSelect, textInput }) {
    this.list = list;
    this.scroller = scroller || list;
    this.typeSelect = typeSelect;
    this.textInput = textInput;
    this.events = [];
    this.types = new Set();
    this.on = new Set(CATEGORIES.filter((c) => c.on).map((c) => c.id).concat(["other"]));
    for (const c of CATEGORIES) {
      const box = el("input", { type: "checkbox", "data-category": c.id, onchange: (e) => {
        if (e.target.checked) this.on.add(c.id); else this.on.delete(c.id);
        this.rebuild();
      } });
      box.checked = c.on;
      filters.append(el("label", { class: "check" }, box, " " + c.label));
    }
    typeSelect.addEventListener("change", () => this.rebuild());
    textInput.addEventListener("input", () => this.rebuild());
  }

  clear() {
    this.events = [];
    this.list.replaceChildren();
  }

  matches(ev) {
    const type = this.typeSelect.value;
    if (type) { if (ev.type !== type) return false; } else if (!this.on.has(categoryOf(ev.type))) return false;
    const q = this.textInput.value.trim().toLowerCase();
    return !q || ev.text.toLowerCase().includes(q);
  }

  item(ev) {
    const cls = "ev ev-" + categoryOf(ev.type) + (ev.type === "violation" || ev.bad ? " bad" : "");
    return el("li", { class: cls, "data-type": ev.type }, el("time", {}, fmtTime(ev.t)), " ", ev.text);
  }

  // add appends events (from one reply) and shows the ones that pass the filters.
  add(events) {
    if (!events.length) return;
    const frag = document.createDocumentFragment();
    let shown = 0;
    for (const ev of events) {
      this.events.push(ev);
      if (!this.types.has(ev.type)) {
        this.types.add(ev.type);
        const opts = [...this.types].sort();
        const cur = this.typeSelect.value;
        this.typeSelect.replaceChildren(el("option", { value: "" }, "any type"), ...opts.map((t) => el("option", { value: t }, t)));
        this.typeSelect.value = cur;
      }
      if (this.matches(ev)) { frag.append(this.item(ev)); shown++; }
    }
    if (this.events.length > KEEP) this.events.splice(0, this.events.length - KEEP);
    if (!shown) return;
    // Follow the newest entries only when the reader is at the bottom already.
    const sc = this.scroller;
    const follow = sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 40;
    // Keep the newest SHOW; skip the middle of a huge batch so the live region stays readable.
    while (frag.childNodes.length > SHOW) frag.removeChild(frag.firstChild);
    this.list.append(frag);
    while (this.list.childNodes.length > SHOW) this.list.removeChild(this.list.firstChild);
    if (follow) sc.scrollTop = sc.scrollHeight;
  }

  rebuild() {
    const shown = this.events.filter((e) => this.matches(e)).slice(-SHOW);
    this.list.replaceChildren(...shown.map((e) => this.item(e)));
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}
