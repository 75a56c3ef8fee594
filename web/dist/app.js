// The page's controller: picks a transport (in-page worker by default, the native server's
// websocket with ?backend=native), loads presets, paces simulated time with
// requestAnimationFrame, turns clicks into protocol requests and hands every reply to the
// renderers. All requests go through one queue, so replies arrive in order.

import { WorkerTransport, WebSocketTransport, wsURL } from "./transport.js";
import { readConfig, chooseBackend, showBackend } from "./backend.js";
import { ClusterView } from "./cluster.js";
import { OverviewPanel } from "./overview.js";
import { Wires, describeMessage, legend } from "./wires.js";
import { HWChart } from "./chart.js";
import { Narration } from "./narration.js";
import { Story, moment } from "./story.js";
import { StoryPanel } from "./storypanel.js";
import { el, fmtTime, tpName, prefersReducedMotion, brokerHue, inlineMarkdown } from "./dom.js";
import { applyPatch, normalize } from "./viewpatch.js";
import { ViolationBanner } from "./violations.js";
import { newClusterScenario } from "./forms.js";

/** @type {(id: string) => any} the page's elements by id (any: each is a known input, select…) */
const $ = (id) => document.getElementById(id);

// Kafka's defaults for the settings the page shows (the engine uses the same ones).
const DEFAULTS = {
  "min.insync.replicas": 1,
  "unclean.leader.election.enable": false,
  "replica.lag.time.max.ms": 30000,
  "replica.fetch.wait.max.ms": 500,
  "zookeeper.session.timeout.ms": 18000,
  "sim.network.latency.ms": 1,
};
// Clusters with more partitions than detailLimit get the overview grid (?detail=N changes it).
// "Draw every partition" (?detail=all) keeps a card for each partition but asks the engine for
// the detail of only the cards on screen (view.focus), so big clusters stay cheap.
const DETAIL_PARAM = new URLSearchParams(location.search).get("detail");
// "Draw every partition" builds a card per partition from one whole view: past this many the
// page would hold hundreds of MB, so the overview grid is the way in.
const DETAIL_ALL_MAX = 5000;
// delta: after the first whole view, replies carry only what changed (viewPatch, docs/protocol.md).
const VIEW_OPTS = { detailLimit: Number(DETAIL_PARAM) || 64, maxMessages: 300, delta: true };
// Events per reply: the narration shows the newest 300, and each event may carry its message.
const MAX_EVENTS = 1000;

const state = {
  transport: null,
  view: null,
  t: 0,
  next: -1,
  timeline: null,
  scenario: null, // the loaded scenario (JSON object)
  topics: [],
  focus: [],
  focusBrokers: [], // brokers drilled into in an overview
  gridColour: "state", // the overview grid's colouring: state, or leader broker
  viewSeq: 0, // the sequence number of state.view (a patch names the view it applies to)
  playing: false,
  speed: 1, // simulated ms per wall ms (at the real-time speeds)
  story: true, // story speed: visual time (story.js); the default for presets and embeds
  displayT: 0,
  lastFrame: 0,
  busy: false,
  queue: Promise.resolve(),
  chartKey: "",
  config: {},
  firstFrameAt: 0,
  presets: [],
  expectTimes: [], // times of the loaded scenario's expect steps still in force
  presetObjects: {}, // preset file → the scenario object last loaded from it
  perf: { request: 0, render: 0 }, // ms of the last request round trip and the last render
};
window.highwater = state; // for the browser tests and the curious (state.api.run sends a request)

// ---- requests ----

// call sends one request after every earlier one has been answered.
function call(req) {
  const p = state.queue.then(() => state.transport.request({ maxEvents: MAX_EVENTS, view: viewOpts(), ...req }));
  state.queue = p.catch(() => {});
  return p;
}

// Embedded in a documentation page (?embed=1): the cluster, the time controls and the narration
// only, with a link to the full page; &autoplay=1 plays once loaded, &speed=N sets the speed.
// One side of an era comparison (compare.html): the parent page sets the pace of both sides.
const COMPARE = new URLSearchParams(location.search).get("compare") === "1" && window.parent !== window;

const EMBED = (() => {
  const q = new URLSearchParams(location.search);
  const c = q.get("controls") || "";
  const int = (/** @type {string} */ k) => (/^\d{1,15}$/.test(q.get(k) || "") ? Number(q.get(k)) : null);
  return {
    on: q.get("embed") === "1", autoplay: q.get("autoplay") === "1", speed: q.get("speed"),
    controls: ["none", "minimal", "full"].includes(c) ? c : "full",
    tour: q.get("tour"), // "0": captions do not wait; "1": they do (the default)
    seed: int("seed"), // overrides the scenario's seed
    step: int("step"), // start at the scenario's step N (1 for the first)
    height: int("height"), // the embed's height in CSS px (default: the iframe's)
  };
})();

// ---- message API (embeds; docs/web.md) ----

// An embed inside another page takes commands from its parent (and from nowhere else) and tells
// the parent what happens. Commands only move this page's own simulation, so the parent's origin
// does not matter (a documentation site on any host may drive it); events carry nothing but the
// public scenario's times, captions and violation names, so they go to targetOrigin "*".
const API = EMBED.on && window.parent !== window && !COMPARE;

/** @param {object} msg */
function emit(msg) {
  if (API) parent.postMessage({ source: "highwater", ...msg }, "*");
}

function setupMessages() {
  if (!API) return;
  window.addEventListener("message", (e) => {
    if (e.source !== window.parent || !e.data || typeof e.data !== "object") return;
    const d = e.data;
    if (d.op === "play") { if (!state.playing) play(); }
    else if (d.op === "pause") pause();
    else if (d.op === "step") stepOnce();
    else if (d.op === "continue") story.continue();
    else if (d.op === "seek") {
      const steps = (state.scenario && state.scenario.steps) || [];
      if (Number.isInteger(d.step) && d.step >= 1 && d.step <= steps.length) seek(Number(steps[d.step - 1].at) || 0);
      else if (typeof d.t === "number" && Number.isFinite(d.t) && d.t >= 0) seek(Math.floor(d.t));
    }
  });
}

// emitSteps tells the parent which of the scenario's steps the run has passed in (from, to].
function emitSteps(from, to) {
  if (!API || !state.scenario || !Array.isArray(state.scenario.steps)) return;
  state.scenario.steps.forEach((st, i) => {
    if (st && typeof st.at === "number" && st.at > from && st.at <= to) emit({ type: "step", step: i + 1, t: st.at });
  });
}

function setupEmbed() {
  const speed = $("speed");
  if (EMBED.speed !== null && [...speed.options].some((o) => o.value === EMBED.speed)) setSpeed(EMBED.speed);
  const q = new URLSearchParams(location.search);
  if (q.get("flight")) story.flightMs = Math.max(100, Number(q.get("flight")) || 800);
  // An embed playing by itself does not wait for a click at tour captions.
  if (EMBED.on && EMBED.autoplay) story.autoContinueMs = Number(q.get("captionDelay")) || 8000;
  if (q.get("projector") === "1") { $("projector").checked = true; document.body.classList.add("projector"); }
  if (COMPARE) setupCompare();
  if (EMBED.tour === "0") $("tour").checked = false;
  if (EMBED.tour === "1") $("tour").checked = true;
  if (!EMBED.on) return;
  document.body.classList.add("embed", "controls-" + EMBED.controls);
  // With no controls, nobody can press Continue: captions move on by themselves.
  if (EMBED.controls === "none" && !story.autoContinueMs) story.autoContinueMs = Number(q.get("captionDelay")) || 8000;
  if (EMBED.height !== null) document.body.style.setProperty("--embed-h", Math.min(4000, Math.max(200, EMBED.height)) + "px");
  setupMessages();
  const full = new URL(location.href);
  for (const k of ["embed", "autoplay"]) full.searchParams.delete(k);
  const link = $("full-page");
  link.href = full.href;
  link.hidden = false;
}

// setupCompare answers the comparison page: it plays both sides at story speed in lockstep,
// each never past the limit it sets (the earlier of the two sides' next events), and moves the
// limit on when both have shown everything up to it (docs/web.md).
function setupCompare() {
  document.body.classList.add("compare");
  window.addEventListener("message", (e) => {
    if (e.origin !== location.origin || !e.data || typeof e.data !== "object") return;
    const d = e.data;
    if (d.op === "limit") { story.limit = d.limit; story.barrierSent = false; if (!state.playing) { setSpeed("story"); play(); } }
    if (d.op === "pause") pause();
  });
}

// comparisonReady tells the comparison page this side is loaded, and where its next event is.
function comparisonReady() {
  if (COMPARE) parent.postMessage({ op: "ready", t: state.t, next: nextStop() }, location.origin);
}

function viewOpts() {
  const total = state.topics.reduce((n, t) => n + t.count, 0);
  if (state.detailAll && total > DETAIL_ALL_MAX) state.detailAll = false;
  if (total <= VIEW_OPTS.detailLimit) return { ...VIEW_OPTS, focus: state.focus };
  if (state.detailAll && !state.allBuilt) return { ...VIEW_OPTS, detailLimit: total, focus: [] };
  const focus = [...state.focus];
  const add = (tp) => { if (tp && !focus.some((f) => f.topic === tp.topic && f.partition === tp.partition)) focus.push(tp); };
  if (state.detailAll) for (const tp of cluster.visibleTPs()) add(tp);
  add(state.chartTP); // the chart's partition, so its plot goes on
  return { ...VIEW_OPTS, focus, focusBrokers: state.focusBrokers, leaders: state.gridColour === "leader" };
}

// run sends a request and applies its reply; an error reply is shown and returned as null.
/**
 * @param {object} req a protocol request (docs/protocol.md)
 * @param {{what?: string, capped?: boolean}} [opts] what: the error message's prefix; capped: an advance already split at the server's cap
 */
async function run(req, { what, capped } = {}) {
  let reply;
  try {
    const t0 = performance.now();
    reply = await call(req);
    state.perf.request = performance.now() - t0;
  } catch (e) {
    showError(`${what || req.op + " failed"}: ${e.message}`);
    return null;
  }
  if (reply.type === "error") {
    // A native server may cap how far one request advances a large cluster; learn the cap and
    // go in steps of it instead of failing.
    const cap = req.op === "advance" && /limit of (\d+) ms per request/.exec(reply.error || "");
    if (cap && !capped) {
      state.maxAdvance = Number(cap[1]);
      return advanceInSteps(req.to);
    }
    showError(`${what || describeRequest(req) + " failed"}: ${reply.error}`);
    if (reply.t !== undefined && state.view) { state.t = reply.t; }
    return null;
  }
  applyReply(reply);
  // A native server stops a long advance at its request budget and says how far it got
  // ("partial", docs/server.md): show the progress, then ask again from there.
  if (reply.partial && req.op === "advance") {
    const target = reply.partial.target;
    setStatus(`simulating: ${fmtTime(reply.t)} of ${fmtTime(target)} (${Math.floor(100 * reply.t / Math.max(1, target))}%)`);
    const done = await run({ ...req, to: target }, { what, capped });
    if (done && !done.partial) setStatus(`simulated to ${fmtTime(done.t)}`);
    return done;
  }
  return reply;
}

// describeRequest names a request for an error message ("advance to 2.000 s").
function describeRequest(req) {
  if (req.op === "advance") return req.to !== undefined ? `advance to ${fmtTime(req.to)}` : `advance by ${fmtTime(req.by)}`;
  if (req.op === "apply" && req.action) return describeAction(req.action);
  return req.op;
}

function applyReply(r) {
  state.replies = (state.replies || 0) + 1;
  // The messages in flight before this reply: the ones it delivered are among them.
  const delivered = state.view ? state.view.messages : [];
  if (r.events.length && state.playing && state.story) story.onEvents(r.events, delivered);
  else if (r.events.length && !r.reset) {
    for (const e of r.events) if (e.type === "caption") emit({ type: "caption", text: e.text, t: e.t });
    // At the real-time speeds and when stepping, the panel shows the latest key moment (no dwell).
    const last = r.events.map((e) => { const m = moment(e, delivered); if (m) { m.t = e.t; m.ev = e; } return m; }).filter(Boolean).pop();
    if (last) panel.moment(last, false);
  }
  if (r.events.length) cluster.noteEvents(r.events);
  if (r.reset) {
    story.reset();
    // A tour's caption at the moment loaded (or sought to) is shown at once: the viewer reads it
    // before pressing Play.
    const cap = r.events.filter((e) => e.type === "caption" && e.t === r.t).pop();
    if (cap) queueMicrotask(() => { panel.moment({ kind: "caption", title: "Tour", text: cap.text, t: cap.t }, false); emit({ type: "caption", text: cap.text, t: cap.t }); });
    narration.clear();
    overview.reset();
    chart.cut(r.t);
    violations.count = 0;
  }
  if (!r.reset) emitSteps(state.t, r.t);
  else emitSteps(-1, r.t);
  state.t = r.t;
  state.next = r.next;
  if (state.displayT < r.t || r.reset) state.displayT = r.t;
  if (r.timeline) { state.timeline = r.timeline; r.timeline.actions = r.timeline.actions || []; }
  const tn = performance.now();
  if (r.events.length || r.dropped) {
    const evs = r.dropped ? [{ t: r.t, type: "page", text: `${r.dropped} earlier events skipped (fast-forward)` }, ...r.events] : r.events;
    narration.add(evs);
  }
  if (r.expects) {
    narration.add(r.expects.map((x) => ({
      t: x.at, type: "expect", bad: !x.ok,
      text: x.ok ? `expectation of step ${x.step} held` : `expectation of step ${x.step} failed: ` + x.failures.map((f) => `${f.field}: expected ${f.expected}, actual ${f.actual}`).join("; "),
    })));
  }
  overview.count(r.aggregated);
  state.perf.narration = performance.now() - tn;
  if (r.view) {
    state.viewSeq = r.viewSeq;
    state.view = normalize(r.view);
    render();
  } else if (r.viewPatch) {
    if (!state.view || r.viewPatch.base !== state.viewSeq) {
      // Out of step (a reply went missing): ask for a whole view rather than draw a wrong one.
      if (!state.resyncing) {
        state.resyncing = true;
        run({ op: "view", view: { ...viewOpts(), delta: false } }).finally(() => { state.resyncing = false; });
      }
      return;
    }
    applyPatch(state.view, r.viewPatch);
    state.patches = (state.patches || 0) + 1;
    state.viewSeq = r.viewPatch.seq;
    state.view = normalize(state.view);
    render();
  }
}

// ---- rendering ----

function render() {
  const v = state.view;
  if (!v) return;
  const t0 = performance.now();
  const total = state.topics.reduce((n, t) => n + t.count, 0);
  if (state.detailAll && v.partitions.length === total) state.allBuilt = true;
  // In an overview, the chart's partition is in the view for the plot only: draw the user's focus.
  const show = v.states && !state.detailAll
    ? (p) => state.focus.some((f) => f.topic === p.topic && f.partition === p.partition)
    : () => true;
  // A large overview shows broker cards only for the brokers drilled into and those holding a
  // focused partition (their messages are the ones that fly); the heatmap shows them all.
  let showBroker;
  if (v.states && v.brokers.length > 12 && !state.detailAll) {
    const ids = new Set(state.focusBrokers);
    for (const p of v.partitions) if (show(p)) for (const b of p.assignment) ids.add(b);
    // A broker drilled into brings its replication peers (the leaders it fetches from and the
    // followers fetching from it), so its messages have somewhere to fly.
    const tr = v.traffic;
    if (tr) for (let i = 0; i < tr.from.length; i++) {
      if (state.focusBrokers.includes(tr.from[i])) ids.add(tr.to[i]);
      if (state.focusBrokers.includes(tr.to[i])) ids.add(tr.from[i]);
    }
    showBroker = (id) => ids.has(id);
  }
  cluster.render(v, { topics: state.topics, focus: state.focus, keep: state.detailAll, show, showBroker, focusBrokers: state.focusBrokers });
  const all = $("detail-all");
  all.disabled = total > DETAIL_ALL_MAX;
  all.checked = state.detailAll;
  all.parentElement.title = all.disabled ? `Only up to ${DETAIL_ALL_MAX.toLocaleString("en-US")} partitions: click partitions in the grid instead.` : "";
  overview.render(v, state.focusBrokers);
  $("cluster").classList.toggle("with-overview", Boolean(v.states) && !state.detailAll);
  renderLeaderKey(v);
  updateChartChoice(v);
  chart.sample(v);
  $("era").textContent = v.era;
  renderEraLine(v);
  const n = v.messages.length;
  const more = v.messagesOmitted ? ` (and ${v.messagesOmitted.toLocaleString("en-US")} more elsewhere in the cluster, counted in the fetch traffic)` : "";
  $("inflight").textContent = (n === 0 ? "No messages in flight" + (more ? " to or from what you are looking at" : "") + "." :
    `${n} message${n === 1 ? "" : "s"} in flight: ` + v.messages.slice(0, 4).map((m) => `${describeMessage(m)} ${nodeName(m.from)} → ${nodeName(m.to)}`).join("; ") + (n > 4 ? "; …" : "")) + more;
  violations.check(v);
  emitViolations(v);
  renderTimeline();
  state.perf.render = performance.now() - t0;
}

// emitViolations tells an embed's parent about each violation the view lists for the first time.
function emitViolations(v) {
  const vs = v.violations || [];
  if ((state.violationsSent || 0) > vs.length) state.violationsSent = 0; // a seek back or a new run
  for (const x of vs.slice(state.violationsSent || 0)) emit({ type: "violation", name: x.name, t: x.t });
  state.violationsSent = vs.length;
}

// renderEraLine says which Kafka release's rules the cluster runs, and which of its defaults
// differ from 3.7's (the engine names them in view.eraDefaults, with 3.7's value).
/** @param {any} v */
function renderEraLine(v) {
  const line = $("era-line");
  const changed = Object.entries(v.eraDefaults || {});
  line.hidden = !v.era;
  const rules = `Kafka ${v.era} rules (inter.broker.protocol.version)`;
  line.textContent = changed.length === 0 ? rules + "." :
    `${rules}; this era's own defaults: ` +
    changed.map(([name, latest]) => `${name} = ${String(v.config[name])} (3.7: ${String(latest)})`).join(", ") + ".";
}

// renderLeaderKey shows which hue stands for which leader broker when the grid is coloured by
// leader (the broker tiles carry the same hues).
function renderLeaderKey(v) {
  const key = $("leader-key");
  const on = Boolean(v.states) && state.gridColour === "leader";
  key.hidden = !on;
  const sig = on ? String(v.brokers.length) : "";
  if (!on || key.dataset.sig === sig) return;
  key.dataset.sig = sig;
  const shown = v.brokers.slice(0, 48);
  key.replaceChildren(document.createTextNode("Leader broker: "),
    ...shown.map((b) => el("span", { class: "lk" }, el("i", { style: `--hue:${brokerHue(b.id)}` }), String(b.id))),
    ...(v.brokers.length > shown.length ? [document.createTextNode(` … ${v.brokers.length - shown.length} more (hover a cell for its leader)`)] : []));
}

function nodeName(id) { return id === -1 ? "client" : `broker ${id}`; }

function renderTimeline() {
  const tl = state.timeline;
  if (!tl) return;
  const lastAction = tl.actions.length ? tl.actions[tl.actions.length - 1].at : 0;
  const max = Math.max(tl.end, state.t, lastAction, 1);
  const scrub = $("scrub");
  if (!scrub.matches(":active")) {
    scrub.max = String(max);
    scrub.value = String(state.t);
  }
  scrub.setAttribute("aria-valuetext", `${fmtTime(state.t)} of ${fmtTime(max)}`);
  $("clock").textContent = `t = ${fmtTime(state.t)}` + (state.next >= 0 ? ` · next event at ${fmtTime(state.next)}` : " · nothing scheduled");
  const vs = state.view ? state.view.violations : [];
  const key = tl.actions.map((a) => a.at + a.action.do).join() + ":" + max + ":" + vs.length;
  if (key !== state.marksKey) {
    state.marksKey = key;
    $("scrub-marks").replaceChildren(
      ...tl.actions.map((a) => el("span", {
        class: "mark", style: `left:${(a.at / max) * 100}%`, title: `${fmtTime(a.at)}: ${a.action.do}${a.action.broker !== undefined ? " broker " + a.action.broker : ""}`,
      })),
      ...vs.map((x) => el("span", { class: "mark bad", style: `left:${(x.t / max) * 100}%`, title: `${fmtTime(x.t)}: ${x.name}` })));
  }
  syncSettings(tl);
  $("timeline-info").textContent = `${tl.actions.length} actions · reached ${fmtTime(tl.end)} · seed ${tl.seed}`;
}

// The chart's partition list comes from the scenario's topics, so it does not change while the
// view's detailed partitions do (overview, "draw every partition"); the chosen partition is
// always in the view's focus, and its plot starts once its detail arrives.
function updateChartChoice(v) {
  const sel = $("chart-partition");
  const key = state.topics.map((t) => t.name + "/" + t.count).join(",");
  if (key !== state.chartKey) {
    state.chartKey = key;
    state.chartNames = [];
    for (const t of state.topics) for (let i = 0; i < t.count && state.chartNames.length < 5000; i++) state.chartNames.push({ topic: t.name, partition: i });
    sel.replaceChildren(...state.chartNames.map((tp, i) => el("option", { value: i }, tpName(tp.topic, tp.partition))));
    state.chartTP = state.chartNames[0] || null;
    chart.tp = null;
  }
  const want = state.chartTP;
  if (!want || (chart.tp && chart.tp.topic === want.topic && chart.tp.partition === want.partition)) return;
  const p = v.partitions.find((q) => q.topic === want.topic && q.partition === want.partition);
  if (p) chart.choose(want, p.replicas.map((r) => r.broker));
}

function chooseChart() {
  state.chartTP = state.chartNames[Number($("chart-partition").value)] || null;
  if (state.view) {
    updateChartChoice(state.view);
    if (!chart.tp || chart.tp !== state.chartTP) refreshView();
  }
}

// ---- errors and status ----

let errorTimer = 0;

// showError shows a problem for 12 s (sticky: until the next load).
function showError(msg, { sticky = false } = {}) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = false;
  clearTimeout(errorTimer);
  if (!sticky) errorTimer = setTimeout(() => { e.hidden = true; }, 12000);
}

function setStatus(msg) { $("status").textContent = msg; }

// ---- loading ----

async function loadScenario(obj, source) {
  pause();
  const prevScenario = state.scenario;
  // No focus yet: the old cluster's partitions and brokers may not exist in the new one.
  const r = await run({ op: "load", scenario: obj, view: { ...VIEW_OPTS } }, { what: `Could not load ${source}` });
  if (!r) { state.scenario = prevScenario; return false; }
  if (source !== "the other branch") { state.branch = null; $("branch-back").hidden = true; }
  $("error").hidden = true;
  $("violation").hidden = true;
  state.scenario = obj;
  state.acted = false;
  state.topics = (obj.topics || []).map((t) => ({ name: t.name, count: t.assignment ? t.assignment.length : t.partitions }));
  state.focus = [];
  state.focusBrokers = [];
  overview.reset();
  state.allBuilt = false;
  state.expectTimes = (obj.steps || []).filter((st) => st && st.do === "expect").map((st) => st.at);
  state.config = { ...DEFAULTS, ...(obj.config || {}) };
  state.settingsDirty = false;
  state.configKey = "";
  fillSettings();
  cluster.reset();
  wires.reset();
  story.reset();
  state.drawn = new Map();
  state.chartKey = "";
  chart.tp = null;
  chart.container.replaceChildren();
  violations.count = 0;
  $("scenario-name").textContent = obj.name || "unnamed scenario";
  $("scenario-desc").replaceChildren(...inlineMarkdown(obj.description || ""));
  if (state.view) render();
  if (state.detailAll) await run({ op: "view" });
  // Story speed follows single messages: in an overview (more partitions than are drawn in
  // detail) most messages are only counted, so the cluster plays in real time instead.
  const total = state.topics.reduce((n, t) => n + t.count, 0);
  if (state.story && total > VIEW_OPTS.detailLimit) {
    setSpeed("1");
    narration.add([{ t: state.t, type: "page", text: `${total.toLocaleString("en-US")} partitions: playing at 1× real time (story speed follows single messages; choose it again from Speed if you want it).` }]);
  }
  setStatus(`engine ready (${state.transport.name}) · loaded “${obj.name}”`);
  return true;
}

async function loadPresets() {
  const sel = $("preset");
  let presets = [];
  try {
    const resp = await fetch("scenarios/index.json");
    if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
    presets = await resp.json();
  } catch (e) {
    sel.replaceChildren(el("option", { value: "" }, "no presets (run make wasm)"));
    return [];
  }
  sel.replaceChildren(el("option", { value: "" }, "choose a preset…"), ...presets.map((p) => el("option", { value: p.file, title: p.description }, p.name)));
  state.presets = presets;
  return presets;
}

async function loadPreset(file, startParams = false) {
  if (!(await loadURL("scenarios/" + file, `preset ${file}`, startParams))) return false;
  $("preset").value = file;
  state.presetShown = file;
  state.presetObjects[file] = state.scenario;
  return true;
}

// loadURL loads a scenario file from the page's server (?scenario=path loads one at start).
// startParams: the page's first load, where ?seed= replaces the scenario's seed.
async function loadURL(url, what = url, startParams = false) {
  let obj;
  try {
    const resp = await fetch(url);
    if (!resp.ok) throw new Error(resp.status === 404 ? "there is no such file (HTTP 404)" : `HTTP ${resp.status}`);
    const text = await resp.text();
    if (text.length > MAX_SCENARIO_CHARS) throw new Error(`the file is larger than ${MAX_SCENARIO_CHARS / 1e6} MB`);
    try { obj = JSON.parse(text); } catch (e) { throw new Error(`it is not valid JSON (${e.message})`); }
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw new Error("a scenario file must be a JSON object with name, brokers and topics");
  } catch (e) {
    showError(`Could not load ${what}: ${e.message}.`, { sticky: startParams });
    if (startParams) { $("scenario-name").textContent = `Could not load ${what}`; setStatus(`could not load ${what}`); }
    return false;
  }
  if (startParams && EMBED.seed !== null) obj = { ...obj, seed: EMBED.seed };
  const ok = await loadScenario(obj, what);
  if (!ok && startParams) { showError($("error").textContent, { sticky: true }); $("scenario-name").textContent = `Could not load ${what}`; }
  return ok;
}

// A scenario file (or a decoded share link) larger than this is refused.
const MAX_SCENARIO_CHARS = 2e6;

// startAt moves a freshly loaded scenario to its step N (?step=N): the time of the N-th entry of
// its steps, reached by advancing, so every event and expectation on the way happens.
async function startAt(n) {
  const steps = (state.scenario && state.scenario.steps) || [];
  if (n === null || n < 1) return;
  if (n > steps.length) { showError(`The scenario has ${steps.length} steps: there is no step ${n}; starting at 0.`); return; }
  const at = Number(steps[n - 1].at) || 0;
  if (at > state.t) await advanceTo(at);
}

// showOrigin says where a scenario from another site comes from (?scenario=URL), in the caption.
function showOrigin(url) {
  const line = $("scenario-origin");
  let u;
  try { u = new URL(url, location.href); } catch { return; }
  line.hidden = u.origin === location.origin;
  line.textContent = `Scenario from ${u.origin}, not from this site.`;
}

async function loadFile(file) {
  if (file.size > MAX_SCENARIO_CHARS) { showError(`Could not load ${file.name}: the file is larger than ${MAX_SCENARIO_CHARS / 1e6} MB.`); return; }
  const text = await file.text();
  let obj;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    showError(`Could not load ${file.name}: the file is not valid JSON (${e.message}). A scenario file is one JSON object; see docs/scenarios.md.`);
    return;
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    showError(`Could not load ${file.name}: a scenario file must be a JSON object with name, brokers and topics.`);
    return;
  }
  if (await loadScenario(obj, file.name)) { $("preset").value = ""; state.presetShown = ""; }
}

// ---- actions ----

function describeAction(a) {
  const parts = [a.do];
  if (a.broker !== undefined) parts.push(`broker ${a.broker}`);
  if (a.topic !== undefined) parts.push(tpName(a.topic, a.partition));
  if (a.loseUnflushed) parts.push("(power loss)");
  if (a.unclean) parts.push("(unclean)");
  if (a.set) parts.push(Object.entries(a.set).map(([k, v]) => `${k}=${v}`).join(", "));
  return parts.join(" ");
}

const act = serial(async function act(action, problem) {
  if (!action) { showError(problem); return; }
  const tl = state.timeline;
  const before = tl ? tl.actions.length : 0;
  const wasEnd = tl ? tl.end : 0;
  // Acting before the furthest point reached, or with logged actions ahead, forks: keep the
  // future about to be dropped (the run as a scenario file) so the viewer can go back to it.
  const forks = tl && (state.t < tl.end || tl.actions.some((x) => x.at > state.t));
  const old = forks ? await run({ op: "export", noView: true }) : null;
  const r = await run({ op: "apply", action }, { what: `${describeAction(action)} failed` });
  if (!r) return;
  state.acted = true;
  const dropped = before - (r.timeline.actions.length - 1);
  if (dropped > 0 || r.t < wasEnd) {
    const text = `Timeline forked at ${fmtTime(r.t)}: ${describeAction(action)}; ${dropped} later action${dropped === 1 ? "" : "s"} of the old future dropped (“Back to the other branch” returns to it).`;
    narration.add([{ t: r.t, type: "page", text }]);
    $("timeline-info").dataset.forked = String(r.t);
    setStatus(text);
    if (old && old.export) keepBranch({ scenario: old.export, t: r.t, what: `before ${describeAction(action)} at ${fmtTime(r.t)}` });
  }
  if (action.do === "config") Object.assign(state.config, action.set);
  // The session drops the expectations after a user's action (the run is no longer the file's).
  state.expectTimes = state.expectTimes.filter((at) => at <= r.t);
});

// keepBranch remembers the future a fork abandoned; the timebar's button returns to it.
function keepBranch(b) {
  state.branch = b;
  const btn = $("branch-back");
  btn.hidden = false;
  btn.textContent = "↩ Back to the other branch";
  btn.title = `Return to the timeline as it was ${b.what} (this one is kept in turn)`;
}

// backToBranch loads the abandoned branch at the fork's time; the branch left becomes the other one.
const backToBranch = serial(async function backToBranch() {
  const b = state.branch;
  if (!b) return;
  pause();
  const cur = await run({ op: "export", noView: true });
  const at = state.t;
  const prev = state.presetShown;
  if (!(await loadScenario(b.scenario, "the other branch"))) return;
  state.presetShown = prev;
  $("preset").value = prev || "";
  await advanceTo(b.t);
  if (cur && cur.export) keepBranch({ scenario: cur.export, t: at, what: `at ${fmtTime(at)}` });
  narration.add([{ t: state.t, type: "page", text: `Back on the branch ${b.what}.` }]);
});

// serial runs user operations one after another: an operation may take several requests (a
// seek past expect steps, an advance split at them), and a second click must not interleave.
let opChain = Promise.resolve();
function serial(fn) {
  return (...args) => {
    const p = opChain.then(async () => { await state.queue; return fn(...args); });
    opChain = p.catch(() => {});
    return p;
  };
}

// ---- time ----

// setSpeed switches between story speed ("story") and the real-time speeds (simulated ms per
// wall ms; 0 is flat out).
function setSpeed(value) {
  const was = state.story;
  $("speed").value = value;
  state.story = value === "story";
  document.body.classList.toggle("story", state.story);
  if (!state.story) state.speed = Number(value);
  story.reset();
  if (state.playing && state.serverPlay) {
    if (state.story && !was) run({ op: "pause" }); // story mode drives the engine itself
    else playOnServer();
  }
}

// On the native backend the server paces time (its play op pushes a frame every 50 ms); in the
// page, each animation frame asks the worker to advance. Either way displayT runs on locally
// between replies so messages in flight move smoothly.
const PLAY_INTERVAL_MS = 50;
// Flat out (speed 0): each step covers this much simulated time, as fast as the engine answers.
const FLAT_OUT_CHUNK_MS = 1000;

function play() {
  if (!state.view) return;
  state.playing = true;
  document.body.classList.add("playing");
  state.lastFrame = performance.now();
  $("play").textContent = "Pause";
  $("play").setAttribute("aria-pressed", "true");
  if (state.serverPlay && !state.story) playOnServer();
}

function pause() {
  const was = state.playing;
  state.playing = false;
  document.body.classList.remove("playing");
  state.displayT = state.t;
  $("play").textContent = "Play";
  $("play").setAttribute("aria-pressed", "false");
  if (was && state.serverPlay && !state.story) run({ op: "pause" });
  story.ff = null;
}

// playOnServer (re)starts server-paced play with the current speed and view options (a focus
// change while playing sends it again).
function playOnServer() {
  if (!state.playing || !state.serverPlay || state.story) return Promise.resolve(null);
  return run({ op: "play", speed: state.speed, intervalMs: PLAY_INTERVAL_MS, chunkMs: FLAT_OUT_CHUNK_MS });
}

// refreshView asks for a view with the current options (focus, colouring…). While the server
// plays, playing again does it: play answers with a view, and its frames follow the new options.
function refreshView() {
  return state.playing && state.serverPlay && !state.story ? playOnServer() : run({ op: "view" });
}

// onPlayFrame applies a frame the server pushed. Frames written before a pause reached the
// server still arrive after it: they are applied too, since the engine did move (and each view
// patch builds on the one before).
function onPlayFrame(r) {
  if (r.type === "error") { showError(`play: ${r.error}`); pause(); return; }
  applyReply(r);
}

const stepOnce = serial(async function stepOnce() {
  pause();
  const e = nextExpectAt(state.t);
  if (e > 0 && (state.next < 0 || e <= state.next)) await run({ op: "advance", to: e });
  else await run({ op: "step" });
});

// nextExpectAt is the time of the scenario's next expect step after t (-1: none). Advances stop
// there, so the session checks each expectation at its own instant (it checks pending ones when
// a reply is built, and at logged actions).
function nextExpectAt(t) {
  let best = -1;
  for (const at of state.expectTimes) if (at > t && (best < 0 || at < best)) best = at;
  return best;
}

const advanceBy = serial(async function advanceBy(ms) {
  pause();
  await advanceTo(state.t + ms);
});

// advanceInSteps advances to `to` in steps no longer than the server's cap.
async function advanceInSteps(to) {
  let last = null;
  while (state.t < to) {
    const next = Math.min(to, state.t + state.maxAdvance);
    last = await run({ op: "advance", to: next }, { capped: true });
    if (!last) return null;
  }
  return last;
}

async function advanceTo(target) {
  for (;;) {
    const e = nextExpectAt(state.t);
    const to = e > 0 && e < target ? e : target;
    if (!(await run({ op: "advance", to })) || to === target) return;
  }
}

const seek = serial(async function seek(to) {
  pause();
  // With expect steps on the way, replay from 0 and advance stop by stop, so each expectation is
  // checked at its own instant (a single seek would check them late; see advanceBy).
  if (state.expectTimes.some((at) => at <= to)) {
    if (to < state.t && !(await run({ op: "seek", to: 0 }, { what: `Could not seek to ${fmtTime(to)}` }))) return;
    await advanceTo(to);
    return;
  }
  await run({ op: "seek", to }, { what: `Could not seek to ${fmtTime(to)}` });
});

// nextStop is where story play advances to next: the engine's next happening, the timeline's
// next action or the next expect step, whichever comes first (-1: nothing more).
function nextStop() {
  let best = state.next;
  const consider = (at) => { if (at > state.t && (best < 0 || at < best)) best = at; };
  if (state.timeline) for (const a of state.timeline.actions) consider(a.at);
  for (const at of state.expectTimes) consider(at);
  return best;
}

function frame(now) {
  state.frames = (state.frames || 0) + 1;
  // A long frame still counts (up to 250 ms); a tab coming back from the background does not jump.
  const dt = Math.min(250, now - state.lastFrame);
  state.lastFrame = now;
  if (state.story && state.view) {
    const playing = state.playing;
    if (playing) state.displayT = story.tick(now);
    const stop = nextStop();
    wires.reduced = $("reduced-motion").checked;
    // Paused in story mode, messages sit where they were; stepping shows them mid-way.
    wires.draw(state.view.messages, playing ? (m) => story.progress(m, now, stop) : (m) => (story.flights.has(m.id) ? story.progress(m, now, stop) : 0.5));
    window.highwater.labelBoxes = wires.boxes;
    trackDrawn(now);
    panel.tick(state.view, playing ? state.displayT : state.t, playing && story.ff !== null);
    if (playing && story.ff) $("clock").textContent = `t = ${fmtTime(Math.round(state.displayT))} · fast-forward to ${fmtTime(story.ff.to)}${story.ff.routine ? " (routine polling, sped up)" : ""}`;
    markFirstFrame();
    chart.flush();
    requestAnimationFrame(frame);
    return;
  }
  if (state.playing && state.view && state.serverPlay) {
    // The server pushes frames; the shown time runs on locally between them.
    state.displayT = Math.min(state.displayT + dt * state.speed, state.t + 0.999);
  } else if (state.playing && state.view) {
    let target;
    if (state.speed === 0) {
      // Flat out: the next chunk as soon as the last is answered.
      target = state.t + FLAT_OUT_CHUNK_MS;
      state.displayT = state.t;
    } else {
      // The shown time may run ahead of the engine by two round trips (at least 100 ms of wall
      // time) at this speed: enough for a slow engine to keep real time, not so much that the
      // animation jumps.
      const lead = Math.max(100, 2 * (state.perf.request + state.perf.render));
      state.displayT = Math.min(state.displayT + dt * state.speed, state.t + Math.max(1, lead * state.speed));
      target = Math.floor(state.displayT);
    }
    const e = nextExpectAt(state.t);
    if (e > 0 && target > e) target = e;
    if (target > state.t && !state.busy) {
      state.busy = true;
      run({ op: "advance", to: target }).finally(() => { state.busy = false; });
    }
  }
  if (state.view) {
    // Draw between t and t+1 only: the view holds the messages in flight at t.
    const shown = state.playing ? Math.min(state.displayT, state.t + 0.999) : state.t;
    wires.reduced = $("reduced-motion").checked;
    wires.draw(state.view.messages, (m) => (shown - m.sent) / Math.max(1, m.deliver - m.sent));
    window.highwater.labelBoxes = wires.boxes;
    trackDrawn(now);
    panel.tick(state.view, state.t, false);
    markFirstFrame();
  }
  chart.flush();
  requestAnimationFrame(frame);
}

function markFirstFrame() {
  if (state.firstFrameAt) return;
  state.firstFrameAt = performance.now();
  document.body.dataset.firstFrameMs = String(Math.round(state.firstFrameAt));
}

// trackDrawn keeps, per message drawn, the wall time it was first and last on screen (the browser
// tests read it: every Fetch must be visible long enough to read).
function trackDrawn(now) {
  const seen = state.drawn || (state.drawn = new Map());
  for (const m of state.view.messages) {
    const d = seen.get(m.id);
    if (d) { d.last = now; d.quiet = story.quiet.has(m.id); } else seen.set(m.id, { id: m.id, type: m.type, sent: m.sent, first: now, last: now, quiet: story.quiet.has(m.id) });
  }
  if (seen.size > 5000) for (const k of [...seen.keys()].slice(0, 1000)) seen.delete(k);
}

// ---- settings ----

// syncSettings shows the settings in force at the current time: the scenario's config plus the
// config actions up to now (so a seek back shows the older values). It leaves a form being
// edited alone.
function syncSettings(tl) {
  if (state.settingsDirty || !state.scenario) return;
  const cfg = { ...DEFAULTS, ...(state.scenario.config || {}) };
  for (const a of tl.actions) if (a.action.do === "config" && a.at <= state.t) Object.assign(cfg, a.action.set);
  const key = JSON.stringify(cfg);
  if (key === state.configKey) return;
  state.configKey = key;
  state.config = cfg;
  fillSettings();
}

function fillSettings() {
  const form = $("settings");
  for (const [k, v] of Object.entries(state.config)) {
    const f = form.elements.namedItem(k);
    if (f) f.value = String(v);
  }
}

async function applySettings(e) {
  e.preventDefault();
  const form = $("settings");
  const set = {};
  for (const k of Object.keys(DEFAULTS)) {
    const f = form.elements.namedItem(k);
    if (!f) continue;
    const v = k === "unclean.leader.election.enable" ? f.value === "true" : Number(f.value);
    if (String(v) !== String(state.config[k])) set[k] = v;
  }
  state.settingsDirty = false;
  if (!Object.keys(set).length) { setStatus("settings unchanged"); return; }
  await act({ do: "config", set });
}

// ---- new cluster ----

function newCluster(e) {
  e.preventDefault();
  const err = $("new-error");
  const { scenario, problem } = newClusterScenario($("new-form").elements);
  if (problem) { err.textContent = problem; err.hidden = false; return; }
  err.hidden = true;
  $("new-dialog").close();
  loadScenario(scenario, "the new cluster").then((ok) => { if (ok) { $("preset").value = ""; state.presetShown = ""; } });
}

// ---- export ----

async function exportRun() {
  const r = await run({ op: "export", noView: true });
  if (!r || !r.export) return;
  const blob = new Blob([JSON.stringify(r.export, null, 2) + "\n"], { type: "application/json" });
  const a = el("a", { href: URL.createObjectURL(blob), download: (r.export.name || "run").replace(/[^A-Za-z0-9]+/g, "-").toLowerCase() + ".json" });
  document.body.append(a);
  a.click();
  a.remove();
}

// exportTrace saves every event of the run so far as JSON lines (like `highwater run --trace`):
// it replays the run from 0 to now without drawing it (the engine is deterministic, so it ends
// where it was), then asks for a whole view again.
const exportTrace = serial(async function exportTrace() {
  pause();
  const at = state.t;
  let lines = [], dropped = 0;
  try {
    const r0 = await call({ op: "seek", to: 0, noView: true, maxEvents: 0 });
    if (r0.type === "error") throw new Error(r0.error);
    const r = await call({ op: "advance", to: at, noView: true, maxEvents: 1e6 });
    if (r.type === "error") throw new Error(r.error);
    lines = [...(r0.events || []), ...r.events].map((e) => JSON.stringify(e));
    dropped = r.dropped || 0;
  } catch (e) {
    showError(`Could not export the trace: ${e.message}`);
  }
  await run({ op: "view", view: { ...viewOpts(), delta: false } });
  if (!lines.length) return;
  const name = (state.scenario && state.scenario.name || "run").replace(/[^A-Za-z0-9]+/g, "-").toLowerCase();
  const a = el("a", { href: URL.createObjectURL(new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" })), download: `${name}-trace.jsonl` });
  document.body.append(a);
  a.click();
  a.remove();
  state.traceLines = lines.length;
  setStatus(`trace exported: ${lines.length} events up to ${fmtTime(at)}` + (dropped ? ` (${dropped} more not included)` : ""));
});

// ---- share links ----

// A share link carries the run as a scenario file (the export op: the scenario with the user's
// actions and their times, the fork applied, and the seed), compressed with deflate-raw and
// written in base64url, and the time shown: index.html#run=…&t=…. A preset not acted on is just
// its name: #preset=…&t=…. The fragment never reaches a server.
const MAX_LINK_CHARS = 24000; // the encoded run in a link, at most
const MAX_SHARED_STEPS = 5000;

/** @param {BlobPart} bytes @param {CompressionStream | DecompressionStream} stream */
async function pipeBytes(bytes, stream, limit = Infinity) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > limit) { reader.cancel(); throw new Error(`it decodes to more than ${limit / 1e6} MB`); }
    chunks.push(value);
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

/** @param {object} obj @returns {Promise<string>} the scenario, deflated, in base64url */
async function encodeRun(obj) {
  const z = await pipeBytes(new TextEncoder().encode(JSON.stringify(obj)), new CompressionStream("deflate-raw"));
  let bin = "";
  for (let i = 0; i < z.length; i += 0x8000) bin += String.fromCharCode(...z.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** @param {string} s @returns {Promise<any>} the scenario a link carries (throws on a damaged one) */
async function decodeRun(s) {
  if (s.length > MAX_LINK_CHARS) throw new Error(`it is longer than ${MAX_LINK_CHARS} characters`);
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error("it has characters a Highwater link never has");
  let bin;
  try { bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)); } catch { throw new Error("it is cut short"); }
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await pipeBytes(bytes, new DecompressionStream("deflate-raw"), MAX_SCENARIO_CHARS));
  } catch (e) {
    throw new Error(/MB/.test(e.message) ? e.message : "it is cut short or altered (it does not decompress)");
  }
  let obj;
  try { obj = JSON.parse(text); } catch { throw new Error("it does not hold a scenario"); }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw new Error("it does not hold a scenario");
  if (Array.isArray(obj.steps) && obj.steps.length > MAX_SHARED_STEPS) throw new Error(`its scenario has more than ${MAX_SHARED_STEPS} steps`);
  return obj;
}

// shareLink is the link to the run as it is now (null, with the reason shown, if too long).
async function shareLink() {
  const u = new URL(location.href);
  u.search = "";
  const h = new URLSearchParams();
  if (state.presetShown && !state.acted && state.scenario && state.presetObjects[state.presetShown] === state.scenario) {
    h.set("preset", state.presetShown);
  } else {
    const r = await run({ op: "export", noView: true });
    if (!r || !r.export) return null;
    const enc = await encodeRun(r.export);
    if (enc.length > MAX_LINK_CHARS) {
      showError(`This run is too long for a link (${enc.length.toLocaleString("en-US")} characters, at most ${MAX_LINK_CHARS.toLocaleString("en-US")}): use Download run and share the file.`);
      return null;
    }
    h.set("run", enc);
  }
  h.set("t", String(state.t));
  u.hash = h.toString();
  return u.href;
}

const copyLink = serial(async function copyLink() {
  pause();
  const link = await shareLink();
  if (!link) return;
  state.shareLink = link;
  const out = $("share-out");
  out.value = link;
  out.hidden = false;
  out.select();
  let copied = false;
  try { await navigator.clipboard.writeText(link); copied = true; } catch { /* shown and selected instead */ }
  setStatus(`${copied ? "link copied" : "link ready to copy (selected)"}: ${link.length.toLocaleString("en-US")} characters, the run up to ${fmtTime(state.t)}`);
});

// openShared opens a share link's fragment: the run it carries, replayed to its time. A damaged
// link shows what is wrong and leaves an empty cluster to work with.
async function openShared(hash) {
  const h = new URLSearchParams(hash);
  if (!h.has("run") && !h.has("preset")) return false;
  const t = Math.max(0, Math.floor(Number(h.get("t")) || 0));
  if (h.has("preset")) {
    const file = h.get("preset");
    if (!state.presets.some((p) => p.file === file)) return failShared(`there is no preset “${file}”`);
    if (!(await loadPreset(file))) return true;
  } else {
    let obj;
    try { obj = await decodeRun(h.get("run")); } catch (e) { return failShared(e.message); }
    if (!(await loadScenario(obj, "the shared run"))) { showError($("error").textContent, { sticky: true }); return true; }
    $("preset").value = "";
    state.presetShown = "";
  }
  await advanceTo(t);
  narration.add([{ t: state.t, type: "page", text: `Opened a shared run at ${fmtTime(t)}.` }]);
  return true;
}

async function failShared(why) {
  await loadScenario({ name: "3 brokers, 1 partition, RF 3", brokers: 3, topics: [{ name: "orders", partitions: 1, replicationFactor: 3 }] }, "an empty cluster");
  $("preset").value = "";
  state.presetShown = "";
  showError(`Could not open the shared link: ${why}. Here is an empty cluster instead; ask for the link again, whole.`, { sticky: true });
  setStatus("shared link damaged");
  return true;
}

// ---- focus (overview) ----

function toggleFocus(tp) {
  if (state.detailAll) {
    const card = cluster.partCards.get(tpName(tp.topic, tp.partition));
    if (card) { card.root.scrollIntoView({ block: "center" }); card.root.focus({ preventScroll: true }); return; }
  }
  const i = state.focus.findIndex((f) => f.topic === tp.topic && f.partition === tp.partition);
  if (i >= 0) state.focus.splice(i, 1); else state.focus.push(tp);
  if (state.focus.length > 8) state.focus.shift();
  // The chart follows the partition just brought into detail.
  if (i < 0 && state.chartNames) {
    const j = state.chartNames.findIndex((c) => c.topic === tp.topic && c.partition === tp.partition);
    if (j >= 0) { $("chart-partition").value = String(j); state.chartTP = state.chartNames[j]; }
  }
  refreshView().then(() => {
    const card = cluster.partCards.get(tpName(tp.topic, tp.partition));
    if (i < 0 && card) card.root.scrollIntoView({ block: "nearest" });
  });
}

// toggleBroker drills into a broker in an overview (its fetchers, purgatory and messages in full),
// or out again.
function toggleBroker(id) {
  const i = state.focusBrokers.indexOf(id);
  if (i >= 0) state.focusBrokers.splice(i, 1); else state.focusBrokers.push(id);
  if (state.focusBrokers.length > 4) state.focusBrokers.shift();
  refreshView().then(() => {
    const card = document.querySelector(`.broker[data-broker="${id}"]`);
    if (card && state.focusBrokers.includes(id)) card.scrollIntoView({ block: "nearest" });
  });
}

// ---- wiring ----

const cluster = new ClusterView({
  brokers: $("brokers"), partitions: $("partitions"), overview: $("overview"),
  overviewGrid: $("overview-grid"), overviewSummary: $("overview-summary"),
}, {
  act, toggleFocus,
  // A card came into view: refresh it now unless playing does so anyway.
  // While the server plays, its frames must carry the new cards too: play again with them.
  onVisible: () => {
    if (!state.detailAll || !state.allBuilt || (state.playing && !state.serverPlay)) return;
    clearTimeout(state.visTimer);
    state.visTimer = setTimeout(refreshView, 80);
  },
  clientOptions: () => ({ count: Math.max(1, Number($("produce-count").value) || 1), acks: $("acks").value === "all" ? "all" : Number($("acks").value) }),
});
const overview = new OverviewPanel({
  counters: $("overview-counters"), brokers: $("overview-brokers"), traffic: $("overview-traffic"),
  trafficNote: $("traffic-note"), elsewhere: $("overview-elsewhere"),
}, { toggleBroker });
const violations = new ViolationBanner({ box: $("violation"), text: $("violation-text"), cause: $("violation-cause") }, { onFirst: () => pause() });
const wires = new Wires($("wires"), $("stage"), $("lanes"));
const story = new Story({
  run, state, nextStop,
  tourMode: () => $("tour").checked && !COMPARE,
  onBarrier: (t, next) => parent.postMessage({ op: "barrier", t, next, limit: story.limit }, location.origin),
  ui: {
    moment: (m, waiting) => {
      panel.moment(m, waiting);
      if (m && m.kind === "caption") emit({ type: "caption", text: m.text, t: m.t });
      // Bring the partition the moment is about on screen (small screens scroll to it).
      const ev = m && m.ev;
      if (ev && ev.topic !== undefined) {
        const card = cluster.partCards.get(tpName(ev.topic, ev.partition));
        if (card) card.root.scrollIntoView({ block: "nearest", behavior: $("reduced-motion").checked ? "auto" : "smooth" });
      }
    },
    idle: () => { if (state.playing) { pause(); setStatus("story: nothing more is scheduled"); } },
  },
});
const panel = new StoryPanel({ moment: $("moment"), countdown: $("countdown"), cont: $("continue"), epochKey: $("epoch-key"), zk: $("zk-line") });
const chart = new HWChart($("chart"));
const narration = new Narration({ list: $("log-list"), scroller: $("log"), filters: $("filters"), typeSelect: $("type-filter"), textInput: $("text-filter") });

function wire() {
  $("message-key").replaceChildren(...legend().map(([label, colour]) => el("span", { class: "key" }, el("i", { style: `background:${colour}` }), label)),
    el("span", { class: "key" }, el("i", { class: "diverging" }), "response with divergingEpoch"));
  $("play").addEventListener("click", () => (state.playing ? pause() : play()));
  $("step").addEventListener("click", stepOnce);
  $("speed").addEventListener("change", (e) => setSpeed(/** @type {any} */ (e.target).value));
  $("pace").addEventListener("change", (e) => { story.flightMs = Number(/** @type {any} */ (e.target).value) || 800; });
  $("continue").addEventListener("click", () => story.continue());
  $("branch-back").addEventListener("click", backToBranch);
  $("advance").addEventListener("click", () => advanceBy(Math.max(1, Number($("advance-ms").value) || 1)));
  const scrub = $("scrub");
  scrub.addEventListener("input", () => {
    if (state.playing) pause();
    $("clock").textContent = `go to t = ${fmtTime(Number(scrub.value))}`;
  });
  scrub.addEventListener("change", () => seek(Number(scrub.value)));
  $("preset").addEventListener("change", async (e) => {
    const prev = state.presetShown || "";
    if (!/** @type {any} */ (e.target).value) return;
    if (!(await loadPreset(/** @type {any} */ (e.target).value))) /** @type {any} */ (e.target).value = prev; // a failed load keeps the old cluster
  });
  $("scenario-file").addEventListener("change", (e) => { const f = /** @type {any} */ (e.target).files[0]; if (f) loadFile(f); /** @type {any} */ (e.target).value = ""; });
  $("new-cluster").addEventListener("click", () => $("new-dialog").showModal());
  $("new-cancel").addEventListener("click", () => $("new-dialog").close());
  $("new-form").addEventListener("submit", newCluster);
  $("export").addEventListener("click", exportRun);
  $("export-trace").addEventListener("click", exportTrace);
  $("share").addEventListener("click", copyLink);
  // Drop a scenario file anywhere on the page to open it.
  document.addEventListener("dragover", (e) => {
    if (EMBED.on || !e.dataTransfer || ![...e.dataTransfer.types].includes("Files")) return;
    e.preventDefault();
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) document.body.classList.remove("dropping"); });
  document.addEventListener("drop", (e) => {
    document.body.classList.remove("dropping");
    if (EMBED.on || !e.dataTransfer || !e.dataTransfer.files.length) return;
    e.preventDefault();
    const f = e.dataTransfer.files[0];
    if (f.size > MAX_SCENARIO_CHARS) { showError(`Could not load ${f.name}: the file is larger than ${MAX_SCENARIO_CHARS / 1e6} MB.`); return; }
    loadFile(f);
  });
  $("settings").addEventListener("submit", applySettings);
  $("settings").addEventListener("input", () => { state.settingsDirty = true; });
  $("chart-partition").addEventListener("change", chooseChart);
  $("violation-jump").addEventListener("click", () => { if (violations.last) seek(violations.last.t); });
  $("violation-cause").addEventListener("click", () => { if (violations.last && violations.last.cause) seek(violations.last.cause.t); });
  $("desc-more").addEventListener("click", (e) => {
    const open = $("scenario-desc").classList.toggle("open");
    /** @type {any} */ (e.currentTarget).setAttribute("aria-expanded", String(open));
    /** @type {any} */ (e.currentTarget).textContent = open ? "Fold the description" : "Read the whole description";
  });
  $("keys").open = window.innerWidth > 1100;
  $("projector").addEventListener("change", (e) => document.body.classList.toggle("projector", /** @type {any} */ (e.target).checked));
  $("violation-dismiss").addEventListener("click", () => { $("violation").hidden = true; });
  $("grid-colour").addEventListener("change", (e) => {
    state.gridColour = /** @type {any} */ (e.target).value;
    if (state.view) refreshView();
  });
  $("detail-all").checked = state.detailAll = DETAIL_PARAM === "all";
  $("detail-all").addEventListener("change", (e) => {
    state.detailAll = /** @type {any} */ (e.target).checked;
    state.allBuilt = false;
    cluster.reset();
    if (state.view) refreshView();
  });
  setSpeed($("speed").value);
  $("reduced-motion").checked = prefersReducedMotion();
  document.body.classList.toggle("reduced", $("reduced-motion").checked);
  $("reduced-motion").addEventListener("change", (e) => document.body.classList.toggle("reduced", /** @type {any} */ (e.target).checked));
  const backend = $("backend");
  backend.value = new URLSearchParams(location.search).get("backend") === "native" ? "native" : "wasm";
  backend.addEventListener("change", () => {
    const u = new URL(location.href);
    if (backend.value === "native") u.searchParams.set("backend", "native"); else u.searchParams.delete("backend");
    location.href = u.href;
  });
  document.addEventListener("keydown", (e) => {
    if (/** @type {any} */ (e.target).closest("input, select, textarea, button, dialog, [contenteditable]") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " ") { e.preventDefault(); state.playing ? pause() : play(); }
    if (e.key === ".") { e.preventDefault(); stepOnce(); }
    if ((e.key === "Enter" || e.key === "ArrowRight") && story.waiting) { e.preventDefault(); story.continue(); }
  });
  window.addEventListener("resize", () => { chart.resize(); if (state.view) { for (const c of cluster.partCards.values()) for (const r of c.replicaRows.values()) r.sig = ""; render(); } });
}

async function start() {
  state.api = { run, act, cluster, story, violations };
  wire();
  setupEmbed();
  state.host = await readConfig(); // is a server here, and the in-page engine? (backend.js)
  const { native, note } = chooseBackend(state.host);
  showBackend($("backend"), state.host, { native, note });
  state.transport = native ? new WebSocketTransport(wsURL()) : new WorkerTransport("worker.js");
  state.transport.onfatal = (msg) => { state.serverPlay = false; pause(); setStatus("engine unavailable"); showError(msg); };
  state.serverPlay = native;
  state.transport.onpush = onPlayFrame;
  const presetsP = loadPresets();
  try {
    const info = await state.transport.ready;
    setStatus(`engine ready (${state.transport.name}${info.version ? ", " + info.version : ""})`);
    document.body.dataset.engine = "ready";
    if (info.hasDocument !== undefined) document.body.dataset.hasDocument = String(info.hasDocument);
  } catch (e) {
    setStatus("engine unavailable");
    document.body.dataset.engine = "failed";
    showError(e.message);
    return;
  }
  requestAnimationFrame((t) => { state.lastFrame = t; frame(t); });
  const presets = await presetsP;
  const params = new URLSearchParams(location.search);
  if (location.hash.length > 1 && (await openShared(location.hash.slice(1)))) return;
  if (params.get("scenario")) {
    const url = params.get("scenario");
    showOrigin(url);
    if (await loadURL(url, `the scenario “${url}”`, true)) { await startAt(EMBED.step); emit({ type: "ready", t: state.t }); if (EMBED.autoplay) play(); }
    return;
  }
  const wanted = params.get("preset");
  if (wanted && presets.length && !presets.some((p) => p.file === wanted)) {
    // Not the default in its place: the reader would take it for the scenario asked for.
    showError(`Could not load the preset “${wanted}”: there is no preset by that name. Choose one from the Preset menu.`, { sticky: true });
    setStatus(`no preset “${wanted}”`);
    return;
  }
  const first = presets.find((p) => p.file === wanted) || presets.find((p) => p.file === "leader-crash-truncation.json") || presets[0];
  if (first) {
    if (await loadPreset(first.file, true)) {
      await startAt(EMBED.step);
      comparisonReady();
      emit({ type: "ready", t: state.t });
      if (EMBED.autoplay) play();
    }
  }
  else await loadScenario({ name: "3 brokers, 1 partition, RF 3", brokers: 3, topics: [{ name: "orders", partitions: 1, replicationFactor: 3 }] }, "the default cluster");
}

start();
