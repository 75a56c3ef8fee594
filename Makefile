# Highwater. `make run` serves the product; `make test` runs every test. Both install what they
# need on a fresh machine that has Go, Node and root for apt-get. `make dist` writes the static
# build into dist/; `go install ./cmd/highwater` works too, without the in-page engine.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
GOBIN     := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
WASM_EXEC := $(GOROOT)/lib/wasm/go_js_wasm_exec
ADDR      ?= 127.0.0.1:8080

.PHONY: bigcheck run test build dist vendor wasm vet lint webdeps unit wasmtest browser sim bench bench-server fuzz-server tools chromium clean

run: wasm
	$(GO) run ./cmd/highwater serve --addr $(ADDR)

# The 100,000- and 1,000,000-partition native user paths in a real browser (a few minutes, about 3 GB).
bigcheck: wasm
	HIGHWATER_BIG=1 $(GO) test -count=1 -run 'TestNativeLargeCluster|TestNativeMillionPartitions' -timeout 30m -v ./web/browsertest/

build: wasm
	$(GO) build -o bin/highwater ./cmd/highwater

# The page's built files in web/dist: the engine compiled to WebAssembly with the matching
# wasm_exec.js, and engine.wasm.br and .gz beside it for `highwater serve` and static hosts
# (brotli 10 takes 10–25 s, only when the engine changed). A binary built after this carries
# them; presets and the chart library are in every binary (docs/shipping.md).
wasm:
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' -o web/dist/engine.wasm ./wasm
	cp "$(GOROOT)/lib/wasm/wasm_exec.js" web/dist/wasm_exec.js
	$(GO) run ./web/cmd/webbuild -compress web/dist/engine.wasm

# The static build in dist/: works from any static file host, no Highwater server (docs/shipping.md).
dist: wasm
	rm -rf dist
	$(GO) run ./web/cmd/webbuild -dist dist

# Refresh the committed chart library (web/dist/vendor) after changing its pin in web/package.json.
vendor:
	cd web && npm ci --no-audit --no-fund --loglevel=error
	$(GO) run ./web/cmd/webbuild -vendor

test: tools chromium vet lint wasm unit wasmtest
	@echo "make test: all passed"

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./engine/... ./wasm/...

lint: tools webdeps
	$(STATICCHECK) ./...
	GOOS=js GOARCH=wasm $(STATICCHECK) ./engine/... ./wasm/...
	cd web && npx --no-install tsc -p .

# The page's pinned npm packages (uPlot; axe-core and TypeScript for the tests and the lint).
webdeps: web/node_modules/.package-lock.json

web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error

# Native tests, browser tests included (they build the wasm themselves).
unit:
	$(GO) test -count=1 ./...

# The engine's tests again under GOOS=js GOARCH=wasm in Node: same traces as natively.
wasmtest:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(WASM_EXEC)" ./engine/... ./wasm/...

# Long sweeps: thousands of seeded fault schedules (HIGHWATER_SWEEP_SEEDS, 5000 by default) in every
# mode: the default 3.7 generator, the harsh one, each protocol era (docs/testing.md). Prints one
# `sweep:` line per mode, and each failing seed with how to replay it; fails if any seed does.
SIM_SEEDS ?= $(or $(HIGHWATER_SWEEP_SEEDS),5000)
sim:
	@out=$$(mktemp); HIGHWATER_SWEEP_SEEDS=$(SIM_SEEDS) $(GO) test -count=1 -run '^TestSweep(Eras)?$$' -timeout 180m -v ./engine/ >$$out 2>&1; rc=$$?; \
		grep -E '^(sweep|ok|FAIL|PASS)|^ *--- FAIL' $$out; grep -E -A1 '^ *sweep_test.go:[0-9]+: seed [0-9]+ failed' $$out; \
		rm -f $$out; exit $$rc

# The engine on steady clusters up to 100 brokers × 100,000 partitions natively (and the page's
# overview view of the largest); under WebAssembly (Node) the two smaller sizes, which are what a
# page holds; the native/in-page speed ratio on the same scenarios (cmd/benchratio), and on plain Go
# kernels shaped like the engine's work, for the ceiling Go's WebAssembly backend sets; `highwater run`
# as a user runs it, in a child process (parse, setup and run, with and without --trace, at
# 100 × 100,000 and 1,000 × 1,000,000 partitions: speed against real time and peak RSS;
# HIGHWATER_BENCH_MILLION=0 leaves the million out); then the server's benchmarks.
bench:
	@out=$$(mktemp -d); trap 'rm -rf $$out' EXIT; \
	$(GO) test -run '^$$' -bench . -benchtime=1x -count=1 -timeout 60m ./engine/ ./engine/view/ >$$out/native.txt; rc=$$?; cat $$out/native.txt; [ $$rc = 0 ] || exit $$rc; \
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASM_EXEC)" -run '^$$' -bench 'SteadyCluster/^brokers=(10|100)$$/^partitions=(1000|10000)$$' -benchtime=1x -count=1 -timeout 30m ./engine/ >$$out/in-page.txt; rc=$$?; cat $$out/in-page.txt; [ $$rc = 0 ] || exit $$rc; \
	$(GO) run ./cmd/benchratio -unit sim-s/wall-s $$out/native.txt $$out/in-page.txt && \
	$(GO) test -run '^$$' -bench . -count=1 ./cmd/benchratio/ceiling/ >$$out/native.txt && \
	GOOS=js GOARCH=wasm $(GO) test -exec="$(WASM_EXEC)" -run '^$$' -bench . -count=1 ./cmd/benchratio/ceiling/ >$$out/in-page.txt && \
	echo "plain Go kernels shaped like the engine's work (cmd/benchratio/ceiling), native/in-page:" && \
	$(GO) run ./cmd/benchratio -unit ops/s $$out/native.txt $$out/in-page.txt
	@echo "machine load (1, 5, 15 min): $$(cut -d' ' -f1-3 /proc/loadavg)"
	HIGHWATER_BENCH_MILLION=$(or $(HIGHWATER_BENCH_MILLION),1) $(GO) test -run '^$$' -bench UserPath -benchtime=1x -count=1 -timeout 60m ./cmd/highwater/
	$(MAKE) bench-server

# The native backend (docs/server.md): 100 concurrent sessions on loopback (errors, latency
# percentiles, memory); one session per large cluster (load time, memory, speed against real
# time, bytes per reply, the largest cluster at real time); the 100,000-partition overview stream
# (bytes per second per client, raw and compressed).
bench-server:
	$(GO) test -run '^$$' -bench 'Load|BigCluster|OverviewStream' -benchtime=1x -count=1 -timeout 30m ./server/
	$(GO) test -run '^$$' -bench RoundTrip -benchtime=2000x -count=1 ./server/

# Fuzz the server's request path (the seed corpus also runs in `make unit`).
fuzz-server:
	$(GO) test -run '^$$' -fuzz FuzzHandleJSON -fuzztime 60s ./server/

tools: $(STATICCHECK)

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@2026.2.2 || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest

# Debian's Chromium for the browser tests (chromedp drives it).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		(sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null); }

clean:
	rm -rf bin dist web/dist/engine.wasm web/dist/engine.wasm.br web/dist/engine.wasm.gz web/dist/wasm_exec.js web/dist/scenarios
