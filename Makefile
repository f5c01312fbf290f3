# m0serve build. Every go build, test, vet and bench carries
# -checklinkname=0: giouring reaches runtime internals through go:linkname,
# which Go >= 1.23 refuses by default.
GO          ?= go
LDFLAGS     := -ldflags=-checklinkname=0
BIN         := bin/m0serve
FUZZTIME    ?= 10s
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# h2spec, the HTTP/2 conformance suite the http2 tests run; it predates Go
# modules, hence +incompatible.
H2SPEC      := github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible
GOBIN       := $(shell $(GO) env GOPATH)/bin

# The CPython m0serve embeds is linked statically where its build left an
# archive: Debian's is built with profile-guided optimisation and its
# shared library is not (pybridge/pkg-config.sh). PYTHON_LINK=shared links
# libpython3.X.so instead. CGO_LDFLAGS differs between the two so that the
# build cache, which does not key on pkg-config's answer, keeps them apart.
PYTHON_LINK ?= static
export PKG_CONFIG     := $(CURDIR)/pybridge/pkg-config.sh
export M0_PYTHON_LINK := $(PYTHON_LINK)
ifeq ($(PYTHON_LINK),static)
export CGO_LDFLAGS    := -O2 -g -Wl,--export-dynamic
endif

# Debian packages, by what needs them; scripts/install-packages.sh installs
# the missing ones and is quick when none are. Running needs only the
# headers and pkg-config entry of the CPython m0serve embeds (gcc and Go
# are assumed); the tests need the clients they drive, the benchmarks
# their load generator and peers. The end-to-end tests' frameworks come
# from PyPI (tests/.venv, below); Debian's Flask, Starlette, FastAPI and
# uvloop stay for what runs on the system interpreter: pybridge's own
# tests, the interpreter and wheel tests, --loop uvloop.
RUN_PACKAGES          := pkg-config python3-dev
TEST_PACKAGES         := $(RUN_PACKAGES) curl chromium gunicorn python3-flask python3-django python3-whitenoise \
	python3-uvloop python3-starlette python3-fastapi python3-multipart python3-pyflakes python3-websockets \
	python3-uvicorn python3-wsproto python3-build python3-setuptools python3-wheel python3-venv python3-pip \
	prometheus util-linux iproute2 nginx systemd openssl sslscan libnss3-tools nghttp2-client postgresql
BENCH_PACKAGES        := $(RUN_PACKAGES) wrk strace openssl nginx nghttp2-client
# make test-deploy runs the manifest's command in namespaces of its own.
DEPLOY_PACKAGES       := $(RUN_PACKAGES) util-linux iproute2
BENCH_PYTHON_PACKAGES := $(BENCH_PACKAGES) gunicorn python3-flask python3-uvloop python3-starlette \
	python3-fastapi uwsgi uwsgi-plugin-python3 python3-uvicorn python3-httptools
# make bench-ws's Python servers come from bench/.venv (PyPI) now.
BENCH_WS_PACKAGES     := $(BENCH_PACKAGES)
# make wheel's venvs (its build tools come from PyPI, pinned) and the
# ELF tools that check the extension (readelf, objdump); the tests
# install a wheel into a venv, so they need them too.
WHEEL_PACKAGES        := $(RUN_PACKAGES) python3-venv python3-pip binutils
INSTALL_PACKAGES      := sh scripts/install-packages.sh
# Node and npm for the tests' Node packages (tests/package.json): Debian's,
# unless an npm is there already; a NodeSource nodejs carries its own npm
# and conflicts with Debian's npm package.
NODE_PACKAGES         := nodejs npm

# The version (the VERSION file) and the commit, stamped into the binary;
# `--version` prints them.
VERSION := $(shell cat VERSION)
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
STAMP   := -X github.com/m0serve/m0serve/cli.version=$(VERSION) -X github.com/m0serve/m0serve/cli.commit=$(COMMIT)

# make install puts bin/m0serve in $(DESTDIR)$(PREFIX)/bin.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin

.PHONY: all build install uninstall test lint run bench bench-quick bench-parsers fuzz vet fmt-check cross-check clean \
	packages-run packages-test packages-deploy packages-node packages-bench packages-bench-python

all: build

packages-run:
	@$(INSTALL_PACKAGES) $(RUN_PACKAGES)

packages-test:
	@$(INSTALL_PACKAGES) $(TEST_PACKAGES)

packages-deploy:
	@$(INSTALL_PACKAGES) $(DEPLOY_PACKAGES)

packages-node:
	@command -v npm >/dev/null 2>&1 || $(INSTALL_PACKAGES) $(NODE_PACKAGES)

# The Node packages the tests drive (Node's ws client), as pinned by
# tests/package-lock.json; installed again only when that changes.
tests/node_modules/.package-lock.json: tests/package.json tests/package-lock.json | packages-node
	cd tests && npm ci --no-audit --no-fund
	@touch $@

# The Python frameworks the tests serve (Flask, Django, Starlette, FastAPI,
# Litestar, Quart, Falcon, Channels, python-socketio) and the reference
# servers they compare against (gunicorn, uvicorn), from PyPI as pinned
# with hashes in tests/requirements.txt, in a venv of the CPython m0serve
# embeds; made again only when that file changes. The tests serve their
# apps with --venv tests/.venv.
TEST_VENV := tests/.venv
$(TEST_VENV)/.installed: tests/requirements.txt | packages-test
	rm -rf $(TEST_VENV)
	/usr/bin/python3 -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r tests/requirements.txt
	@touch $@

.PHONY: test-venv
test-venv: $(TEST_VENV)/.installed

# The seed, the Mojo m0serve (its wheel pinned with its hash in
# tests/seed/requirements.txt), in a venv of its own: make test-seed runs
# tests/seed/row.py, the client script TestSeedRow runs on bin/m0serve,
# against it, then the realtime tests' clients (TestSeedRealtime: holds,
# replay, WebSockets, grants), the seed's bin on PATH since it finds
# libpython from python3 there. Not part of make test: it checks the
# seed, not this server (README, "Coming from the Mojo m0serve" and
# "Realtime", says where the two differ).
SEED_VENV := tests/seed/.venv
$(SEED_VENV)/.installed: tests/seed/requirements.txt | packages-test
	rm -rf $(SEED_VENV)
	/usr/bin/python3 -m venv $(SEED_VENV)
	$(SEED_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r tests/seed/requirements.txt
	@touch $@

.PHONY: test-seed
test-seed: $(SEED_VENV)/.installed
	PATH=$(CURDIR)/$(SEED_VENV)/bin:$$PATH $(SEED_VENV)/bin/python tests/seed/row.py \
		--server $(CURDIR)/$(SEED_VENV)/bin/m0serve --impl seed
	cd tests && PATH=$(CURDIR)/$(SEED_VENV)/bin:$$PATH M0_SEED=$(CURDIR)/$(SEED_VENV)/bin/m0serve \
		$(GO) test $(LDFLAGS) -count=1 -run TestSeedRealtime -v .

# The Python servers and frameworks the benchmarks measure (Granian,
# uvicorn, gunicorn, Hypercorn, uWSGI as pyuwsgi, Flask, Starlette,
# FastAPI, Django), pinned with hashes in bench/requirements.txt, in a venv
# of the same CPython m0serve embeds: every arm runs that interpreter and
# that app code (m0serve's with --venv bench/.venv).
BENCH_VENV := bench/.venv
$(BENCH_VENV)/.installed: bench/requirements.txt | packages-bench
	rm -rf $(BENCH_VENV)
	/usr/bin/python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r bench/requirements.txt
	mkdir -p $(BENCH_VENV)/static
	head -c 102400 /dev/zero | tr '\0' x > $(BENCH_VENV)/static/100k.txt
	@touch $@

.PHONY: bench-venv
bench-venv: $(BENCH_VENV)/.installed

packages-bench:
	@$(INSTALL_PACKAGES) $(BENCH_PACKAGES)

packages-bench-python:
	@$(INSTALL_PACKAGES) $(BENCH_PYTHON_PACKAGES)

build:
	$(GO) build -ldflags="-checklinkname=0 -s -w $(STAMP)" -o $(BIN) ./cmd/m0serve

install: build
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/m0serve

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/m0serve

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(LDFLAGS) ./...

# staticcheck for Go; go.mod must say what the code imports (go mod tidy);
# pyflakes for the Python files (the bridge's executor, the test apps).
lint: vet
	@test -x $(GOBIN)/staticcheck || GOFLAGS= $(GO) install $(STATICCHECK)
	$(GOBIN)/staticcheck ./...
	$(GO) mod tidy -diff
	/usr/bin/python3 -m pyflakes $$(git ls-files '*.py')

# The kqueue backend and every pure-Go package must build and vet for the
# BSDs and macOS (cgo off: the Python bridge is Linux-built here). The
# master (supervisor) links no CPython: its tests run with cgo off.
CGO_FREE = ./http1/ ./http2/ ./ws/ ./loop/... ./kq/ ./supervisor/ ./internal/...
cross-check:
	@for target in darwin/arm64 freebsd/amd64; do \
		echo "cross-check $$target"; \
		GOOS=$${target%/*} GOARCH=$${target#*/} CGO_ENABLED=0 $(GO) vet $(LDFLAGS) $(CGO_FREE) || exit 1; \
		GOOS=$${target%/*} GOARCH=$${target#*/} CGO_ENABLED=0 $(GO) build $(LDFLAGS) $(CGO_FREE) || exit 1; \
	done
	CGO_ENABLED=0 $(GO) test $(LDFLAGS) -count=1 ./supervisor/ ./internal/workerproto/ ./internal/metrics/ ./internal/configerr/

# The packages whose tests run again under the race detector (each
# passed under it); tests/ drives a separate binary.
RACE_PACKAGES = ./loop/... ./server/ ./supervisor/ ./pybridge/ ./http1/ ./http2/ ./ws/ ./epoll/ ./uring/ ./internal/... ./tlsrec/

test: packages-test $(TEST_VENV)/.installed tests/node_modules/.package-lock.json wheel-tools wheel-cache fmt-check lint cross-check build test-tools
	$(GO) test $(LDFLAGS) -count=1 -timeout 30m ./...
	$(GO) test $(LDFLAGS) -race -count=1 $(RACE_PACKAGES)
	M0_TEST_ASGI_THREAD=loop $(GO) test $(LDFLAGS) -count=1 -run ASGI ./pybridge/
	cd bench && $(GO) test $(LDFLAGS) -count=1 ./...
	cd deploy/kubernetes && M0_BINARY=$(abspath $(BIN)) $(GO) test -count=1 ./...

# Go-built tools the tests drive, installed into GOPATH/bin when missing.
.PHONY: test-tools
test-tools:
	@test -x $(GOBIN)/h2spec || GOFLAGS= $(GO) install $(H2SPEC)

# Serves the example WSGI app until Ctrl-C; the first log line says where
# and on which backend.
run: packages-run build
	$(BIN) --app-dir examples hello_wsgi:app

# Per-part Go benchmarks first, then the whole server beside its peers
# (bench/README.md says how to read the table).
bench: packages-bench build
	$(GO) test $(LDFLAGS) -run '^$$' -bench . -benchmem ./http1/ ./loop/ ./uring/ ./epoll/
	cd bench && $(GO) run $(LDFLAGS) ./harness

bench-quick: packages-bench build
	cd bench && $(GO) run $(LDFLAGS) ./harness -quick

# The Python rows (bench/README.md, Python section): m0serve beside
# Granian, uvicorn, gunicorn, Hypercorn and uWSGI from PyPI, all on the
# interpreter m0serve embeds, from bench/.venv (bench/requirements.txt),
# one worker each on core 0, wrk on core 1, arms alternated: the bare
# WSGI and ASGI apps, Flask, Starlette, FastAPI with a pydantic body, a
# Django view, a 1 MiB upload, a streamed response and a 100 KB static
# file at c1, c16, c64 and c256; then WebSocket echo at 16 and 256
# connections and Granian's broadcast; then --workers 2 against Granian's
# and uvicorn's on both cores, wrk on the same two (rps only). About 20
# minutes; QUICK=1 for a smoke check of every arm (about 10).
.PHONY: bench-python test-pythons test-asan test-wsgi-handoff
BENCH_ROUNDS := $(if $(QUICK),-quick,-rounds 3 -duration 2s -warmup 1s)
bench-python: packages-bench build $(BENCH_VENV)/.installed
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms python-arms.json \
		-scenarios c1,c16,c64,c256 $(BENCH_ROUNDS)
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms websocket-arms.json -port-base 18680 \
		-arms m0serve-asgi-loop,m0serve-asgi,granian,granian-fast,uvicorn-websockets \
		-scenarios ws-c16,ws-c256,ws-broadcast16,ws-broadcast256 $(BENCH_ROUNDS)
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms workers-python-arms.json -port-base 18780 \
		-server-cpu 0,1 -load-cpu 0,1 -scenarios c64 $(BENCH_ROUNDS)

# HTTP/2 (issue 31; bench/README.md, HTTP/2 section): h2load with 16
# connections × 10 streams against m0serve's, Granian's (--http 2) and
# Hypercorn's HTTP/2, bare WSGI and ASGI apps, beside m0serve's own
# HTTP/1.1 under wrk at 160 connections; one worker each on core 0, the
# load on core 1, arms alternated. About 3 minutes; QUICK=1 to smoke it.
.PHONY: bench-h2
bench-h2: packages-bench build $(BENCH_VENV)/.installed
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms h2-arms.json -port-base 18880 \
		-scenarios h2-c16m10 $(BENCH_ROUNDS)

# Issue 15's attack campaign (bench/reliability; bench/README.md,
# Reliability section): slowloris, idle connections per backend, slow
# readers and slow bodies against --threads 1, 2 GiB uploads, a soak per
# interface and 60 s of mutated requests, against bin/m0serve and
# Debian's uvicorn and gunicorn in one run; loopback only, about 10
# minutes, QUICK=1 for a smoke run (under 2 minutes here under load).
.PHONY: bench-reliability
bench-reliability: packages-bench-python build
	cd bench && $(GO) run $(LDFLAGS) ./reliability $(if $(QUICK),-quick)

# The framework end-to-end tests, which test-pythons runs again on each
# pyenv CPython 3.12 and newer, in tests/.venv-<version> from
# tests/requirements-py312.txt (Django 6.1).
FRAMEWORK_TESTS := ^(TestFlask|TestDjango|TestDjangoASGI|TestDjangoCollectstatic|TestDjangoChannels|TestStarlette|TestFastAPI|TestLitestar|TestQuart|TestFalcon|TestSocketIO|TestWSGIEnvironMatchesGunicorn|TestASGIWebSocket|TestHTTPHeadOfStream|TestASGILifespanOwnsItsTasks)$$

# The pybridge tests against every other embeddable CPython on the machine
# (pyenv builds and make pythons' in build/pythons, 3.10 and newer, other
# than the default's minor version; the free-threaded builds are named and
# left out, the bridge needing the GIL, pybridge/shim.h). make pythons
# runs first and builds those it can (a source the mirror refuses is
# named and left out):
# pybridge/pkg-config.sh points cgo at that Python's shared library (its
# .pc) and adds an rpath; LD_LIBRARY_PATH is set as well, so the test
# binary loads that libpython even where the rpath is overridden.
# CGO_CFLAGS names the include dir so the build cache never reuses a build
# for another Python.
test-pythons: packages-wheel wheel-tools wheel-cache
	@$(INSTALL_PACKAGES) $(PYTHON_BUILD_PACKAGES)
	PYTHONS_OPTIONAL=1 sh scripts/build-pythons.sh $(PYTHONS)
	@default=$$(pkg-config --modversion python3-embed); failed=""; tested=0; \
	logs=$$(mktemp -d /tmp/m0-test-pythons.XXXXXX); \
	for pc in $${PYENV_ROOT:-/root/.pyenv}/versions/3.*/lib/pkgconfig/python3-embed.pc $(CURDIR)/$(PYTHONS_DIR)/3.*/lib/pkgconfig/python3-embed.pc; do \
		[ -f "$$pc" ] || continue; \
		version=$$(pkg-config --modversion "$$pc"); \
		case "$$version" in 3.[0-9]) continue;; esac; \
		[ "$$version" = "$$default" ] && continue; \
		prefix=$$(pkg-config --variable=prefix "$$pc"); name=$${prefix##*/}; \
		case "$$(pkg-config --libs "$$pc")" in *-lpython3.[0-9]t*|*-lpython3.[0-9][0-9]t*) \
			echo "test-pythons: Python $$name: free-threaded: left out (the bridge needs the GIL, pybridge/shim.h)"; continue;; esac; \
		log=$$logs/python-$$name.log; tested=$$((tested + 1)); \
		if PKG_CONFIG=$(CURDIR)/pybridge/pkg-config.sh M0_PYTHON_PC=$$pc M0_PYTHON_LINK=shared \
			CGO_CFLAGS="-O2 -g $$(pkg-config --cflags-only-I $$pc)" \
			LD_LIBRARY_PATH=$$(pkg-config --variable=libdir "$$pc")$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} \
			$(GO) test $(LDFLAGS) -count=1 -v ./pybridge/ > $$log 2>&1; then \
			echo "test-pythons: Python $$name: pass ($$(grep -c -- '--- PASS' $$log) passed, $$(grep -c -- '--- SKIP' $$log) skipped; $$log)"; \
		else \
			echo "test-pythons: Python $$name: FAIL ($$log)"; grep -E -- '--- FAIL|^FAIL|panic' $$log | head -20; \
			failed="$$failed $$name"; \
		fi; \
	done; \
	if [ $$tested = 0 ]; then echo "test-pythons: no other embeddable Python 3.10+ found"; exit 1; fi; \
	if [ -n "$$failed" ]; then echo "test-pythons: failed:$$failed"; exit 1; fi
	@for pc in $${PYENV_ROOT:-/root/.pyenv}/versions/3.1[2-9]*/lib/pkgconfig/python3-embed.pc $(CURDIR)/$(PYTHONS_DIR)/3.1[2-9]*/lib/pkgconfig/python3-embed.pc; do \
		[ -f "$$pc" ] || continue; \
		case "$$(pkg-config --libs "$$pc")" in *-lpython3.[0-9]t*|*-lpython3.[0-9][0-9]t*) continue;; esac; \
		prefix=$$(pkg-config --variable=prefix "$$pc"); name=$${prefix##*/}; venv=tests/.venv-$$name; \
		if [ ! -f $$venv/.installed ] || [ tests/requirements-py312.txt -nt $$venv/.installed ]; then \
			rm -rf $$venv && $$prefix/bin/python3 -m venv $$venv && \
			$$venv/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
				-r tests/requirements-py312.txt && touch $$venv/.installed || exit 1; \
		fi; \
		echo "test-pythons: the framework suite on Python $$name ($$venv: Django 6.1)"; \
		PKG_CONFIG=$(CURDIR)/pybridge/pkg-config.sh M0_PYTHON_PC=$$pc M0_PYTHON_LINK=shared \
			CGO_CFLAGS="-O2 -g $$(pkg-config --cflags-only-I $$pc)" \
			LD_LIBRARY_PATH=$$(pkg-config --variable=libdir "$$pc")$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} \
			M0_TEST_VENV=$(CURDIR)/$$venv $(GO) test $(LDFLAGS) -count=1 -timeout 30m -run '$(FRAMEWORK_TESTS)' ./tests/ || exit 1; \
	done
	@for python in $$(sh scripts/other-pythons.sh); do \
		echo "test-pythons: the wheel for $$python (TestWheel)"; \
		M0_WHEEL_PYTHON=$$python $(GO) test $(LDFLAGS) -count=1 -run '^TestWheel$$' ./tests/ || exit 1; \
	done
	@$(INSTALL_PACKAGES) $(WHEEL_SID_PACKAGES)
	@echo "test-pythons: the wheels for Debian sid's CPython $(SID_PYTHONS) (packaging/root-wheels.sh, into build/sid-dist)"
	OUTDIR=$(CURDIR)/build/sid-dist sh packaging/build-wheel.sh /usr/bin/python3 >/dev/null
	OUTDIR=$(CURDIR)/build/sid-dist sh packaging/root-wheels.sh $(SID_PYTHONS)

# make pythons: CPython 3.14 and 3.15 and their free-threaded builds
# (3.14t, 3.15t: --disable-gil) into build/pythons/<name>, each once, from
# CPython's release tarballs as Debian's sid ships them (the .orig.tar.xz
# of its source packages python3.14 and python3.15), fetched with apt
# from the mirror this machine's apt sources name (scripts/build-pythons.sh
# says how); PYTHONS names others or fewer. Shared libraries, no PGO or
# LTO, two jobs: minutes each. test-pythons and WHEEL_PYTHONS=all use them
# beside pyenv's (scripts/other-pythons.sh).
.PHONY: pythons
PYTHONS_DIR           := build/pythons
PYTHONS               ?= 3.14 3.14t 3.15 3.15t
PYTHON_BUILD_PACKAGES := gcc make pkg-config xz-utils libssl-dev zlib1g-dev libffi-dev libsqlite3-dev libbz2-dev \
	liblzma-dev uuid-dev libreadline-dev libncurses-dev libexpat1-dev
pythons:
	@$(INSTALL_PACKAGES) $(PYTHON_BUILD_PACKAGES)
	sh scripts/build-pythons.sh $(PYTHONS)

# The end-to-end tests again with every WSGI request handed to a handler
# thread (--wsgi-inline off, the default before auto), so that both ways
# stay covered: `make test` runs the default.
test-wsgi-handoff: packages-test $(TEST_VENV)/.installed
	M0_TEST_WSGI_INLINE=off $(GO) test $(LDFLAGS) -count=1 -timeout 30m ./tests/

# The bridge's tests once under AddressSanitizer: Go's -asan builds the C
# shim and the Go runtime with it. PYTHONMALLOC=malloc puts Python's own
# objects on malloc, so that ASan checks the shim's use of them too; what
# CPython keeps until exit is suppressed (pybridge/testdata/lsan.supp, by
# libpython3's name: this build links it shared). The test binary is
# kept: the leak report is symbolized from it at exit.
test-asan: packages-test
	M0_PYTHON_LINK=shared $(GO) test $(LDFLAGS) -asan -c -o $(CURDIR)/bin/pybridge-asan.test ./pybridge/
	cd pybridge && PYTHONMALLOC=malloc LSAN_OPTIONS=suppressions=$(CURDIR)/pybridge/testdata/lsan.supp \
		$(CURDIR)/bin/pybridge-asan.test -test.count=1

# http1 beside fasthttp and net/http on the same request heads, one run.
bench-parsers:
	cd bench/parsers && $(GO) test $(LDFLAGS) -run '^$$' -bench . -benchmem -count 5 .

# Every fuzz target for FUZZTIME each. Go keeps the inputs a run finds
# interesting in its build cache; they are copied into the package's
# testdata/fuzz/<target>/ so that `go test` replays them from then on and
# a commit keeps them.
fuzz:
	@cache=$$($(GO) env GOCACHE)/fuzz; \
	for pkg in $$($(GO) list ./...); do \
		dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
		for target in $$($(GO) test $(LDFLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test $(LDFLAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
			if [ -d "$$cache/$$pkg/$$target" ]; then \
				mkdir -p "$$dir/testdata/fuzz/$$target"; \
				cp -n "$$cache/$$pkg/$$target"/* "$$dir/testdata/fuzz/$$target/"; \
			fi; \
		done; \
	done

clean:
	rm -rf bin build dist

# The WebSocket rows: echo ping-pong at 1, 16 and 256 connections
# (m0serve ASGI beside Granian and uvicorn's websockets and wsproto
# implementations, all from bench/.venv;
# --native ws-echo beside --native hello's HTTP request) and Granian's
# broadcast at 16 and 256 clients, alternated in one run (bench/README.md,
# WebSocket section); about 8 minutes, QUICK=1 for a smoke check (3).
.PHONY: bench-ws packages-bench-ws
packages-bench-ws:
	@$(INSTALL_PACKAGES) $(BENCH_WS_PACKAGES)

bench-ws: packages-bench-ws build $(BENCH_VENV)/.installed
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms websocket-arms.json -port-base 18680 \
		-scenarios ws-c1,ws-c16,ws-c256,ws-broadcast16,ws-broadcast256 $(if $(QUICK),-quick)

# --workers measured (bench/README.md, Workers section): server CPU per
# request of one process, a master with 1 worker and with 2, all pinned to
# the same core(s) (SERVER_CPU, default 0; wrk on LOAD_CPU, default 1),
# alternated; then wrk -c64 for 30 s while SIGHUP is sent every 5 s, to
# m0serve --workers 2 and gunicorn -w 2, counting non-2xx and socket
# errors. QUICK=1 shortens the first part.
.PHONY: bench-workers
bench-workers: packages-bench-python build
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms workers-arms.json \
		-server-cpu $(or $(SERVER_CPU),0) -load-cpu $(or $(LOAD_CPU),1) \
		-arms m0serve-1proc,m0serve-w1,m0serve-w2 -scenarios c16,c64 $(if $(QUICK),-quick)
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms workers-arms.json \
		-server-cpu $(or $(SERVER_CPU),0) -load-cpu $(or $(LOAD_CPU),1) \
		-arms m0serve-w2,gunicorn-w2 -scenarios c64 -rounds 1 -warmup 1s -duration 30s -reload-every 5s

# --metrics-address's cost (bench/README.md, Metrics section): server CPU
# per request of --native hello without and with the metrics, in one
# process and under a master with one worker, pinned as bench-workers'
# arms are, alternated. QUICK=1 shortens it.
.PHONY: bench-metrics
bench-metrics: packages-bench build
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms metrics-arms.json \
		-server-cpu $(or $(SERVER_CPU),0) -load-cpu $(or $(LOAD_CPU),1) -scenarios c16,c64 $(if $(QUICK),-quick)

# TLS's cost (bench/README.md, TLS section): HTTPS keep-alive against
# m0serve in the clear, nginx terminating TLS in front of m0serve (the
# pair's CPU), and Granian, uvicorn and gunicorn with their own --ssl-*
# (bench/.venv), WSGI and ASGI bare hello at c16 and c64; then a
# connection per request (handshake-bound) with ECDSA P-256 and RSA-2048
# certificates, each run alternated: wrk's (which resumes its sessions,
# m0serve only) and bench/tlshandshake's full handshakes against m0serve,
# Granian and uvicorn (bench/tls-handshake-arms.json). The certificates
# are throwaway ones made here. About 10 minutes; QUICK=1 shortens it.
comma := ,
space := $(subst ,, )
TLS_KEEPALIVE_ARMS := m0serve-wsgi m0serve-wsgi-tls nginx-tls+m0serve-wsgi granian-fast-wsgi-tls gunicorn-gthread-wsgi-tls \
	m0serve-asgi m0serve-asgi-tls nginx-tls+m0serve-asgi granian-fast-asgi-tls uvicorn-asgi-tls
.PHONY: bench-tls
bench-tls: packages-bench build $(BENCH_VENV)/.installed
	@[ -f bench/tls/cert.pem ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-subj /CN=localhost -keyout bench/tls/key.pem -out bench/tls/cert.pem 2>/dev/null
	@[ -f bench/tls/rsa-cert.pem ] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 \
		-subj /CN=localhost -keyout bench/tls/rsa-key.pem -out bench/tls/rsa-cert.pem 2>/dev/null
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms tls-arms.json \
		-server-cpu $(or $(SERVER_CPU),0) -load-cpu $(or $(LOAD_CPU),1) -scenarios c16,c64 $(if $(QUICK),-quick) \
		-arms $(subst $(space),$(comma),$(strip $(TLS_KEEPALIVE_ARMS)))
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms tls-arms.json \
		-server-cpu $(or $(SERVER_CPU),0) -load-cpu $(or $(LOAD_CPU),1) -scenarios c16-close $(if $(QUICK),-quick) \
		-arms m0serve-native,m0serve-native-tls-ecdsa,m0serve-native-tls-rsa
	cd bench && $(GO) build -o ../bin/tlshandshake ./tlshandshake
	taskset -c $(or $(LOAD_CPU),1) bin/tlshandshake -server-cpu $(or $(SERVER_CPU),0) $(if $(QUICK),-n 400 -rounds 1,-rounds 3) \
		ecdsa bench/tls/cert.pem bench/tls/key.pem rsa bench/tls/rsa-cert.pem bench/tls/rsa-key.pem

# make wheel: the distribution m0serve-go (import package and command
# m0serve; the name m0serve on PyPI is the Mojo m0serve's):
# dist/m0serve_go-<VERSION>.tar.gz (the sdist) and
# dist/m0serve_go-<VERSION>-cpXY-cpXY-manylinux_2_17_<arch>.whl for
# Debian's python3 (the CPython bin/m0serve embeds); WHEEL_PYTHONS=all
# adds every pyenv CPython 3.10+ here (one per minor version: the ones
# test-pythons tests), or names interpreters. Each wheel's extension
# module is built from the sdist (packaging/build-wheel.sh) with the
# tools pinned in packaging/tools-requirements.txt, in a venv made here.
# wheel-cache downloads, once, what the wheel test installs offline
# beside m0serve-go (tests/wheel-requirements.txt: Flask for each CPython
# minor version, and setuptools for the sdist's build).
# WHEEL_PYTHONS=all adds the wheels for the CPythons Debian's sid has
# beyond this machine's (SID_PYTHONS: 3.14 3.15), which make wheel-sid
# builds and tries alone (after make wheel, as root): in a Debian sid root
# made once with debootstrap (build/sid-amd64-root), with Debian's own
# interpreters, each installed with pip --find-links into a venv there
# and serving WSGI and ASGI (packaging/root-wheels.sh). make wheel-arm64
# does the same for Debian 12's CPython 3.11 on arm64, cross-built here
# and run under qemu-user (build/bookworm-arm64-root).
.PHONY: wheel packages-wheel wheel-tools wheel-cache wheel-sid wheel-arm64
WHEEL_TOOLS   := build/packaging-venv
WHEEL_CACHE   := build/wheel-cache
WHEEL_PYTHONS ?= /usr/bin/python3
SID_PYTHONS   ?= 3.14 3.15
WHEEL_SID_PACKAGES := $(WHEEL_PACKAGES) debootstrap curl
WHEEL_ARM64_PACKAGES := $(WHEEL_SID_PACKAGES) qemu-user-static
packages-wheel:
	@$(INSTALL_PACKAGES) $(WHEEL_PACKAGES)

$(WHEEL_TOOLS)/.installed: packaging/tools-requirements.txt | packages-wheel
	rm -rf $(WHEEL_TOOLS)
	/usr/bin/python3 -m venv $(WHEEL_TOOLS)
	$(WHEEL_TOOLS)/bin/pip install --quiet --require-hashes --only-binary :all: -r packaging/tools-requirements.txt
	@touch $@

$(WHEEL_CACHE)/.filled: tests/wheel-requirements.txt $(WHEEL_TOOLS)/.installed
	@for version in 3.10 3.11 3.12 3.13; do \
		$(WHEEL_TOOLS)/bin/pip download --quiet --require-hashes --no-deps --only-binary :all: \
			--python-version $$version --implementation cp --platform manylinux2014_$$(uname -m) \
			-d $(WHEEL_CACHE) -r tests/wheel-requirements.txt || exit 1; \
	done
	@touch $@

wheel-sid: wheel
	@$(INSTALL_PACKAGES) $(WHEEL_SID_PACKAGES)
	sh packaging/root-wheels.sh $(SID_PYTHONS)

wheel-arm64: wheel
	@$(INSTALL_PACKAGES) $(WHEEL_ARM64_PACKAGES)
	SUITE=bookworm ARCH=arm64 sh packaging/root-wheels.sh 3.11

wheel-tools: $(WHEEL_TOOLS)/.installed
wheel-cache: $(WHEEL_CACHE)/.filled

wheel: wheel-tools
	sh packaging/build-wheel.sh $(if $(filter all,$(WHEEL_PYTHONS)),/usr/bin/python3 $$(sh scripts/other-pythons.sh),$(WHEEL_PYTHONS))
	$(if $(filter all,$(WHEEL_PYTHONS)),@$(INSTALL_PACKAGES) $(WHEEL_SID_PACKAGES))
	$(if $(filter all,$(WHEEL_PYTHONS)),sh packaging/root-wheels.sh $(SID_PYTHONS))
	@echo "make wheel: m0serve-go $(VERSION) in dist/; install it with: pip install --find-links dist m0serve-go"

# The extension module (the wheel) against bin/m0serve, both in Debian's
# CPython 3.11 (Flask from Debian: the venv sees the system's packages),
# Flask and asgi_bare at c16 and c64, alternated (bench/README.md, The
# extension module), then the start-up time of both to the first answered
# request (bench/startup_time.py). QUICK=1 for a smoke run.
.PHONY: bench-extension
bench-extension: packages-bench-python build wheel
	rm -rf build/bench-ext-venv
	/usr/bin/python3 -m venv --system-site-packages build/bench-ext-venv
	build/bench-ext-venv/bin/pip install --quiet --no-index dist/m0serve_go-$(VERSION)-cp311-cp311-manylinux_*.whl
	cd bench && $(GO) run $(LDFLAGS) ./harness -native=false -extra-arms extension-arms.json \
		-scenarios c16,c64 $(if $(QUICK),-quick)
	/usr/bin/python3 bench/startup_time.py $(if $(QUICK),3,20) \
		"bin/m0serve=bin/m0serve --app-dir bench/apps --port {port} flask_json:app" \
		"extension=build/bench-ext-venv/bin/m0serve --app-dir bench/apps --port {port} flask_json:app"

# The Kubernetes example decoded with the Kubernetes API types (a module
# of its own, deploy/kubernetes/go.mod, so the server carries no k8s
# dependency), and the image's command run as the manifest runs it, in
# private mount and network namespaces (as root; no container engine):
# make test runs it too.
.PHONY: test-deploy
test-deploy: packages-deploy build
	cd deploy/kubernetes && $(GO) vet ./... && M0_BINARY=$(abspath $(BIN)) $(GO) test -count=1 ./...

# The HttpArena entries (arena/): HttpArena's scripts/validate.sh, as it
# is, for each, their Dockerfile's command run without a container
# (arena/validate/run.sh; arena/README.md says why). HTTPARENA=DIR runs a
# checkout's script and data instead of the pinned copy; make test runs it
# too (tests/arena_test.go). The database profiles run against Debian's
# PostgreSQL; the entries' drivers (their requirements.txt) come from the
# package index into arena/validate/.venvs.
.PHONY: arena-validate
arena-validate: build
	@$(INSTALL_PACKAGES) curl iproute2 util-linux postgresql python3-venv
	M0SERVE=$(abspath $(BIN)) arena/validate/run.sh

# HttpArena's profiles scaled to one core: the entries beside uvicorn and
# Granian (bench/.venv) and, with FASTHTTP=PATH, HttpArena's go-fasthttp
# entry built from its folder; CPU per request beside requests/s
# (arena/README.md); async-db and crud against Debian's PostgreSQL. About
# 8 minutes.
.PHONY: arena-bench
arena-bench: packages-bench build
	python3 arena/bench.py $(if $(FASTHTTP),-fasthttp $(FASTHTTP))

# The image from the Dockerfile, built and run with podman: non-root,
# epoll under the default seccomp profile, a drained stop
# (tests/container/test.sh; minutes the first time: debootstrap).
.PHONY: test-container
test-container:
	@$(INSTALL_PACKAGES) podman debootstrap curl
	sh tests/container/test.sh

