package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/highwater-sim/highwater/web/page"
)

// staticFixture is a page directory: an engine with its precompressed copies (as `make wasm`
// leaves them), a script, the index and a file too small to compress.
func staticFixture(t *testing.T) (dir string, wasm, js []byte) {
	t.Helper()
	dir = t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 { // compressible, not trivially
		wasm = append(wasm, "fetch fetched leader follower epoch "[rng.IntN(30):]...)
		wasm = append(wasm, byte(rng.IntN(256)))
	}
	js = []byte(strings.Repeat("export function frame(t) { return t + 1; }\n", 200))
	files := map[string][]byte{"engine.wasm": wasm, "app.js": js, "wasm_exec.js": []byte("// go"),
		"index.html": []byte("<!doctype html>" + strings.Repeat("<p>Highwater</p>", 40)), "tiny.css": []byte("a{}")}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := page.Precompress(filepath.Join(dir, "engine.wasm"), 5); err != nil {
		t.Fatal(err)
	}
	return dir, wasm, js
}

func staticServer(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(New(Config{Static: os.DirFS(dir), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	return ts
}

// get fetches path with the given request headers, without the transport's own gzip handling.
func get(t *testing.T, method, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func decode(t *testing.T, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	switch coding {
	case "br":
		r = brotli.NewReader(r)
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "":
	default:
		t.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}

// TestStaticCompression: the engine goes out as its precompressed copy (brotli first, then gzip,
// else as it is), scripts are compressed on the fly; each with its Content-Type, Vary, an ETag
// per representation and Cache-Control; If-None-Match gets 304.
func TestStaticCompression(t *testing.T) {
	dir, wasm, js := staticFixture(t)
	ts := staticServer(t, dir)
	br, _ := os.ReadFile(filepath.Join(dir, "engine.wasm.br"))
	gz, _ := os.ReadFile(filepath.Join(dir, "engine.wasm.gz"))

	etags := map[string]string{}
	for _, c := range []struct{ accept, want string }{
		{"gzip, deflate, br, zstd", "br"}, // what Chromium sends
		{"gzip", "gzip"},
		{"", ""},
		{"identity", ""},
		{"br;q=0, gzip;q=0.8", "gzip"},
		{"*", "br"},
		{"x-gzip", "gzip"},
		{"deflate", ""},
	} {
		resp, body := get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", c.accept)
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Content-Encoding") != c.want {
			t.Fatalf("Accept-Encoding %q: %d, Content-Encoding %q; want 200, %q", c.accept, resp.StatusCode, h.Get("Content-Encoding"), c.want)
		}
		if h.Get("Content-Type") != "application/wasm" || h.Get("Vary") != "Accept-Encoding" ||
			h.Get("Cache-Control") != "no-cache" || h.Get("ETag") == "" {
			t.Fatalf("Accept-Encoding %q: headers %v", c.accept, h)
		}
		if got := decode(t, c.want, body); !bytes.Equal(got, wasm) {
			t.Fatalf("Accept-Encoding %q: body does not decode to engine.wasm", c.accept)
		}
		want := map[string][]byte{"br": br, "gzip": gz, "": wasm}[c.want]
		if !bytes.Equal(body, want) || resp.ContentLength != int64(len(want)) {
			t.Fatalf("Accept-Encoding %q: sent %d bytes (Content-Length %d), want the %d of the file on disk", c.accept, len(body), resp.ContentLength, len(want))
		}
		if prev, ok := etags[c.want]; ok && prev != h.Get("ETag") {
			t.Fatalf("ETag of %q changed: %s, %s", c.want, prev, h.Get("ETag"))
		}
		etags[c.want] = h.Get("ETag")
	}
	if len(etags) != 3 || etags["br"] == etags["gzip"] || etags["br"] == etags[""] {
		t.Fatalf("ETags per representation: %v", etags)
	}
	t.Logf("engine fixture on the wire: %d raw, %d gzip, %d brotli", len(wasm), len(gz), len(br))

	// Revalidation: the same representation's ETag gets 304 with no body; another's gets 200.
	resp, body := get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", "br", "If-None-Match", etags["br"])
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etags["br"] {
		t.Fatalf("If-None-Match: %d, %d bytes, ETag %s; want 304", resp.StatusCode, len(body), resp.Header.Get("ETag"))
	}
	if resp, _ := get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", "gzip", "If-None-Match", etags["br"]); resp.StatusCode != 200 {
		t.Fatalf("gzip asked with the brotli ETag: %d, want 200", resp.StatusCode)
	}
	// A range of the compressed copy: the whole copy, and no ranges offered; of the plain file: 206.
	resp, body = get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", "br", "Range", "bytes=0-99")
	if resp.StatusCode != 200 || !bytes.Equal(body, br) || resp.Header.Get("Accept-Ranges") != "none" {
		t.Fatalf("a range of the brotli copy: %d, %d bytes, Accept-Ranges %q", resp.StatusCode, len(body), resp.Header.Get("Accept-Ranges"))
	}
	resp, body = get(t, "GET", ts.URL+"/engine.wasm", "Range", "bytes=0-99")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, wasm[:100]) {
		t.Fatalf("a range of the plain file: %d, %d bytes", resp.StatusCode, len(body))
	}
	// HEAD: the headers of the brotli copy, no body.
	resp, body = get(t, "HEAD", ts.URL+"/engine.wasm", "Accept-Encoding", "br")
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get("Content-Length") != itoa(len(br)) {
		t.Fatalf("HEAD: %d, %v", resp.StatusCode, resp.Header)
	}

	// A script, compressed on the fly; the same ETag each time, and 304 on it.
	for _, coding := range []string{"br", "gzip"} {
		resp, body := get(t, "GET", ts.URL+"/app.js", "Accept-Encoding", coding)
		if resp.Header.Get("Content-Encoding") != coding || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") ||
			resp.Header.Get("Vary") != "Accept-Encoding" || len(body) >= len(js) {
			t.Fatalf("app.js with %s: %d bytes, %v", coding, len(body), resp.Header)
		}
		if got := decode(t, coding, body); !bytes.Equal(got, js) {
			t.Fatalf("app.js with %s does not decode to the file", coding)
		}
		again, _ := get(t, "GET", ts.URL+"/app.js", "Accept-Encoding", coding, "If-None-Match", resp.Header.Get("ETag"))
		if again.StatusCode != http.StatusNotModified {
			t.Fatalf("app.js revalidation with %s: %d", coding, again.StatusCode)
		}
	}
	// The index at /, compressed; /index.html redirects there (http.FileServer's way).
	resp, body = get(t, "GET", ts.URL+"/", "Accept-Encoding", "br")
	if resp.Header.Get("Content-Encoding") != "br" || !strings.Contains(string(decode(t, "br", body)), "Highwater") ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/: %v", resp.Header)
	}
	if resp, _ := get(t, "GET", ts.URL+"/index.html?preset=x.json", "Accept-Encoding", "br"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "./?preset=x.json" {
		t.Fatalf("/index.html: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Too small to gain: sent as it is, with an ETag still.
	resp, body = get(t, "GET", ts.URL+"/tiny.css", "Accept-Encoding", "br")
	if resp.Header.Get("Content-Encoding") != "" || string(body) != "a{}" || resp.Header.Get("ETag") == "" {
		t.Fatalf("tiny.css: %q, %v", body, resp.Header)
	}
	if resp, _ := get(t, "GET", ts.URL+"/missing.js", "Accept-Encoding", "br"); resp.StatusCode != 404 {
		t.Fatalf("missing file: %d", resp.StatusCode)
	}
}

// TestStaticStaleCopy: a rebuilt engine newer than its .br and .gz is not sent as them (they may
// hold the old engine); a changed file gets a new ETag.
func TestStaticStaleCopy(t *testing.T) {
	dir, wasm, _ := staticFixture(t)
	ts := staticServer(t, dir)
	resp, _ := get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", "br")
	old := resp.Header.Get("ETag")
	rebuilt := append([]byte("rebuilt "), wasm...)
	file := filepath.Join(dir, "engine.wasm")
	if err := os.WriteFile(file, rebuilt, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	for _, coding := range []string{"br", "gzip", ""} {
		resp, body := get(t, "GET", ts.URL+"/engine.wasm", "Accept-Encoding", coding)
		if got := decode(t, resp.Header.Get("Content-Encoding"), body); !bytes.Equal(got, rebuilt) {
			t.Fatalf("Accept-Encoding %q after a rebuild: the old engine was sent", coding)
		}
		if resp.Header.Get("ETag") == old {
			t.Fatal("the ETag did not change with the file")
		}
	}
}

// TestConfigJSON: the server tells the page it is there, and whether the in-page engine is.
func TestConfigJSON(t *testing.T) {
	dir, _, _ := staticFixture(t)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"server": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := staticServer(t, dir)
	check := func(want page.Config) {
		t.Helper()
		resp, body := get(t, "GET", ts.URL+"/config.json")
		var got page.Config
		if err := json.Unmarshal(body, &got); err != nil || got != want || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("config.json = %s (%v, %v); want %+v", body, err, resp.Header, want)
		}
	}
	check(page.Config{Server: true, InPageEngine: true})
	if err := os.Remove(filepath.Join(dir, "engine.wasm")); err != nil {
		t.Fatal(err)
	}
	check(page.Config{Server: true, InPageEngine: false})
}

func itoa(n int) string { return strconv.Itoa(n) }
