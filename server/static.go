package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// Static serving of the page (docs/server.md, "Compressed transfer"):
//
//   - A file with name.br or name.gz beside it (engine.wasm after `make wasm`) is sent as that copy
//     when the request's Accept-Encoding allows it, brotli first. A copy older than its file may be
//     stale and is not used.
//   - Other compressible files (HTML, JS, CSS, JSON, SVG, text, wasm) of 256 B to 1 MiB are
//     compressed once in memory (brotli 5, gzip 6) and kept while the file is unchanged (size and
//     modification time), up to 64 MiB in all.
//   - Every response carries the original's Content-Type, Vary: Accept-Encoding when there is a
//     choice, an ETag per representation (a hash of the bytes sent), and Cache-Control: no-cache:
//     names are not content-hashed, so the browser revalidates each time and gets 304 when nothing
//     changed. If-None-Match, Range and HEAD are http.ServeContent's.
//
// Directories, missing files and /index.html redirects are http.FileServer's.

const (
	minCompress      = 256
	maxOnTheFly      = 1 << 20
	maxOnTheFlyTotal = 64 << 20
	onTheFlyBrotli   = 5
)

type staticFiles struct {
	fsys  fs.FS
	files http.Handler

	mu     sync.Mutex
	assets map[string]*asset // guarded by mu
	held   int64             // bytes of compressed copies held in memory; guarded by mu
}

// asset is what is known of one file at one (size, modification time).
type asset struct {
	size int64
	mod  time.Time
	once sync.Once
	err  error
	reps map[string]*rep // by content coding: "identity", "br", "gzip"
	held int64           // bytes of reps made in memory; guarded by staticFiles.mu
}

// rep is one representation: bytes in memory, or a file of fsys.
type rep struct {
	etag string
	size int64
	data []byte
	file string
	mod  time.Time
}

func newStatic(fsys fs.FS) *staticFiles {
	return &staticFiles{fsys: fsys, files: http.FileServer(http.FS(fsys)), assets: map[string]*asset{}}
}

func (s *staticFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	urlPath := r.URL.Path
	if !strings.HasPrefix(urlPath, "/") {
		urlPath = "/" + urlPath
	}
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || strings.HasSuffix(urlPath, "/index.html") {
		s.files.ServeHTTP(w, r) // FileServer redirects …/index.html to …/
		return
	}
	name := strings.TrimPrefix(path.Clean(urlPath), "/")
	if strings.HasSuffix(urlPath, "/") {
		name = path.Join(name, "index.html")
	}
	if name == "" || name == "." {
		name = "index.html"
	}
	st, err := fs.Stat(s.fsys, name)
	if err != nil || !st.Mode().IsRegular() {
		s.files.ServeHTTP(w, r)
		return
	}
	a := s.asset(name, st)
	if a.err != nil {
		s.files.ServeHTTP(w, r)
		return
	}
	coding := negotiate(r.Header.Get("Accept-Encoding"), a.reps)
	rp := a.reps[coding]
	h := w.Header()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" && coding != "identity" {
		ctype = "application/octet-stream" // do not let ServeContent sniff compressed bytes
	}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	if len(a.reps) > 1 {
		h.Add("Vary", "Accept-Encoding")
	}
	if coding != "identity" {
		// ServeContent leaves out Content-Length when there is a Content-Encoding (it cannot
		// know the size of what a gzip middleware would make of it); here the size is known.
		// Ranges of a compressed copy are not worth the trouble: they get it whole.
		h.Set("Content-Encoding", coding)
		h.Set("Content-Length", strconv.FormatInt(rp.size, 10))
		r.Header.Del("Range")
	}
	h.Set("ETag", rp.etag)
	h.Set("Cache-Control", "no-cache")
	var content io.ReadSeeker
	if rp.data != nil {
		content = bytes.NewReader(rp.data)
	} else {
		f, err := s.fsys.Open(rp.file)
		if err != nil {
			http.Error(w, "cannot open "+rp.file, http.StatusInternalServerError)
			return
		}
		defer f.Close()
		if rs, ok := f.(io.ReadSeeker); ok {
			content = rs
		} else {
			data, err := io.ReadAll(f)
			if err != nil {
				http.Error(w, "cannot read "+rp.file, http.StatusInternalServerError)
				return
			}
			content = bytes.NewReader(data)
		}
	}
	if coding != "identity" {
		w = noRanges{w}
	}
	http.ServeContent(w, r, name, rp.mod, content)
}

// noRanges says "Accept-Ranges: none" over ServeContent's "bytes": a compressed copy is sent whole.
type noRanges struct{ http.ResponseWriter }

func (n noRanges) WriteHeader(code int) {
	n.Header().Set("Accept-Ranges", "none")
	n.ResponseWriter.WriteHeader(code)
}

// asset returns name's asset for st, built once per (size, modification time).
func (s *staticFiles) asset(name string, st fs.FileInfo) *asset {
	s.mu.Lock()
	a := s.assets[name]
	if a == nil || a.size != st.Size() || !a.mod.Equal(st.ModTime()) {
		if a != nil {
			s.held -= a.held
		}
		a = &asset{size: st.Size(), mod: st.ModTime()}
		s.assets[name] = a
	}
	s.mu.Unlock()
	a.once.Do(func() { a.err = s.build(a, name) })
	return a
}

// build hashes the file and finds or makes its compressed copies.
func (s *staticFiles) build(a *asset, name string) error {
	data, err := fs.ReadFile(s.fsys, name)
	if err != nil {
		return err
	}
	a.reps = map[string]*rep{"identity": {etag: etag(data), size: int64(len(data)), file: name, mod: a.mod}}
	for coding, ext := range map[string]string{"br": ".br", "gzip": ".gz"} {
		st, err := fs.Stat(s.fsys, name+ext)
		if err != nil || !st.Mode().IsRegular() || st.ModTime().Before(a.mod) {
			continue
		}
		sib, err := fs.ReadFile(s.fsys, name+ext)
		if err != nil {
			continue
		}
		a.reps[coding] = &rep{etag: etag(sib), size: int64(len(sib)), file: name + ext, mod: st.ModTime()}
	}
	if len(a.reps) > 1 || !compressible(name) || len(data) < minCompress || len(data) > maxOnTheFly {
		return nil
	}
	var br, gz bytes.Buffer
	bw := brotli.NewWriterLevel(&br, onTheFlyBrotli)
	if _, err := bw.Write(data); err != nil {
		return err
	}
	if err := bw.Close(); err != nil {
		return err
	}
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	n := int64(br.Len() + gz.Len())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held+n > maxOnTheFlyTotal || s.assets[name] != a {
		return nil // over the memory bound, or replaced meanwhile: send it as it is
	}
	s.held += n
	a.held = n
	if br.Len() < len(data) {
		a.reps["br"] = &rep{etag: etag(br.Bytes()), size: int64(br.Len()), data: br.Bytes(), mod: a.mod}
	}
	if gz.Len() < len(data) {
		a.reps["gzip"] = &rep{etag: etag(gz.Bytes()), size: int64(gz.Len()), data: gz.Bytes(), mod: a.mod}
	}
	return nil
}

func etag(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

func compressible(name string) bool {
	switch path.Ext(name) {
	case ".html", ".htm", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".md", ".map", ".xml", ".wasm":
		return true
	}
	return false
}

// negotiate picks the representation for an Accept-Encoding header: brotli, then gzip, among
// those reps has and the header accepts (q > 0, or "*"); else identity.
func negotiate(header string, reps map[string]*rep) string {
	if header == "" || len(reps) == 1 {
		return "identity"
	}
	q := map[string]float64{}
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		weight := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					weight = f
				}
			}
		}
		if coding == "x-gzip" {
			coding = "gzip"
		}
		q[coding] = weight
	}
	for _, coding := range []string{"br", "gzip"} {
		if reps[coding] == nil {
			continue
		}
		w, named := q[coding]
		if !named {
			w, named = q["*"]
		}
		if named && w > 0 {
			return coding
		}
	}
	return "identity"
}
