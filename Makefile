# m0serve build. Every go build, test, vet and bench carries
# -checklinkname=0: giouring reaches runtime internals through go:linkname,
# which Go >= 1.23 refuses by default.
GO          ?= go
LDFLAGS     := -ldflags=-checklinkname=0
BIN         := bin/m0serve
FUZZTIME    ?= 10s
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOBIN       := $(shell $(GO) env GOPATH)/bin

# Debian packages the build, the tests and the benchmarks need. `setup`
# installs only the missing ones, so it is quick when nothing is missing.
DEB_PACKAGES := curl wrk strace pkg-config python3-dev \
	python3-flask python3-django python3-falcon gunicorn \
	python3-uvloop python3-starlette python3-fastapi chromium

.PHONY: all build test unit lint run bench bench-quick bench-parsers fuzz setup vet fmt-check cross-check clean

all: build

setup:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "setup: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build:
	$(GO) build $(LDFLAGS) -o $(BIN) ./cmd/m0serve

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(LDFLAGS) ./...

lint: vet
	@test -x $(GOBIN)/staticcheck || GOFLAGS= $(GO) install $(STATICCHECK)
	$(GOBIN)/staticcheck ./...

# The kqueue backend and every pure-Go package must build and vet for the
# BSDs and macOS (cgo off: the Python bridge is Linux-built here).
cross-check:
	@for target in darwin/arm64 freebsd/amd64; do \
		echo "cross-check $$target"; \
		GOOS=$${target%/*} GOARCH=$${target#*/} CGO_ENABLED=0 $(GO) vet $(LDFLAGS) ./http1/ ./loop/... ./kq/ || exit 1; \
		GOOS=$${target%/*} GOARCH=$${target#*/} CGO_ENABLED=0 $(GO) build $(LDFLAGS) ./http1/ ./loop/... ./kq/ || exit 1; \
	done

test: setup fmt-check lint cross-check build
	$(GO) test $(LDFLAGS) -count=1 ./...
	cd bench && $(GO) test $(LDFLAGS) -count=1 ./...

# Serves the example WSGI app until Ctrl-C; the first log line says where
# and on which backend.
run: setup build
	$(BIN) --app-dir examples hello_wsgi:app

# Per-part Go benchmarks first, then the whole server beside its peers
# (bench/README.md says how to read the table).
bench: setup build
	$(GO) test $(LDFLAGS) -run '^$$' -bench . -benchmem ./http1/ ./loop/ ./uring/ ./epoll/
	cd bench && $(GO) run $(LDFLAGS) ./harness

bench-quick: setup build
	cd bench && $(GO) run $(LDFLAGS) ./harness -quick

# http1 beside fasthttp and net/http on the same request heads, one run.
bench-parsers:
	cd bench/parsers && $(GO) test $(LDFLAGS) -run '^$$' -bench . -benchmem -count 5 .

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test $(LDFLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test $(LDFLAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin
