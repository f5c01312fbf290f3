#!/bin/sh
# pkg-config for cgo that lets M0_PYTHON_PC choose the Python to embed.
# cgo asks for "python3-embed"; with M0_PYTHON_PC set (a path to a
# python-3.X-embed.pc or python3-embed.pc) that file answers instead, and
# --libs adds an rpath to its libdir, so a Python outside the system's
# library path (pyenv, /opt) is found at run time without LD_LIBRARY_PATH.
# Use: PKG_CONFIG=$PWD/pybridge/pkg-config.sh M0_PYTHON_PC=... \
#        CGO_CFLAGS="-O2 -g $(pkg-config --cflags-only-I $M0_PYTHON_PC)" go build
# CGO_CFLAGS is there for the build cache: cmd/go keys it on CGO_CFLAGS but
# not on pkg-config's answer, and would reuse a build for another Python.
# (The Makefile sets all three when M0_PYTHON_PC is given.)
real=${M0_PKG_CONFIG:-pkg-config}
if [ -z "$M0_PYTHON_PC" ]; then
	exec "$real" "$@"
fi
if [ ! -f "$M0_PYTHON_PC" ]; then
	echo "pkg-config.sh: M0_PYTHON_PC=$M0_PYTHON_PC: no such file" >&2
	exit 1
fi
libs=0
for arg in "$@"; do
	[ "$arg" = "--libs" ] && libs=1
done
set -- $(for arg in "$@"; do
	if [ "$arg" = "python3-embed" ]; then echo "$M0_PYTHON_PC"; else echo "$arg"; fi
done)
out=$("$real" "$@") || exit $?
if [ "$libs" = 1 ]; then
	libdir=$("$real" --variable=libdir "$M0_PYTHON_PC")
	out="$out -Wl,-rpath,$libdir"
fi
echo "$out"
