# m0serve build. Every go build, test and bench carries -checklinkname=0:
# giouring reaches runtime internals through go:linkname, which Go >= 1.23
# refuses by default.
GO        ?= go
LDFLAGS   := -ldflags=-checklinkname=0
GOFLAGS_T := $(LDFLAGS) -count=1
BIN       := bin/m0serve
FUZZTIME  ?= 10s

# Debian packages the build, tests and benchmarks need. `setup` installs the
# missing ones only, so it is quick when nothing is missing.
DEB_PACKAGES := curl wrk strace

.PHONY: all build test run bench bench-quick fuzz setup vet fmt-check cross-check clean

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

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: setup fmt-check vet build
	$(GO) test $(GOFLAGS_T) ./...

run: setup build
	$(BIN) --help

bench: build
	$(GO) test $(LDFLAGS) -run '^$$' -bench . -benchmem ./http1/

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test $(LDFLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test $(LDFLAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin
