//go:build !js

package server

import (
	"context"
	"os"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"
)

// browserPage talks to /ws from Chromium's own WebSocket: a load, a 2 MB view (compressed when
// negotiated), flat-out play frames, an oversized request, and a second session refused by
// --max-sessions and a request over the hard limit, whose close codes and reasons the page reads.
const browserPage = `<!doctype html><title>ws</title><script>
const out = {};
const ws = new WebSocket(new URL("ws", location.href).href.replace("http", "ws"));
const wait = {};
let pushes = 0;
ws.onmessage = (e) => {
  const r = JSON.parse(e.data);
  if (r.push === "play") { pushes++; return; }
  const f = wait[r.id]; delete wait[r.id]; f([r, e.data.length]);
};
const ask = (req) => new Promise((res) => { wait[req.id] = res; ws.send(JSON.stringify(req)); });
ws.onopen = async () => {
  out.extensions = ws.extensions;
  const scenario = {name: "b", seed: 3, brokers: 6, topics: [{name: "t", partitions: 2000, replicationFactor: 3}], steps: []};
  let [r] = await ask({id: 1, op: "load", scenario, noView: true});
  out.load = r.type;
  let [v, n] = await ask({id: 2, op: "view", view: {detailLimit: 100000}});
  out.viewType = v.type; out.viewBytes = n; out.partitions = v.view.partitions.length;
  await ask({id: 3, op: "play", speed: 0, chunkMs: 100, noView: true, maxEvents: 10});
  await new Promise((res) => setTimeout(res, 300));
  [r] = await ask({id: 4, op: "pause", noView: true});
  out.pushes = pushes; out.t = r.t;
  [r] = await ask({id: 5, op: "view", noView: true, pad: "x".repeat(70000)});
  out.tooBig = r.error;
  const second = new WebSocket(ws.url);
  second.onclose = (e) => {
    out.refused = {code: e.code, reason: e.reason};
    ws.onclose = (e) => { out.hard = {code: e.code, reason: e.reason}; window.result = out; };
    ws.send("x".repeat(600000)); // over 8 × --max-message
  };
};
</script>`

func TestBrowserClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	chrome := "/usr/bin/chromium"
	if _, err := os.Stat(chrome); err != nil {
		t.Skip("no Chromium (make chromium installs it)")
	}
	_, ts, _ := startServer(t, Config{Compress: true, MaxSessions: 1, MaxMessageBytes: 64 << 10,
		Static: fstest.MapFS{"index.html": {Data: []byte(browserPage)}}})
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Run(ctx, chromedp.Poll[map[string]any]("window.result", chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", res)
	if res["extensions"] != "permessage-deflate; client_no_context_takeover; server_no_context_takeover" {
		t.Errorf("extensions %q: compression not negotiated with Chromium", res["extensions"])
	}
	if res["load"] != "reply" || res["viewType"] != "reply" || res["partitions"] != float64(2000) {
		t.Errorf("load/view: %v", res)
	}
	if n, _ := res["viewBytes"].(float64); n < 1<<20 {
		t.Errorf("view of %v bytes; want a large one", n)
	}
	if n, _ := res["pushes"].(float64); n < 3 {
		t.Errorf("%v play frames in 300 ms", n)
	}
	if s, _ := res["tooBig"].(string); s == "" || s[:16] != "message too big:" {
		t.Errorf("oversized request: %q", s)
	}
	refused, _ := res["refused"].(map[string]any)
	if refused["code"] != float64(1013) || refused["reason"] != "server full: 1 sessions at once (--max-sessions); try again later" {
		t.Errorf("second session: %v", refused)
	}
	hard, _ := res["hard"].(map[string]any)
	if hard["code"] != float64(1009) || hard["reason"] != "request over 524288 bytes (8 × --max-message): closing the connection" {
		t.Errorf("request over the hard limit: %v", hard)
	}
}
