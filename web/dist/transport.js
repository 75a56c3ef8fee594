// Transports carry the page protocol (engine/session, see docs/web.md) to an engine host. Both
// have one method that matters: request(obj) → Promise<reply>, where reply.type is "reply" or
// "error". ready is a promise that settles when the host can answer (or rejects with a reason the
// page shows); onfatal(msg) reports a later loss of the host.

class Base {
  constructor() {
    /** @type {((reply: any) => void) | null} a frame the server pushed (server-paced play) */
    this.onpush = null;
    this.nextId = 1;
    this.pending = new Map();
    this.onfatal = null;
    this.dead = null;
  }
  /** send(id, json) hands a request to the host (each transport has its own). @param {number} id @param {string} json */
  send(id, json) { throw new Error(`no transport for request ${id} (${json.length} bytes)`); }
  request(obj) {
    if (this.dead) return Promise.reject(new Error(this.dead));
    const id = this.nextId++;
    const json = JSON.stringify({ ...obj, id });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try { this.send(id, json); } catch (e) { this.pending.delete(id); reject(e); }
    });
  }
  deliver(json) {
    let reply;
    const t0 = performance.now();
    // bytes and replies count everything received (the native check measures the stream with it).
    this.bytes = (this.bytes || 0) + json.length;
    this.replies = (this.replies || 0) + 1;
    try { reply = JSON.parse(json); this.parseMs = performance.now() - t0; this.replyBytes = json.length; } catch (e) { this.fail("the engine host sent a reply that is not JSON: " + e); return; }
    if (reply.push) { // a frame the server pushed (server-paced play), not an answer
      if (this.onpush) this.onpush(reply);
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return; // a reply to a request we no longer wait for
    this.pending.delete(reply.id);
    p.resolve(reply);
  }
  fail(msg) {
    if (this.dead) return;
    this.dead = msg;
    for (const p of this.pending.values()) p.reject(new Error(msg));
    this.pending.clear();
    if (this.onfatal) this.onfatal(msg);
  }
}

// WorkerTransport runs the engine (engine.wasm) in a Web Worker in this page.
export class WorkerTransport extends Base {
  constructor(url = "worker.js") {
    super();
    this.name = "in-page engine (WebAssembly worker)";
    this.worker = new Worker(url);
    this.ready = new Promise((resolve, reject) => {
      this.worker.onmessage = (e) => {
        const m = e.data;
        if (m.type === "ready") { resolve(m); return; }
        if (m.type === "fatal") { reject(new Error(m.error)); this.fail(m.error); return; }
        this.deliver(m.json);
      };
      this.worker.onerror = (e) => {
        const msg = "the engine worker failed: " + (e.message || "unknown error");
        reject(new Error(msg));
        this.fail(msg);
      };
    });
  }
  send(id, json) { this.worker.postMessage({ id, json }); }
  close() { this.worker.terminate(); this.fail("closed"); }
}

// WebSocketTransport talks to `highwater serve` over /ws: one JSON request per text message,
// replies matched by id.
export class WebSocketTransport extends Base {
  constructor(url) {
    super();
    this.name = "native engine (websocket " + url + ")";
    this.ws = new WebSocket(url);
    this.ready = new Promise((resolve, reject) => {
      let opened = false;
      this.ws.onopen = () => { opened = true; resolve({ version: "websocket" }); };
      this.ws.onmessage = (e) => this.deliver(e.data);
      this.ws.onerror = () => {}; // the close event that follows has the details
      this.ws.onclose = (e) => {
        const msg = opened
          ? `the native engine closed the connection (code ${e.code}${e.reason ? ": " + e.reason : ""})`
          : `cannot reach the native engine at ${url}: is \`highwater serve\` running with the websocket backend?`;
        reject(new Error(msg));
        this.fail(msg);
      };
    });
  }
  send(id, json) {
    if (this.ws.readyState !== WebSocket.OPEN) throw new Error("the websocket is not open");
    this.ws.send(json);
  }
  close() { this.ws.close(); this.fail("closed"); }
}

// wsURL returns the /ws address next to the page.
export function wsURL(loc = location) {
  const u = new URL("ws", loc.href);
  u.protocol = loc.protocol === "https:" ? "wss:" : "ws:";
  return u.href;
}
