// Small DOM helpers shared by the page's modules.

// el(tag, attrs, ...children) creates an element. attrs keys: class, text, on<event>, dataset
// entries as data-*, aria-* and any other attribute.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// setText changes a node's text only when it differs (cheap to call every frame).
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

// setAttr changes an attribute only when it differs.
export function setAttr(node, name, value) {
  const v = String(value);
  if (node.getAttribute(name) !== v) node.setAttribute(name, v);
}

// Leader epochs cycle through eight colours that stay apart for colour-blind viewers too
// (Okabe–Ito order), so two neighbouring epochs never look alike.
const EPOCH_COLOURS = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#7f7f7f"];

export function epochColour(epoch) {
  return EPOCH_COLOURS[((epoch % EPOCH_COLOURS.length) + EPOCH_COLOURS.length) % EPOCH_COLOURS.length];
}

// The text on an epoch's colour: white on the one dark blue, near-black on the others, the
// choice with a contrast of at least 4.5:1 (WCAG AA) on each.
export function epochTextColour(epoch) {
  return epochColour(epoch) === "#0072b2" ? "#fff" : "#111";
}

export function tpName(topic, partition) { return `${topic}-${partition}`; }

export function fmtTime(ms) {
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(3)} s`;
}

/** "1 record", "2 records": a count and its noun, as the narration writes them (engine/plural). */
export function plural(n, noun) { return `${n} ${noun}${n === 1 ? "" : "s"}`; }

export function setList(arr) { return "[" + (arr || []).join(" ") + "]"; }

export function prefersReducedMotion() {
  return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// brokerHue is a broker's hue in the overview coloured by leader: neighbouring ids get far-apart
// hues (the golden angle).
export function brokerHue(id) { return Math.round((id * 137.508) % 360); }

// gridMove is the roving-tabindex move in a grid of n equal cells (the grid is one tab stop):
// the index the arrow keys, Home or End take cell i to, or -1 for any other key. at(j) is cell j's
// element; the row length is read from the layout.
export function gridMove(key, n, i, at) {
  if (!n) return -1;
  let cols = 1;
  while (cols < n && at(cols).offsetTop === at(0).offsetTop) cols++;
  const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols }[key];
  if (step !== undefined) return Math.min(n - 1, Math.max(0, i + step));
  if (key === "Home") return 0;
  if (key === "End") return n - 1;
  return -1;
}

// inlineMarkdown renders the little markdown a description may use (`code`, **bold**, *emphasis*)
// as DOM nodes, never as HTML.
export function inlineMarkdown(text) {
  const out = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*/g;
  let last = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    out.push(m[1] ? el("code", {}, m[1]) : m[2] ? el("strong", {}, m[2]) : el("em", {}, m[3]));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}
