// Story speed: visual time instead of simulated time. The page drives the engine request by
// request (the same on both backends): it advances to the next thing that happens, lets every
// message in flight cross the screen in a fixed time (flightMs, whatever its simulated latency;
// messages sent together fly together), fast-forwards simulated time when nothing is on its way
// (with a countdown of what the cluster waits for, from the engine's view.pending), and dwells on
// key moments with a caption built from the event: an election, a truncation, a high-watermark
// advance, an ISR change, an acknowledged produce, a violation, a tour caption.

import { tpName } from "./dom.js";

// Dwell per key moment, in flights (so the "pace" setting scales them too).
const DWELL = {
  "violation": 5, "truncate": 4.5, "leader-change": 4, "isr-change": 3, "high-watermark": 2.5,
  "produce-result": 2.5, "caption": 6, "broker-down": 2.5, "zk-session-expired": 3,
};

// What an election's reason means, in words a newcomer can follow.
const ELECTION_RULES = {
  "offline partition: clean election": "the controller picks the first live replica of the ISR, in assignment order (a clean election: no committed record is lost)",
  "preferred replica": "leadership goes back to the preferred replica (first in the assignment)",
  "controlled shutdown": "the broker shutting down hands leadership to another ISR member first",
  "unclean": "no ISR member is alive, so an out-of-sync replica is chosen (unclean.leader.election.enable): committed records may be lost",
};

// moment turns a trace event into a caption (or null when the event is not a key moment).
// delivered lists the messages that were in flight before the event's reply (the Fetch that
// moved a high watermark is among them).
export function moment(ev, delivered = []) {
  const tp = ev.topic !== undefined ? tpName(ev.topic, ev.partition) : "";
  switch (ev.type) {
    case "truncate": {
      const n = (ev.from ?? 0) - (ev.to ?? 0);
      const ids = (ev.records || []).map((r) => "m" + r.id).join(", ");
      let why = ev.reason || "";
      const d = /diverging epoch (\d+) ends at offset (\d+)/.exec(why);
      if (d) why = `the leader's epoch ${d[1]} ended at ${d[2]}`;
      const range = n === 1 ? `offset ${ev.to}` : `offsets ${ev.to}–${ev.from - 1}`;
      return { kind: "truncate", title: "Truncation",
        text: `broker ${ev.broker} cut ${range} (${n} record${n === 1 ? "" : "s"}${ids ? ": " + ids : ""}): ${why}. Its log now matches the leader's up to offset ${ev.to}.` };
    }
    case "leader-change": {
      const rule = ELECTION_RULES[ev.reason] || Object.entries(ELECTION_RULES).find(([k]) => (ev.reason || "").includes(k))?.[1];
      const who = ev.to >= 0 ? `broker ${ev.to} is the new leader of ${tp}` : `${tp} has no leader (offline)`;
      return { kind: "leader-change", title: "Leader election",
        text: `${who}, leader epoch ${ev.epoch}${ev.from >= 0 ? ` (was broker ${ev.from})` : ""}. ${rule ? "Why: " + rule + "." : ev.reason ? "Why: " + ev.reason + "." : ""}` };
    }
    case "isr-change": {
      const old = ev.oldIsr || [], now = ev.isr || [];
      const left = old.filter((b) => !now.includes(b)), joined = now.filter((b) => !old.includes(b));
      const what = [left.length ? `broker ${left.join(", ")} left the in-sync replicas (ISR)` : "", joined.length ? `broker ${joined.join(", ")} rejoined the ISR` : ""].filter(Boolean).join("; ");
      return { kind: "isr-change", title: left.length ? "ISR shrink" : "ISR expand",
        text: `${tp}: ${what || "ISR changed"}, now [${now.join(" ")}] (${ev.reason || ""}).` };
    }
    case "high-watermark":
      if (ev.reason !== "leader") return null; // followers only learn it from the leader
      {
        // The follower whose Fetch reached the leader just then, and the offset it asked for.
        const f = delivered.find((m) => m.type === "fetch" && m.to === ev.broker && m.deliver === ev.t && m.fetch &&
          m.fetch.partitions.some((p) => p.topic === ev.topic && p.partition === ev.partition));
        const fp = f && f.fetch.partitions.find((p) => p.topic === ev.topic && p.partition === ev.partition);
        const who = fp ? `broker ${f.from}'s Fetch from offset ${fp.fetchOffset} shows leader broker ${ev.broker} that broker ${f.from} holds every record below ${fp.fetchOffset}. ` : "";
        return { kind: "high-watermark", title: "High watermark advances",
          text: `${tp}: ${who}Every in-sync replica now holds the records below offset ${ev.to}, so the leader moves the high watermark ${ev.from} → ${ev.to}: those records are committed, and consumers may read them.` };
      }
    case "produce-result":
      if (ev.name !== "acked") return { kind: "produce-result", title: "Produce failed", text: ev.text };
      return { kind: "produce-result", title: "Write acknowledged", text: ev.text.replace(/^producer: /, "The producer was told: ") + "." };
    case "violation":
      return { kind: "violation", title: "Guarantee broken", text: ev.text };
    case "caption":
      return { kind: "caption", title: "Tour", text: ev.text, tour: true };
    case "zk-session-expired":
      return { kind: "zk-session-expired", title: "ZooKeeper session expired", text: `${ev.text}: the controller now treats broker ${ev.broker} as dead and moves its leaderships.` };
    case "broker-down":
      return { kind: "broker-down", title: "Broker down", text: ev.text };
    default:
      return null;
  }
}

// pendingText is one pending deadline as a countdown ("… in 12.4 s"), relative to time t.
export function pendingText(p, t) {
  const left = Math.max(0, p.at - t);
  const s = left >= 1000 ? `${(left / 1000).toFixed(1)} s` : `${Math.round(left)} ms`;
  const text = (p.text || p.kind || "something").replace(/\s+at \d+(\.\d+)? ?m?s$/, "");
  return `${text} in ${s}`;
}

const ROUTINE = new Set(["fetch-parked", "leader-rebalance", "hw-checkpoint"]);

export class Story {
  // host: { run(req) → Promise<reply|null>, state (the page's state), nextStop(), ui }
  constructor(host) {
    this.host = host;
    this.flightMs = 800;
    this.flights = new Map(); // message id → wall time its flight started
    this.queue = []; // moments waiting to be shown
    this.current = null; // the moment on screen
    this.holdUntil = 0;
    this.waiting = false; // a tour caption waits for Continue
    this.autoContinueMs = 0; // embeds: continue a caption by itself after this long (0: never)
    this.ff = null; // fast-forward: {from, to, start, dur}
    this.busy = false;
    // Routine polling: per follower→leader link, how many Fetch responses in a row brought
    // nothing new. After two, that link's fetches fly four times faster (quiet flights) until
    // something happens.
    this.idle = new Map();
    this.quiet = new Set(); // ids of messages flown quietly
    // Lockstep (compare.html): never go past limit; at it, with nothing left to show, tell the
    // host once (onBarrier) and wait for the next limit. null: no limit.
    this.limit = null;
    this.barrierSent = false;
  }

  reset() {
    this.flights.clear();
    this.queue = [];
    this.current = null;
    this.holdUntil = 0;
    this.waiting = false;
    this.ff = null;
    this.idle.clear();
    this.quiet.clear();
    this.host.ui.moment(null);
  }

  // onEvents queues the key moments of a reply's events.
  onEvents(events, delivered = []) {
    for (const ev of events) {
      const m = moment(ev, delivered);
      if (!m) continue;
      m.t = ev.t;
      m.ev = ev;
      // Several HW advances in one reply read as one.
      if (m.kind === "high-watermark" && this.queue.some((q) => q.kind === "high-watermark")) continue;
      this.queue.push(m);
      this.idle.clear(); // after a key moment every fetch flies at full length again
    }
  }

  // isQuiet tells whether m is routine polling on a link that has brought nothing new twice in a
  // row: an empty Fetch response (no records, no diverging epoch, no error), or the Fetch after
  // one, or the third Fetch in a row to a broker that is down. It is decided once, when the
  // message first shows.
  isQuiet(m) {
    if (m.type === "fetch-response" && m.fetchResponse) {
      const link = `${m.to}>${m.from}`;
      const r = m.fetchResponse;
      const empty = !r.error && r.partitions.every((p) => !(p.records || []).length && !p.divergingEpoch && !p.error);
      const n = empty ? (this.idle.get(link) || 0) + 1 : 0;
      this.idle.set(link, n);
      return n > 2;
    }
    if (m.type === "fetch") {
      // Fetches to a broker that is down go unanswered; after two, the rest are routine too.
      const v = this.host.state.view;
      const to = v && v.brokers.find((b) => b.id === m.to);
      if (to && to.state === "dead") {
        const k = `dead:${m.from}>${m.to}`;
        const n = (this.idle.get(k) || 0) + 1;
        this.idle.set(k, n);
        return n > 2;
      }
      return (this.idle.get(`${m.from}>${m.to}`) || 0) >= 2;
    }
    return false;
  }

  // progress is where message m is along its way: wall time since its flight started, over
  // flightMs. One not due yet (a slow link) waits near its receiver until it is.
  progress(m, now, stop) {
    let start = this.flights.get(m.id);
    if (start === undefined) {
      start = now;
      this.flights.set(m.id, start);
      if (this.isQuiet(m)) this.quiet.add(m.id);
    }
    const f = (now - start) / (this.quiet.has(m.id) ? this.flightMs / 4 : this.flightMs);
    return stop >= 0 && m.deliver > stop ? Math.min(f, 0.88) : f;
  }

  // continue ends the moment on screen (the tour's Continue button, a key).
  continue() {
    this.waiting = false;
    this.holdUntil = 0;
  }

  // tick runs once per animation frame while story play is on. It returns the time to show.
  tick(now) {
    const st = this.host.state;
    const v = st.view;
    if (!v) return st.t;
    // Forget flights of messages no longer in the view.
    if (this.flights.size > 4 * (v.messages.length + 8)) {
      const ids = new Set(v.messages.map((m) => m.id));
      for (const id of this.flights.keys()) if (!ids.has(id)) { this.flights.delete(id); this.quiet.delete(id); }
    }
    // A moment on screen holds everything.
    if (this.current) {
      if (this.waiting && this.autoContinueMs && now - this.current.shown > this.autoContinueMs) this.waiting = false;
      if (this.waiting || now < this.holdUntil) return st.t;
      this.current = null;
      this.host.ui.moment(null);
    }
    if (this.queue.length) {
      const m = this.queue.shift();
      m.shown = now;
      this.current = m;
      this.holdUntil = now + (DWELL[m.kind] || 2.5) * this.flightMs;
      this.waiting = Boolean(m.tour && this.host.tourMode());
      this.host.ui.moment(m, this.waiting);
      return st.t;
    }
    if (this.busy) return this.ff ? this.ffTime(now) : st.t;
    let stop = this.host.nextStop();
    if (this.limit !== null) {
      if (st.t >= this.limit) {
        const flying = v.messages.some((m) => m.deliver <= this.limit && this.progress(m, now, this.limit) < 1);
        if (!flying && !this.barrierSent) { this.barrierSent = true; this.host.onBarrier(st.t, stop); }
        return st.t;
      }
      if (stop < 0 || stop > this.limit) stop = this.limit;
    }
    if (stop < 0) {
      if (!v.messages.length) this.host.ui.idle();
      return st.t;
    }
    // Messages due by the next stop must have crossed the screen first.
    for (const m of v.messages) {
      if (m.deliver <= stop && this.progress(m, now, stop) < 1) return st.t;
    }
    const gap = stop - st.t;
    if (gap > 20 && !this.ff) {
      // Nothing on its way: fast-forward, longer for longer waits (0.4 s to 2.5 s), shorter
      // while only routine polling goes on.
      const routine = this.idle.size > 0 && [...this.idle.values()].every((n) => n >= 2);
      this.ff = { from: st.t, to: stop, start: now, routine,
        dur: Math.min(2500, Math.max(400, Math.sqrt(gap) * 15)) * this.flightMs / 800 / (routine ? 3 : 1) };
    }
    if (this.ff) {
      if (now - this.ff.start < this.ff.dur && this.ff.to === stop) return this.ffTime(now);
    }
    this.busy = true;
    this.host.run({ op: "advance", to: stop }).finally(() => { this.busy = false; this.ff = null; });
    return this.ff ? this.ffTime(now) : st.t;
  }

  ffTime(now) {
    const f = Math.min(1, (now - this.ff.start) / this.ff.dur);
    return this.ff.from + (this.ff.to - this.ff.from) * f;
  }

  // countdowns lists what the cluster waits for, nearest first, relative to time t.
  static countdowns(view, t, max = 3) {
    const pend = Array.isArray(view && view.pending) ? view.pending.filter((p) => p && p.at >= t) : [];
    pend.sort((a, b) => a.at - b.at);
    // What changes the story first (a session expiry, an ISR exit, a retry); the routine waits
    // (a parked fetch, the HW checkpoint, the rebalance check) only when nothing else is pending.
    const story = pend.filter((p) => !ROUTINE.has(p.kind));
    const shown = story.length ? story : pend.slice(0, 1);
    return shown.slice(0, max).map((p) => ({ kind: p.kind || "", text: pendingText(p, t), at: p.at }));
  }
}
