#!/bin/sh
# build-wheel.sh PYTHON...: builds dist/m0serve_go-<VERSION>.tar.gz, the
# sdist of the distribution m0serve-go (files spell it m0serve_go, PEP
# 625), then from it one wheel per CPython given (an interpreter:
# /usr/bin/python3, a pyenv build's bin/python3):
# dist/m0serve_go-<VERSION>-cpXY-cpXY-manylinux_2_17_<arch>.whl, whose
# extension module is m0serve's Go packages built with
# -buildmode=c-shared against that Python's headers (packaging/setup.py),
# with Zig's C compiler as cgo's CC (ziglang, pinned in the tools) linking
# against glibc 2.17 whatever this machine's glibc is: the tag is
# manylinux_2_17 (CentOS 7, RHEL 8, Ubuntu 18.04, Debian 10 and newer).
# GLIBC=2.28 (say) aims higher; CC=gcc builds with the machine's own
# compiler, and the tag is then the machine's glibc.
#
# The sdist is packaging/ with the Go packages the extension is built
# from (go list -deps of cmd/m0serve-ext, tests left out) and their
# dependencies vendored, so that it builds offline. Each wheel is built
# from a fresh copy of the sdist, then checked: its extension needs no
# libpython and no glibc symbol newer than the tag's, and auditwheel
# agrees with the tag. TOOLS_PYTHON (default build/packaging-venv/bin/python,
# which the Makefile makes) runs the build frontend, setuptools and
# auditwheel; BUILD_DIR (default build) holds the staging, OUTDIR
# (default dist) the results, whose paths are the last lines out.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: build-wheel.sh PYTHON..." >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
outdir=${OUTDIR:-$root/dist}
build=${BUILD_DIR:-$root/build}
tools=${TOOLS_PYTHON:-$root/build/packaging-venv/bin/python}
go=${GO:-go}
release=$(cat "$root/VERSION")
# The distribution's name as its files spell it.
dist=m0serve_go
arch=$(uname -m)
# The C compiler, the newest glibc symbol version the extension may need,
# and its tag.
if [ -z "${CC:-}" ]; then
	zig=$("$tools" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null) || {
		echo "build-wheel: no ziglang in $tools: run make wheel-tools again (or set CC)" >&2
		exit 1
	}
	max_glibc=${GLIBC:-2.17}
	CC="$zig cc -target $arch-linux-gnu.$max_glibc"
else
	max_glibc=$(ldd --version | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p')
fi
export CC
platform=manylinux_$(echo "$max_glibc" | tr . _)_$arch

if [ ! -x "$tools" ]; then
	echo "build-wheel: no $tools: run make wheel-tools (or set TOOLS_PYTHON)" >&2
	exit 1
fi
mkdir -p "$outdir" "$build"

# The sdist's tree.
stage=$build/sdist-src
rm -rf "$stage"
mkdir -p "$stage/m0serve" "$stage/go"
cp "$root/packaging/pyproject.toml" "$root/packaging/setup.py" "$root/packaging/MANIFEST.in" \
	"$root/VERSION" "$root/README.md" "$root/LICENSE" "$stage/"
cp "$root/packaging/m0serve/"*.py "$stage/m0serve/"
# m0serve.m0pub: one file, which bin/m0serve embeds (realtime/publisher.go).
cp "$root/realtime/m0pub.py" "$stage/m0serve/"
# m0serve.grant: the same way (grant/module.go).
cp "$root/grant/grant.py" "$stage/m0serve/"
git -C "$root" rev-parse --short HEAD >"$stage/COMMIT" 2>/dev/null || echo unknown >"$stage/COMMIT"
cp "$root/go.mod" "$root/go.sum" "$stage/go/"
# Every platform's imports: go mod vendor checks them all (kq's for the
# BSDs and macOS).
packages=$(cd "$root" && for goos in linux darwin freebsd; do
	GOOS=$goos CGO_ENABLED=1 "$go" list -e -deps -f '{{if and .Module .Module.Main}}{{.Dir}}{{end}}' ./cmd/m0serve-ext
done | sort -u)
for dir in $packages; do
	rel=${dir#"$root"/}
	mkdir -p "$stage/go/$rel"
	# The package's own files (tracked, or new and not ignored), not
	# its tests nor its subpackages.
	(cd "$root" && git ls-files -co --exclude-standard -- "$rel") | while read -r file; do
		case "$file" in
		*_test.go | */testdata/*) continue ;;
		esac
		if [ "$(dirname "$file")" = "$rel" ]; then
			cp "$root/$file" "$stage/go/$file"
		fi
	done
done
(cd "$stage/go" && GOFLAGS=-mod=mod "$go" mod vendor)

log=$build/build-wheel.log
"$tools" -m build --sdist --no-isolation --outdir "$outdir" "$stage" >"$log" 2>&1 || {
	cat "$log" >&2
	exit 1
}
sdist=$outdir/$dist-$release.tar.gz
[ -f "$sdist" ] || {
	echo "build-wheel: the sdist is not $sdist" >&2
	exit 1
}

built=""
for python in "$@"; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	tag=cp$(echo "$version" | tr -d .)
	src=$build/wheel-$tag
	rm -rf "$src" "$outdir/$dist-$release-$tag-$tag-"*.whl
	mkdir -p "$src"
	tar -xzf "$sdist" -C "$src" --strip-components=1
	M0_TARGET_PYTHON=$python M0_WHEEL_PLATFORM=$platform \
		"$tools" -m build --wheel --no-isolation --outdir "$outdir" "$src" >"$log" 2>&1 || {
		cat "$log" >&2
		exit 1
	}
	wheel=$outdir/$dist-$release-$tag-$tag-$platform.whl
	[ -f "$wheel" ] || {
		echo "build-wheel: the wheel for $python is not $wheel" >&2
		exit 1
	}

	# The checks behind the tag: no libpython (the symbols come from the
	# interpreter), no glibc newer than max_glibc, and auditwheel's word.
	ext=$(ls "$src"/build/lib*/m0serve/_m0serve*.so)
	needed=$(readelf -d "$ext" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	case "$needed" in
	*libpython*)
		echo "build-wheel: $ext links libpython ($needed)" >&2
		exit 1
		;;
	esac
	newest=$(objdump -T "$ext" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
	if [ "$(printf '%s\n%s\n' "$newest" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
		echo "build-wheel: $ext needs glibc $newest, newer than $max_glibc ($platform)" >&2
		exit 1
	fi
	show=$("$tools" -m auditwheel show "$wheel" 2>&1) || {
		echo "$show" >&2
		exit 1
	}
	case "$show" in
	*"\"$platform\""*) ;;
	*)
		echo "build-wheel: auditwheel does not agree with $platform for $wheel:" >&2
		echo "$show" >&2
		exit 1
		;;
	esac
	built="$built $wheel"
done
echo "$sdist"
for wheel in $built; do
	echo "$wheel"
done
