// The cluster drawing: broker cards (state, epochs, controller, fetchers, purgatory, controls),
// partition cards (each replica's log as a row of records coloured by leader epoch, with HW and
// LEO markers) and the overview grid for big clusters. Elements are keyed and kept between
// frames, so controls keep keyboard focus and markers slide with CSS transitions.

import { el, setText, setAttr, epochColour, epochTextColour, tpName, setList, fmtTime, brokerHue, gridMove, plural } from "./dom.js";

// How long truncated records stay visible as ghosts beside their row (wall-clock ms): longer in
// story mode, where the page dwells on the truncation.
const CUT_MS = 2500, CUT_MS_STORY = 7000;

// shortEpoch shows a broker epoch (ZooKeeper's czxid: the session generation in the high 32
// bits) as "#1 (gen 1)"; the full value is on hover and focus.
export function shortEpoch(e) {
  if (typeof e !== "number" || e < 0) return String(e);
  const hi = Math.floor(e / 4294967296), lo = e % 4294967296;
  return hi ? `#${lo} (gen ${hi})` : `#${lo}`;
}

// MAX_CELLS is the most cells the overview grid draws; past it a cell stands for a run of partitions.
const MAX_CELLS = 100_000;
// RANK orders partition states from healthy to offline: a grouped cell shows its worst.
const RANK = { h: 0, u: 1, m: 2, o: 3 };

export class ClusterView {
  // act(action) applies an action; focus(tp) toggles a partition's detail in an overview.
  constructor({ brokers, partitions, overview, overviewGrid, overviewSummary }, { act, toggleFocus, clientOptions, onVisible }) {
    this.onVisible = onVisible || (() => {});
    this.brokersEl = brokers;
    this.partitionsEl = partitions;
    this.overviewEl = overview;
    this.gridEl = overviewGrid;
    this.summaryEl = overviewSummary;
    this.act = act;
    this.toggleFocus = toggleFocus;
    this.clientOptions = clientOptions;
    this.brokerCards = new Map();
    this.partCards = new Map();
    this.gridCells = [];
    this.gridKey = "";
    this.cuts = new Map(); // "topic-partition|broker" → the latest truncate event there
    // Only cards on screen (or near it) are updated each frame; a card coming into view is
    // brought up to date at once. With content-visibility: auto the browser skips the rest too.
    this.cardOf = new WeakMap();
    this.io = typeof IntersectionObserver === "function" ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        const card = this.cardOf.get(e.target);
        if (!card) continue;
        card.visible = e.isIntersecting;
        if (card.visible && card.lastP) { this.updatePartition(card, card.lastP); this.onVisible(); }
      }
    }, { rootMargin: "300px 0px" }) : null;
  }

  reset() {
    this.brokersEl.replaceChildren();
    this.partitionsEl.replaceChildren();
    this.gridEl.replaceChildren();
    this.brokerCards.clear();
    this.partCards.clear();
    this.gridCells = [];
    this.gridKey = "";
    this.cuts.clear();
  }

  // noteEvents keeps what the cards explain from the events: why a replica truncated.
  noteEvents(events) {
    for (const ev of events) if (ev.type === "truncate") this.cuts.set(`${tpName(ev.topic, ev.partition)}|${ev.broker}`, ev);
  }

  render(view, { topics, focus, keep, show = () => true, showBroker = () => true, focusBrokers = [] }) {
    const t0 = performance.now();
    this.focusBrokers = focusBrokers;
    this.renderBrokers(view, showBroker);
    const t1 = performance.now();
    this.renderOverview(view, topics, focus);
    const t2 = performance.now();
    this.renderPartitions(view, keep, show);
    this.perf = { brokers: t1 - t0, overview: t2 - t1, partitions: performance.now() - t2 };
  }

  // visibleTPs lists the partitions whose cards are on screen (or near it).
  visibleTPs() {
    const out = [];
    for (const c of this.partCards.values()) if (c.visible && c.lastP) out.push({ topic: c.lastP.topic, partition: c.lastP.partition });
    return out;
  }

  // ---- brokers ----

  // renderBrokers draws a card per broker that showBroker accepts (a large overview shows only
  // the brokers the page drills into).
  renderBrokers(view, showBroker) {
    const shown = view.brokers.filter((b) => showBroker(b.id));
    this.brokersEl.classList.toggle("compact", shown.length > 12);
    // Up to six brokers (and the clients) stand in one row, so messages fly in lanes above them.
    this.brokersEl.classList.toggle("row", shown.length <= 6);
    this.brokersEl.style.setProperty("--cards", String(shown.length + 1));
    const ids = new Set();
    const clients = this.clientCard();
    ids.add(-1);
    this.updateClients(clients, view);
    const hidden = view.brokers.length - shown.length;
    if (!this.hiddenNote) this.hiddenNote = el("p", { class: "hidden-brokers legend" });
    setText(this.hiddenNote, !hidden ? "" : shown.length
      ? `${hidden} more broker${hidden === 1 ? "" : "s"} in the overview above: click a broker tile or a partition there to bring its brokers here.`
      : `The ${hidden} brokers are in the overview above: click a broker tile or a partition there to bring its brokers here.`);
    if (hidden && !this.hiddenNote.isConnected) this.brokersEl.append(this.hiddenNote);
    if (!hidden) this.hiddenNote.remove();
    for (const b of shown) {
      ids.add(b.id);
      let card = this.brokerCards.get(b.id);
      if (!card) {
        card = this.brokerCard(b.id, view.brokers.length);
        this.brokerCards.set(b.id, card);
        this.brokersEl.insertBefore(card.root, this.hiddenNote.isConnected ? this.hiddenNote : null);
      }
      this.updateBroker(card, b, view);
    }
    for (const [id, card] of this.brokerCards) {
      if (!ids.has(id)) { card.root.remove(); this.brokerCards.delete(id); }
    }
  }

  clientCard() {
    let card = this.brokerCards.get(-1);
    if (card) return card;
    const info = el("p", { class: "binfo" });
    const root = el("article", { class: "broker clients", "data-broker": "-1", "aria-label": "Clients" },
      el("h3", {}, "Clients"), info);
    card = { root, info };
    this.brokerCards.set(-1, card);
    this.brokersEl.prepend(root);
    return card;
  }

  updateClients(card, view) {
    // Counts over the whole run (the view lists only the latest operations).
    const c = view.clients || { open: 0, acked: 0, failed: 0, consumes: 0 };
    setText(card.info, `producer: ${c.open} in progress, ${c.acked} acked, ${c.failed} failed · consumer: ${c.consumes} reads`);
  }

  brokerCard(id, total) {
    const title = el("h3", {}, `Broker ${id}`);
    const badges = el("span", { class: "badges" });
    const info = el("p", { class: "binfo" });
    const fetchers = el("div", { class: "fetchers" });
    const purgatory = el("div", { class: "purgatory" });
    // Fetchers and purgatory fold away (closed by default in clusters of more than six brokers).
    const summary = el("summary", {}, "fetchers and purgatory");
    const more = el("details", { class: "more" }, summary, fetchers, purgatory);
    more.open = total <= 6;
    const btn = (label, aria, action) => el("button", { type: "button", "aria-label": aria, onclick: () => this.act(action) }, label);
    const buttons = {
      kill: btn("Kill", `Kill broker ${id}`, { do: "kill", broker: id }),
      power: btn("Power loss", `Power loss on broker ${id}`, { do: "kill", broker: id, loseUnflushed: true }),
      restart: btn("Restart", `Restart broker ${id}`, { do: "restart", broker: id }),
      shutdown: btn("Shut down", `Shut down broker ${id} (controlled shutdown)`, { do: "shutdown", broker: id }),
      isolate: btn("Isolate", `Isolate broker ${id}`, { do: "isolate", broker: id }),
      heal: btn("Heal", `Heal broker ${id}`, { do: "heal", broker: id }),
    };
    const controls = el("div", { class: "bctl", role: "group", "aria-label": `Broker ${id} controls` }, ...Object.values(buttons));
    const root = el("article", { class: "broker", "data-broker": id, "aria-label": `Broker ${id}` },
      el("header", {}, title, badges), info, more, controls);
    return { root, badges, info, fetchers, purgatory, summary, more, buttons, sig: "", focused: false };
  }

  updateBroker(card, b, view) {
    const isCtrl = view.controller.active && view.controller.broker === b.id;
    // A broker drilled into in the overview opens its fetchers and purgatory.
    const focused = (this.focusBrokers || []).includes(b.id);
    if (focused && !card.focused) card.more.open = true;
    card.focused = focused;
    card.root.classList.toggle("focused", focused);
    setAttr(card.root, "data-state", b.state);
    card.root.classList.toggle("isolated", b.isolated);
    card.root.classList.toggle("controller", isCtrl);
    const sig = JSON.stringify([b, isCtrl, view.controller.epoch]);
    if (sig === card.sig) return;
    card.sig = sig;
    const badges = [];
    if (isCtrl) badges.push(el("span", { class: "badge ctrl", title: "the active controller" }, `controller · epoch ${view.controller.epoch}`));
    if (b.isolated) badges.push(el("span", { class: "badge iso" }, "isolated"));
    if (b.diskFailed) badges.push(el("span", { class: "badge down" }, "disk failed"));
    if (b.state !== "running") badges.push(el("span", { class: "badge " + (b.state === "dead" ? "down" : "warn") }, b.state === "dead" ? "down" : b.state));
    card.badges.replaceChildren(...badges);
    const infoText = `${b.state} · broker epoch ${b.brokerEpoch}${b.registered ? "" : " (not registered)"} · leads ${b.leaders} · knows controller epoch ${b.controllerEpoch}`;
    card.info.replaceChildren(`${b.state} · `, el("span", { class: "zk" + (b.registered ? "" : " gone") }, b.registered ? "in ZooKeeper" : "not in ZooKeeper"),
      " · broker epoch ", el("abbr", { tabindex: "0", title: `broker epoch ${b.brokerEpoch} (ZooKeeper registration czxid)` }, shortEpoch(b.brokerEpoch)),
      ` · leads ${b.leaders}`, el("span", { class: "num" }, ` · knows controller epoch ${b.controllerEpoch}`));
    card.root.querySelector("h3").title = infoText; // shown on hover when compact cards hide it

    // In an overview the engine lists only the focused partitions and gives the count.
    const fl = (b.fetchers || []).map((f) => {
      const parts = f.partitions || [];
      const n = f.count ?? parts.length;
      const shown = parts.slice(0, 3).map((p) => `${tpName(p.topic, p.partition)}@${p.fetchOffset} (${p.state}${p.state === "delayed" ? " until " + fmtTime(p.delayedUntil) : ""}, epoch ${p.leaderEpoch})`);
      if (n > shown.length) shown.push(`${shown.length ? "… " : ""}${n - shown.length} ${shown.length ? "more" : "partitions"}`);
      // A dead thread (before Kafka 2.3, an error processing a partition's data ends it) stays
      // its broker's thread for that leader: its partitions wait until it is replaced.
      const dead = f.dead ? [el("span", { class: "badge down", title: "the thread died on an error processing fetched data (a KafkaException, before Kafka 2.3); its partitions are not fetched until it is replaced" }, "dead"), " "] : [];
      return el("li", { title: parts.map((p) => `${tpName(p.topic, p.partition)}@${p.fetchOffset} ${p.state}`).join(", ") },
        ...dead, `fetcher ${f.id} → leader ${f.leader}${n > 3 && parts.length ? ` (${n} partitions)` : ""}: `, shown.join(", ") || "idle");
    });
    card.fetchers.replaceChildren(...(fl.length ? [el("h4", {}, "Fetchers"), el("ul", {}, ...fl)] : []));

    const tps = (list, count) => {
      const names = (list || []).map((t) => tpName(t.topic, t.partition));
      const n = count ?? names.length;
      if (!names.length) return `${n} partition${n === 1 ? "" : "s"}`;
      return n > 3 ? `${names.slice(0, 3).join(", ")} … ${n - Math.min(3, names.length)} more` : names.join(", ");
    };
    const parked = [
      ...(b.parkedFetches || []).map((p) => `fetch #${p.message} from ${p.from === -1 ? "consumer" : "broker " + p.from} (${p.session ? `session ${p.session}, ` : ""}${tps(p.partitions, p.count)}) until ${fmtTime(p.deadline)}`),
      ...(b.parkedProduces || []).map((p) => `produce #${p.message} (${tps(p.partitions, p.count)}) waits for HW ${p.requiredOffset} until ${fmtTime(p.deadline)}`),
    ];
    // An overview lists the parked requests of focused brokers and partitions only; the counts
    // are of all of them.
    const inPurgatory = (b.parkedFetchCount ?? 0) + (b.parkedProduceCount ?? 0) || parked.length;
    const items = parked.slice(0, 4).map((x) => el("li", {}, x));
    if (inPurgatory > items.length) items.push(el("li", {}, items.length ? `… ${inPurgatory - items.length} more` : `… ${plural(inPurgatory, "request")} (click the broker in the overview to list them)`));
    card.purgatory.replaceChildren(...(items.length ? [el("h4", {}, `Purgatory (${inPurgatory})`), el("ul", {}, ...items)] : []));
    setText(card.summary, `${fl.length} fetcher${fl.length === 1 ? "" : "s"} · ${inPurgatory} in purgatory`);

    const dead = b.state === "dead";
    card.buttons.kill.disabled = dead;
    card.buttons.power.disabled = dead;
    card.buttons.restart.disabled = !dead;
    card.buttons.shutdown.disabled = b.state !== "running";
    card.buttons.isolate.disabled = b.isolated;
    card.buttons.heal.disabled = !b.isolated;
  }

  // ---- overview ----

  renderOverview(view, topics, focus) {
    const states = view.states || "";
    this.overviewEl.hidden = !states;
    if (!states) return;
    const s = view.summary;
    setText(this.summaryEl, `(${s.partitions} partitions: ${s.underReplicated} under-replicated, ${s.underMinIsr} under min ISR, ${s.offline} offline)`);
    // A partition's name from its id (its place in topic order). Not a list of every name: at a
    // million partitions, building one each frame kept the page too busy to take a click.
    const starts = [];
    let total = 0;
    for (const t of topics) {
      starts.push(total);
      total += t.count;
    }
    const nameOf = (i) => {
      for (let k = topics.length - 1; k >= 0; k--) {
        if (i >= starts[k] && i - starts[k] < topics[k].count) return { topic: topics[k].name, partition: i - starts[k] };
      }
      return { topic: "?", partition: i };
    };
    // Past MAX_CELLS partitions a cell stands for a run of `per` partitions in id order and shows
    // the worst state among them (a million buttons would take the page a minute to build);
    // clicking it shows that worst partition in detail.
    const per = Math.max(1, Math.ceil(states.length / MAX_CELLS));
    const count = Math.ceil(states.length / per);
    const key = total + ":" + states.length;
    if (key !== this.gridKey) {
      this.gridKey = key;
      this.gridStates = "";
      this.gridCells = [];
      this.gridPer = per;
      const frag = document.createDocumentFragment();
      for (let i = 0; i < count; i++) {
        const c = { b: null, tp: nameOf(i * per), st: "" };
        c.b = el("button", { type: "button", class: "cell", "aria-pressed": "false", onclick: () => { this.setActive(i); this.toggleFocus(c.tp); } });
        c.b.dataset.tp = tpName(c.tp.topic, c.tp.partition);
        if (per > 1) c.b.dataset.count = String(Math.min(per, states.length - i * per));
        this.gridCells.push(c);
        frag.append(c.b);
      }
      this.gridEl.replaceChildren(frag);
      this.gridActive = 0;
      if (this.gridCells.length) this.gridCells[0].b.tabIndex = 0;
      for (let i = 1; i < this.gridCells.length; i++) this.gridCells[i].b.tabIndex = -1;
      if (!this.gridKeys) {
        this.gridKeys = true;
        this.gridEl.addEventListener("keydown", (e) => this.onGridKey(e));
      }
    }
    const label = { h: "healthy", u: "under-replicated", m: "under min.insync.replicas", o: "offline" };
    const focused = new Set(focus.map((f) => tpName(f.topic, f.partition)));
    // Colour by leader when the view has them (two base-36 digits per partition, "--" none).
    const leaders = view.leaders || "";
    const byLeader = leaders.length === 2 * states.length;
    this.gridEl.classList.toggle("by-leader", byLeader);
    // Touch only the cells whose letters changed, unless the focus or the colouring changed
    // (100,000 cells).
    const focusKey = [...focused].join() + byLeader;
    const old = this.gridStates || "", oldLeaders = this.gridLeaders || "";
    const full = focusKey !== this.gridFocusKey || old.length !== states.length || (byLeader && oldLeaders.length !== leaders.length);
    this.gridFocusKey = focusKey;
    this.gridStates = states;
    this.gridLeaders = leaders;
    for (let i = 0; i < this.gridCells.length; i++) {
      const lo = i * per, hi = Math.min(lo + per, states.length);
      if (!full) {
        let same = true;
        for (let j = lo; j < hi && same; j++) {
          same = states.charCodeAt(j) === old.charCodeAt(j) &&
            (!byLeader || (leaders.charCodeAt(2 * j) === oldLeaders.charCodeAt(2 * j) && leaders.charCodeAt(2 * j + 1) === oldLeaders.charCodeAt(2 * j + 1)));
        }
        if (same) continue;
      }
      const c = this.gridCells[i];
      // The cell's partition: the worst of its run (the first one when all are alike).
      let at = lo, pressed = false;
      for (let j = lo; j < hi; j++) {
        if (RANK[states[j]] > RANK[states[at]]) at = j;
        if (per > 1 && focused.has(tpName(nameOf(j).topic, nameOf(j).partition))) pressed = true;
      }
      c.tp = nameOf(at);
      const tp = tpName(c.tp.topic, c.tp.partition);
      if (per === 1) pressed = focused.has(tp);
      const st = states[at] || "h";
      const lead = byLeader ? leaders.slice(2 * at, 2 * at + 2) : "";
      const sig = st + lead + pressed + tp;
      if (c.st === sig) continue;
      c.st = sig;
      const id = lead && lead !== "--" ? parseInt(lead, 36) : -1;
      // A cell that just changed state or leader flashes, so a failover shows where it struck.
      if (!full && c.b.animate && !document.body.classList.contains("reduced")) {
        c.b.animate([{ boxShadow: "0 0 0 3px #14263d" }, { boxShadow: "0 0 0 0 transparent" }], 1500);
      }
      c.b.className = "cell st-" + st + (id >= 0 ? " lead" : "");
      c.b.style.setProperty("--hue", id >= 0 ? String(brokerHue(id)) : "");
      c.b.setAttribute("aria-pressed", String(pressed));
      const leaderText = byLeader ? (id >= 0 ? `, leader broker ${id}` : ", no leader") : "";
      const first = tpName(nameOf(lo).topic, nameOf(lo).partition), last = tpName(nameOf(hi - 1).topic, nameOf(hi - 1).partition);
      const what = per === 1 ? `${tp}: ${label[st] || st}` : `${first} to ${last} (${hi - lo} partitions): ${st === "h" ? "all healthy" : `${tp} ${label[st] || st}`}`;
      c.b.setAttribute("aria-label", `${what}${leaderText}${pressed ? ", shown in detail" : ""}`);
      c.b.title = c.b.getAttribute("aria-label");
    }
  }

  // onGridKey moves through the overview with the arrow keys, Home and End: the grid is one tab
  // stop (a roving tabindex), not a thousand.
  onGridKey(e) {
    const i = gridMove(e.key, this.gridCells.length, this.gridActive || 0, (j) => this.gridCells[j].b);
    if (i < 0) return;
    e.preventDefault();
    this.setActive(i);
    this.gridCells[i].b.focus();
  }

  setActive(i) {
    const old = this.gridCells[this.gridActive || 0];
    if (old) old.b.tabIndex = -1;
    this.gridActive = i;
    this.gridCells[i].b.tabIndex = 0;
  }

  // ---- partitions ----

  // renderPartitions updates the cards of view.partitions; with keep, cards missing from this view
  // stay as they were (they are off screen and not asked for).
  renderPartitions(view, keep, show) {
    const seen = new Set();
    // Read layout once per frame: reading it per card after writes would force a layout each time.
    const width = this.partitionsEl.clientWidth || 600;
    const cell = parseFloat(getComputedStyle(this.partitionsEl).getPropertyValue("--cell")) || 18;
    this.layout = { width: width - 30, cell };
    for (const p of view.partitions) {
      if (!show(p)) continue;
      const key = tpName(p.topic, p.partition);
      seen.add(key);
      let card = this.partCards.get(key);
      if (!card) {
        card = this.partitionCard(p);
        this.partCards.set(key, card);
        this.partitionsEl.append(card.root);
        this.cardOf.set(card.root, card);
        if (this.io) this.io.observe(card.root);
        this.updatePartition(card, p);
      }
      card.lastP = p;
      if (card.visible || !this.io) this.updatePartition(card, p);
    }
    for (const [key, card] of this.partCards) {
      if (!seen.has(key) && !keep) { if (this.io) this.io.unobserve(card.root); card.root.remove(); this.partCards.delete(key); }
    }
  }

  partitionCard(p) {
    const name = tpName(p.topic, p.partition);
    const tp = { topic: p.topic, partition: p.partition };
    const title = el("h3", {}, name);
    const info = el("p", { class: "pinfo" });
    const rows = el("div", { class: "replicas" });
    const choose = el("select", { "aria-label": `Broker to make leader of ${name}` });
    const btn = (label, aria, fn) => el("button", { type: "button", "aria-label": aria, onclick: fn }, label);
    const controls = el("div", { class: "pctl", role: "group", "aria-label": `${name} controls` },
      btn("Produce", `Produce to ${name}`, () => {
        const o = this.clientOptions();
        this.act({ do: "produce", ...tp, count: o.count, acks: o.acks });
      }),
      btn("Consume", `Consume from ${name}`, () => this.act({ do: "consume", ...tp })),
      btn("Preferred election", `Preferred election for ${name}`, () => this.act({ do: "elect", ...tp })),
      el("span", { class: "choose" }, choose,
        btn("Elect", `Elect the chosen broker leader of ${name}`, () => {
          if (choose.value === "") { this.act(null, `choose a broker to elect for ${name} first`); return; }
          this.act({ do: "elect", ...tp, broker: Number(choose.value) });
        })),
      btn("Unclean election", `Unclean election for ${name}`, () => {
        /** @type {{do: string, topic: string, partition: number, unclean: boolean, broker?: number}} */
        const a = { do: "elect", ...tp, unclean: true };
        if (choose.value !== "") a.broker = Number(choose.value);
        this.act(a);
      }),
    );
    const leaderMark = el("div", { class: "leader-mark", "aria-hidden": "true", title: "the leader" }, "★");
    rows.append(leaderMark);
    const lost = el("div", { class: "lostrow", hidden: true });
    const root = el("article", { class: "partition", "data-tp": name, "aria-label": `Partition ${name}`, tabindex: "-1" },
      el("header", {}, title, info), rows, lost, controls);
    const card = { root, info, rows, lost, leaderMark, choose, replicaRows: new Map(), chooseKey: "", visible: false, lastP: null,
      markRow: null, markPending: false, onScreen: false };
    root.addEventListener("contentvisibilityautostatechange", (/** @type {any} */ e) => {
      card.onScreen = !e.skipped;
      if (card.onScreen) this.placePendingMark(card);
    });
    return card;
  }

  updatePartition(card, p) {
    // A leader or ISR change flashes the card's header, so it is seen as it happens.
    const change = `${p.leader}|${p.leaderEpoch}|${p.isr.join(",")}`;
    if (card.change !== undefined && card.change !== change) {
      card.root.classList.remove("changed");
      void card.root.offsetWidth; // restart the animation
      card.root.classList.add("changed");
    }
    card.change = change;
    setAttr(card.root, "data-leader", p.leader);
    setAttr(card.root, "data-isr", p.isr.join(","));
    setAttr(card.root, "data-state", p.state);
    setAttr(card.root, "data-leader-epoch", p.leaderEpoch);
    setText(card.info, `leader ${p.leader < 0 ? "none" : "broker " + p.leader} · leader epoch ${p.leaderEpoch} · partition epoch ${p.partitionEpoch} · ISR ${setList(p.isr)} · ${p.state}${p.recovering ? " · recovering (unclean)" : ""} · ${p.acked} acked`);
    const chooseKey = p.assignment.join(",");
    if (chooseKey !== card.chooseKey) {
      card.chooseKey = chooseKey;
      card.choose.replaceChildren(el("option", { value: "" }, "choose a broker…"),
        ...[...p.assignment].sort((a, b) => a - b).map((b) => el("option", { value: b }, `broker ${b}`)));
    }
    // One window of offsets for every row, so offsets line up.
    let maxLeo = 0, minStart = Infinity;
    for (const r of p.replicas) { maxLeo = Math.max(maxLeo, r.logEndOffset); minStart = Math.min(minStart, r.logStartOffset); }
    const { width, cell } = this.layout;
    const cap = Math.max(8, Math.floor((width - 150) / cell) - 2);
    const from = Math.max(minStart === Infinity ? 0 : minStart, maxLeo + 1 - cap);
    const seen = new Set();
    const preferred = p.assignment[0];
    const verdicts = new Map((p.verdicts || []).map((x) => [x.id, x]));
    const story = document.body.classList.contains("story");
    const ids = cell >= 24;
    for (const r of p.replicas) {
      seen.add(r.broker);
      let row = card.replicaRows.get(r.broker);
      if (!row) {
        row = replicaRow(r.broker, tpName(p.topic, p.partition));
        card.replicaRows.set(r.broker, row);
        card.rows.append(row.root);
      }
      const cut = this.cuts.get(`${tpName(p.topic, p.partition)}|${r.broker}`);
      updateReplica(row, r, p, { from, cell, preferred, verdicts, ids, cutMs: story ? CUT_MS_STORY : CUT_MS, cut });
    }
    for (const [b, row] of card.replicaRows) if (!seen.has(b)) { row.root.remove(); card.replicaRows.delete(b); }
    // The leader's star slides to the leader's row on an election.
    const lrow = card.replicaRows.get(p.leader);
    card.leaderMark.hidden = !lrow;
    // Measured after layout (the rows may just have grown a cut strip), for every card in one
    // animation frame: all reads first, then all writes, so a thousand cards cost one layout
    // instead of one each.
    if (lrow) this.placeLeaderMark(card, lrow);
    updateLost(card, p, { from, cell, ids });
  }

  /** placeLeaderMark queues the card's ★ to be moved to its leader's row in the next frame. @param {any} card @param {any} lrow */
  placeLeaderMark(card, lrow) {
    if (!this.marks) this.marks = new Map();
    const first = this.marks.size === 0;
    this.marks.set(card, lrow);
    if (!first) return;
    requestAnimationFrame(() => {
      const marks = this.marks;
      this.marks = new Map();
      // Only cards on screen are measured: measuring one that content-visibility skips (or
      // asking checkVisibility) lays it out alone, and a thousand such reads took nine seconds.
      // A skipped card's star is placed when the card comes into view (its
      // contentvisibilityautostatechange, which also keeps card.onScreen), without sliding.
      const shown = [];
      for (const [c, row] of marks) {
        c.markRow = row;
        if (c.onScreen) shown.push(c);
        else c.markPending = true;
      }
      const tops = shown.map((c) => c.markRow.root.getBoundingClientRect().top - c.rows.getBoundingClientRect().top);
      shown.forEach((c, i) => { c.markPending = false; c.leaderMark.style.transform = `translateY(${Math.round(tops[i]) + 4}px)`; });
    });
  }

  /** placePendingMark puts a card's ★ at its leader's row at once, as the card comes into view. @param {any} card */
  placePendingMark(card) {
    if (!card.markPending || !card.markRow) return;
    card.markPending = false;
    const top = card.markRow.root.getBoundingClientRect().top - card.rows.getBoundingClientRect().top;
    card.leaderMark.style.transition = "none";
    card.leaderMark.style.transform = `translateY(${Math.round(top) + 4}px)`;
    requestAnimationFrame(() => { card.leaderMark.style.transition = ""; });
  }
}

function replicaRow(broker, name) {
  const label = el("div", { class: "rlabel" });
  const cells = el("div", { class: "cells" });
  const hw = el("div", { class: "marker hw", title: "high watermark" }, el("span", {}, "HW"));
  const leo = el("div", { class: "marker leo", title: "log end offset" }, el("span", {}, "LEO"));
  const log = el("div", { class: "log", role: "img" }, cells, hw, leo);
  const info = el("div", { class: "rinfo" });
  const cutrow = el("div", { class: "cutrow", hidden: true });
  const root = el("div", { class: "replica", "data-broker": broker }, label, log, cutrow, info);
  return { root, label, log, cells, cutrow, hw, leo, info, name, prev: null, ghosts: [], sig: "" };
}

// updateLost marks the acknowledged records the engine's verdicts call lost where they were (a
// row under the replicas, at their offsets).
function updateLost(card, p, { from, cell, ids }) {
  const lost = (p.verdicts || []).filter((x) => x.verdict === "lost");
  const key = lost.map((x) => x.id + "@" + x.offset).join() + "|" + from + "|" + cell;
  if (key === card.lostKey) return;
  card.lostKey = key;
  card.lost.hidden = !lost.length;
  if (!lost.length) { card.lost.replaceChildren(); return; }
  const cells = el("div", { class: "cells" }, ...lost.filter((x) => x.offset >= from).map((x) => el("span", {
    class: "rec lost", style: `left:${(x.offset - from) * cell}px`, title: `record m${x.id} at offset ${x.offset}: acknowledged (acks=${x.acks}) and lost — ${x.why || ""}`,
  }, ids ? `m${x.id}` : "✗")));
  card.lost.replaceChildren(el("span", { class: "rlabel bad" }, "lost (acknowledged)"), el("div", { class: "log lostlog" }, cells),
    el("div", { class: "rinfo" }, lost.map((x) => `m${x.id} at offset ${x.offset}: ${x.why || "no longer in the leader's log"}`).join(" · ")));
}

function updateReplica(row, r, p, { from, cell, preferred, verdicts, ids, cutMs, cut }) {
  const inIsr = p.isr.includes(r.broker);
  const isLeader = p.leader === r.broker;
  row.root.className = `replica role-${r.role} ${inIsr ? "insync" : "outsync"}${isLeader ? " leader" : ""}`;
  const tags = [r.role];
  if (r.broker === preferred) tags.push("preferred");
  if (!inIsr) tags.push("out of sync");
  setText(row.label, `broker ${r.broker} · ${tags.join(" · ")}`);
  const CUT_MS = cutMs;

  // Records cut since the last frame stay briefly as ghosts, so a truncation is seen before it goes.
  const now = performance.now();
  const recs = r.records || [];
  if (row.prev) {
    const prev = row.prev;
    let diverge = Math.min(prev.start + prev.records.length, r.logStartOffset + recs.length);
    for (let o = Math.max(prev.start, r.logStartOffset); o < diverge; o++) {
      if (prev.records[o - prev.start].id !== recs[o - r.logStartOffset].id) { diverge = o; break; }
    }
    for (let o = diverge; o < prev.start + prev.records.length; o++) {
      const rec = prev.records[o - prev.start];
      if (!row.ghosts.some((g) => g.offset === o && g.rec.id === rec.id)) row.ghosts.push({ offset: o, rec, until: now + CUT_MS });
    }
  }
  row.ghosts = row.ghosts.filter((g) => g.until > now);
  row.prev = { start: r.logStartOffset, records: recs };

  const vkey = verdicts.size ? recs.map((x) => (verdicts.get(x.id) || {}).verdict || "").join("") : "";
  const sig = [from, cell, r.logStartOffset, recs.length, recs.length ? recs[recs.length - 1].id : 0, r.highWatermark, row.ghosts.length, vkey, ids].join(",");
  if (sig !== row.sig) {
    row.sig = sig;
    const frag = document.createDocumentFragment();
    const start = Math.max(from, r.logStartOffset);
    for (let o = start; o < r.logStartOffset + recs.length; o++) {
      const rec = recs[o - r.logStartOffset];
      const c = document.createElement("span");
      if (rec.gap) {
        // No record here: a truncation inside a batch cut the whole batch but set the log end to
        // the offset asked for (Kafka's LogSegment.truncateTo), and reads skip the gap.
        c.className = "rec gap";
        c.style.left = `${(o - from) * cell}px`;
        c.title = `offset ${o}: no record (a truncation inside a batch cut the whole batch; the log end offset stayed past it)`;
        frag.append(c);
        continue;
      }
      const v = verdicts.get(rec.id);
      c.className = (o < r.highWatermark ? "rec" : "rec uncommitted") + (v ? " v-" + v.verdict : "");
      c.style.left = `${(o - from) * cell}px`;
      c.style.background = epochColour(rec.epoch);
      c.style.color = epochTextColour(rec.epoch);
      c.textContent = ids ? `m${rec.id}` : rec.epoch;
      c.title = `record m${rec.id} · offset ${o} · leader epoch ${rec.epoch}${o < r.highWatermark ? "" : " · above the high watermark"}${v ? ` · ${v.verdict}${v.why ? ": " + v.why : ""}` : ""}`;
      frag.append(c);
    }
    if (from > 0) frag.prepend(el("span", { class: "from" }, `…${from}`));
    row.cells.replaceChildren(frag);
    // Cut records lift off the row into a strip of their own under it, at their offsets, so they
    // never cover the records fetched in their place.
    const ghosts = row.ghosts.filter((g) => g.offset >= from);
    row.cutrow.hidden = !ghosts.length;
    row.root.classList.toggle("cutting", ghosts.length > 0);
    if (!ghosts.length) row.cutrow.replaceChildren();
    if (ghosts.length) {
      const gcells = ghosts.map((g) => el("span", {
        class: "rec cut", style: `left:${(g.offset - from) * cell}px;background:${epochColour(g.rec.epoch)};color:${epochTextColour(g.rec.epoch)}`,
        title: `offset ${g.offset}: record m${g.rec.id} (epoch ${g.rec.epoch}) truncated`,
      }, ids ? `m${g.rec.id}` : String(g.rec.epoch)));
      const lo = Math.min(...ghosts.map((g) => g.offset)), hi = Math.max(...ghosts.map((g) => g.offset));
      let why = cut && cut.reason ? cut.reason : "";
      const d = /diverging epoch (\d+) ends at offset (\d+)/.exec(why);
      if (d) why = `leader's epoch ${d[1]} ended at ${d[2]}`;
      const caption = `✂ broker ${r.broker} cut ${lo === hi ? "offset " + lo : `offsets ${lo}–${hi}`} (${ghosts.length} record${ghosts.length === 1 ? "" : "s"})${why ? ": " + why : ""}`;
      const gw = (hi - from + 1) * cell + 8;
      row.cutrow.replaceChildren(el("div", { class: "cells ghosts", style: `width:${gw}px` }, ...gcells),
        el("span", { class: "cut-caption" }, caption));
    }
    row.cells.style.width = `${Math.max(0, r.logEndOffset - from) * cell}px`;
  }
  row.hw.style.transform = `translateX(${(Math.max(r.highWatermark, from) - from) * cell}px)`;
  row.leo.style.transform = `translateX(${(Math.max(r.logEndOffset, from) - from) * cell}px)`;
  row.log.setAttribute("aria-label", `${row.name} on broker ${r.broker}: ${plural(r.logEndOffset - r.logStartOffset, "record")}, log end offset ${r.logEndOffset}, high watermark ${r.highWatermark}`);

  const cache = (r.epochCache || []).map((e) => `${e.epoch}@${e.startOffset}`).join(" ");
  let extra = "";
  if (r.role === "leader") {
    extra = ` · leader's ISR ${setList(r.isr)} · maximal ISR ${setList(r.maximalIsr)}${r.pending ? " · " + r.pending + " pending" : ""}`;
    if (r.followers && r.followers.length) {
      extra += " · followers: " + r.followers.map((f) => `${f.broker} LEO ${f.logEndOffset < 0 ? "unknown" : f.logEndOffset}${f.caughtUp ? " caught up" : f.lastCaughtUpTime < 0 ? " never caught up" : " last caught up at " + fmtTime(f.lastCaughtUpTime)}`).join(", ");
    }
  }
  setText(row.info, `LEO ${r.logEndOffset} · HW ${r.highWatermark} · epoch ${r.leaderEpoch} · epoch cache ${cache || "empty"} · flushed to ${r.recoveryPoint} · HW checkpoint ${r.hwCheckpoint}${extra}`);
}
