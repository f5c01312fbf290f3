#!/bin/sh
# build-wheel.sh PYTHON [BINARY]: builds
# dist/m0serve-<VERSION>-cpXY-cpXY-linux_<arch>.whl for the CPython
# PYTHON (an interpreter: /usr/bin/python3, a pyenv build's bin/python3).
# The binary is built against that Python's libpython (pkg-config.sh adds
# an rpath to its LIBDIR when it is not the system's; the system's is
# linked statically under make, as make build does), or BINARY, already
# built for it, is taken as it is. The wheel is made by python3 -m build
# with setuptools (BUILD_PYTHON, default /usr/bin/python3, runs it) from a
# staged copy of packaging/ under BUILD_DIR (default build), so the tree
# stays clean. OUTDIR (default dist) is where the wheel goes; its path is
# the last line out.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: build-wheel.sh PYTHON [BINARY]" >&2
	exit 2
fi
python=$1
binary=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
outdir=${OUTDIR:-$root/dist}
build_python=${BUILD_PYTHON:-/usr/bin/python3}
go=${GO:-go}

version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
tag=cp$(echo "$version" | tr -d .)
release=$(cat "$root/VERSION")
stage=${BUILD_DIR:-$root/build}/wheel-$tag
mkdir -p "$(dirname "$stage")"

if [ -z "$binary" ]; then
	binary=$stage.bin
	commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
	ldflags="-checklinkname=0 -X github.com/m0serve/m0serve/cli.version=$release -X github.com/m0serve/m0serve/cli.commit=$commit"
	prefix=$("$python" -c 'import sys; print(sys.base_prefix)')
	if [ "$(pkg-config --modversion python3-embed 2>/dev/null)" = "$version" ] &&
		[ "$(pkg-config --variable=prefix python3-embed)" = "$prefix" ]; then
		(cd "$root" && "$go" build -ldflags="$ldflags" -o "$binary" ./cmd/m0serve)
	else
		pc=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("LIBPC") or "")')/python-$version-embed.pc
		if [ ! -f "$pc" ]; then
			echo "build-wheel: $python has no $pc: not an embeddable CPython (built without --enable-shared?)" >&2
			exit 1
		fi
		(cd "$root" && PKG_CONFIG="$root/pybridge/pkg-config.sh" M0_PYTHON_PC=$pc M0_PYTHON_LINK=shared \
			CGO_CFLAGS="-O2 -g $(pkg-config --cflags-only-I "$pc")" \
			"$go" build -ldflags="$ldflags" -o "$binary" ./cmd/m0serve)
	fi
fi
embeds=$("$binary" --version)
case "$embeds" in
*"CPython $version."*) ;;
*)
	echo "build-wheel: $binary is not built for CPython $version: $embeds" >&2
	exit 1
	;;
esac

rm -rf "$stage"
mkdir -p "$stage/m0serve/bin" "$outdir"
cp "$root/packaging/pyproject.toml" "$root/packaging/setup.py" "$root/VERSION" "$root/README.md" "$stage/"
cp "$root/packaging/m0serve/"*.py "$stage/m0serve/"
cp "$binary" "$stage/m0serve/bin/m0serve"
chmod 0755 "$stage/m0serve/bin/m0serve"
printf '# Written by build-wheel.sh: the CPython the binary embeds.\nPYTHON_VERSION = "%s"\n' "$version" >"$stage/m0serve/_build.py"

"$build_python" -m build --wheel --no-isolation --outdir "$outdir" "$stage" >"$stage.log" 2>&1 || {
	cat "$stage.log" >&2
	exit 1
}
wheel=$(ls "$outdir"/m0serve-"$release"-"$tag"-"$tag"-linux_*.whl)
echo "$wheel"
