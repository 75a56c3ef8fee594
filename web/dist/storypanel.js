// The panel beside the stage: the caption of the moment on screen (an ARIA live region, with
// Continue for tour captions), the countdown of what the cluster waits for (view.pending), the
// ZooKeeper line (controller, each broker's session) and the key of leader-epoch colours.

import { el, setText, epochColour, epochTextColour, fmtTime } from "./dom.js";
import { Story } from "./story.js";

export class StoryPanel {
  constructor({ moment, countdown, cont, epochKey, zk }) {
    this.momentEl = moment;
    this.countdownEl = countdown;
    this.cont = cont;
    this.epochKeyEl = epochKey;
    this.zkEl = zk;
    this.lastTick = 0;
    this.epochKey = "";
    this.title = moment.querySelector(".m-title");
    this.text = moment.querySelector(".m-text");
  }

  // moment shows a key moment's caption (null: the moment is over; its caption stays, dimmed,
  // until the next one).
  moment(m, waiting = false) {
    this.cont.hidden = !waiting;
    if (!m) {
      this.momentEl.classList.remove("current");
      return;
    }
    this.momentEl.classList.add("current");
    this.momentEl.dataset.kind = m.kind;
    setText(this.title, `${m.title} · t = ${fmtTime(m.t)}`);
    setText(this.text, m.text);
    if (waiting) this.cont.focus({ preventScroll: true });
  }

  // tick refreshes the countdown (about 10 times a second) and the ZooKeeper line.
  tick(view, t, fastForward) {
    const now = performance.now();
    if (now - this.lastTick < 100) return;
    this.lastTick = now;
    const cds = Story.countdowns(view, t);
    this.countdownEl.dataset.kinds = cds.map((c) => c.kind).join(" ");
    this.countdownEl.classList.toggle("ff", fastForward);
    if (cds.length) {
      const items = cds.map((c) => el("li", { "data-kind": c.kind }, c.text));
      this.countdownEl.replaceChildren(el("span", { class: "cd-h" }, fastForward ? "Fast-forward: waiting for" : "Next deadlines"), el("ul", {}, ...items));
    } else {
      setText(this.countdownEl, fastForward ? "Fast-forward: nothing happens until the next event." : "");
    }
    this.zkLine(view, t);
    this.updateEpochKey(view);
  }

  zkLine(view, t) {
    if (!this.zkEl || !view.brokers) return;
    const pend = Array.isArray(view.pending) ? view.pending : [];
    const c = view.controller || {};
    const parts = view.brokers.slice(0, 12).map((b) => {
      const exp = pend.find((p) => p.broker === b.id && /session|zk|zookeeper/i.test((p.kind || "") + " " + (p.text || "")));
      if (exp) return `broker ${b.id}: expires in ${fmtTime(Math.max(0, Math.round(exp.at - t)))}`;
      return `broker ${b.id}: ${b.registered ? "live" : "no session"}`;
    });
    setText(this.zkEl, `ZooKeeper · controller: ${c.active ? `broker ${c.broker} (controller epoch ${c.epoch})` : "none"} · sessions: ${parts.join(" · ")}${view.brokers.length > 12 ? " …" : ""}`);
  }

  updateEpochKey(view) {
    const epochs = new Set();
    for (const p of view.partitions.slice(0, 16)) for (const r of p.replicas) for (const rec of r.records || []) epochs.add(rec.epoch);
    const list = [...epochs].sort((a, b) => a - b);
    const key = list.join(",");
    if (key === this.epochKey) return;
    this.epochKey = key;
    this.epochKeyEl.replaceChildren(...(list.length ? [document.createTextNode("Leader epoch of each record: ")] : []),
      ...list.map((e) => el("span", { class: "ekey", style: `background:${epochColour(e)};color:${epochTextColour(e)}` }, `epoch ${e}`)));
  }
}
