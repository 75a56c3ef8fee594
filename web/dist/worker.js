// The engine's Web Worker (a classic worker: importScripts only works there). It loads the Go
// runtime support and engine.wasm, then answers each page message {id, json} with {id, json}
// by calling highwater.handle(json) synchronously. Load errors are posted as {type:"fatal"}.
"use strict";

let ready = false;
const queue = [];

function post(obj) { self.postMessage(obj); }

function handle(data) {
  let reply;
  try {
    reply = self.highwater.handle(data.json);
  } catch (e) {
    reply = JSON.stringify({ id: data.id, type: "error", error: "the engine threw: " + String(e), t: 0, next: -1, events: [] });
  }
  post({ id: data.id, json: reply });
}

// Called by the Go side once highwater.handle exists (it must be defined before go.run).
self.onHighwaterReady = (info) => {
  ready = true;
  post({ type: "ready", version: info.version, hasDocument: info.hasDocument });
  while (queue.length) handle(queue.shift());
};
self.onHighwaterError = (msg) => post({ type: "fatal", error: "engine failed to start: " + msg });

self.onmessage = (e) => {
  if (ready) handle(e.data); else queue.push(e.data);
};

try {
  importScripts("wasm_exec.js");
} catch (e) {
  post({ type: "fatal", error: "wasm_exec.js is missing (run `make wasm`): " + String(e) });
  throw e;
}

(async () => {
  const go = new Go();
  const resp = await fetch("engine.wasm");
  if (!resp.ok) throw new Error(`engine.wasm: HTTP ${resp.status} (run \`make wasm\`)`);
  const { instance } = await WebAssembly.instantiateStreaming(resp, go.importObject);
  go.run(instance).then(() => post({ type: "fatal", error: "the engine exited" }));
})().catch((e) => post({ type: "fatal", error: "loading engine.wasm failed: " + String(e.message || e) }));
