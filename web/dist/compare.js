// The era comparison (compare.html): the same preset under two protocol eras, two pages side by
// side (each with its own engine in its own worker), played at story speed in lockstep. Each side
// never goes past the limit this page sets, the earlier of the two sides' next events; when both
// have shown everything up to it, the limit moves on. So simulated time is the same on both sides
// at every step, while each animates its own messages and dwells on its own key moments.

import { el } from "./dom.js";

const $ = (/** @type {string} */ id) => /** @type {any} */ (document.getElementById(id));
const ERA = /^(.*)-(\d+\.\d+(?:\.\d+)?)\.json$/;

const sides = {
  left: { frame: $("left"), ready: false, at: false, t: 0, next: -1 },
  right: { frame: $("right"), ready: false, at: false, t: 0, next: -1 },
};
let limit = -1, playing = false;
window.highwaterCompare = { sides, get limit() { return limit; } }; // for the browser tests

function post(side, msg) { side.frame.contentWindow.postMessage(msg, location.origin); }

function status(text) { $("status").textContent = text; }

// step moves the limit to the earlier of the two sides' next events (or ends).
function step() {
  const next = [sides.left.next, sides.right.next].filter((n) => n > limit);
  if (!next.length) { playing = false; status("both runs have nothing more scheduled"); syncButton(); return; }
  limit = Math.min(...next);
  for (const s of Object.values(sides)) { s.at = false; post(s, { op: "limit", limit }); }
}

window.addEventListener("message", (e) => {
  if (e.origin !== location.origin || !e.data) return;
  const side = Object.values(sides).find((s) => s.frame.contentWindow === e.source);
  if (!side) return;
  const d = e.data;
  side.t = d.t;
  side.next = d.next;
  if (d.op === "ready") {
    side.ready = true;
    if (sides.left.ready && sides.right.ready) { $("play").disabled = false; status("both sides loaded: press Play both"); }
  }
  if (d.op === "barrier" && d.limit === limit) {
    side.at = true;
    status(`t = ${(limit / 1000).toFixed(3)} s on both sides`);
    if (playing && sides.left.at && sides.right.at) step();
  }
});

function syncButton() {
  $("play").textContent = playing ? "Pause both" : "Play both";
  $("play").setAttribute("aria-pressed", String(playing));
}

$("play").addEventListener("click", () => {
  playing = !playing;
  syncButton();
  if (!playing) { for (const s of Object.values(sides)) post(s, { op: "pause" }); return; }
  if (limit < 0 || (sides.left.at && sides.right.at)) step();
  else for (const s of Object.values(sides)) post(s, { op: "limit", limit });
});

// The presets that come in several eras ("kip101-hw-truncation-0.10.2.json", "…-3.7.json"):
// each pair is the oldest and the newest era of one scenario.
async function start() {
  const presets = await (await fetch("scenarios/index.json")).json();
  const groups = new Map();
  for (const p of presets) {
    const m = ERA.exec(p.file);
    if (!m) continue;
    if (!groups.has(m[1])) groups.set(m[1], []);
    groups.get(m[1]).push({ ...p, era: m[2] });
  }
  const vnum = (/** @type {string} */ v) => { const [a = 0, b = 0, c = 0] = v.split(".").map(Number); return (a * 1000 + b) * 1000 + c; };
  const pairs = [...groups].filter(([, l]) => l.length > 1).map(([base, l]) => {
    l.sort((a, b) => vnum(a.era) - vnum(b.era));
    return { base, left: l[0], right: l[l.length - 1] };
  });
  const q = new URLSearchParams(location.search);
  const sel = $("pair");
  sel.replaceChildren(...pairs.map((p, i) => el("option", { value: i }, `${p.base}: ${p.left.era} vs ${p.right.era}`)));
  let chosen = pairs.findIndex((p) => p.left.file === q.get("left") && p.right.file === q.get("right"));
  if (chosen < 0) chosen = Math.max(0, pairs.findIndex((p) => p.base === "kip101-hw-truncation"));
  sel.value = String(chosen);
  sel.addEventListener("change", () => {
    const p = pairs[Number(sel.value)];
    location.search = `?left=${encodeURIComponent(p.left.file)}&right=${encodeURIComponent(p.right.file)}`;
  });
  const p = pairs[chosen];
  if (!p) { status("no preset comes in two eras"); return; }
  $("left-h").textContent = `${p.left.era}: ${p.left.name}`;
  $("right-h").textContent = `${p.right.era}: ${p.right.name}`;
  const extra = q.get("flight") ? `&flight=${encodeURIComponent(q.get("flight"))}` : "";
  sides.left.frame.src = `index.html?embed=1&compare=1&preset=${encodeURIComponent(p.left.file)}${extra}`;
  sides.right.frame.src = `index.html?embed=1&compare=1&preset=${encodeURIComponent(p.right.file)}${extra}`;
  status("loading both engines…");
}

start();
