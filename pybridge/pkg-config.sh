#!/bin/sh
# pkg-config for cgo that lets M0_PYTHON_PC choose the Python to embed,
# and M0_PYTHON_LINK=static link it statically.
#
# cgo asks for "python3-embed"; with M0_PYTHON_PC set (a path to a
# python-3.X-embed.pc or python3-embed.pc) that file answers instead, and
# --libs adds an rpath to its libdir, so a Python outside the system's
# library path (pyenv, /opt) is found at run time without LD_LIBRARY_PATH.
# Use: PKG_CONFIG=$PWD/pybridge/pkg-config.sh M0_PYTHON_PC=... \
#        CGO_CFLAGS="-O2 -g $(pkg-config --cflags-only-I $M0_PYTHON_PC)" go build
# CGO_CFLAGS is there for the build cache: cmd/go keys it on CGO_CFLAGS but
# not on pkg-config's answer, and would reuse a build for another Python.
# (The Makefile sets all three when M0_PYTHON_PC is given.)
#
# With M0_PYTHON_LINK=static, --libs answers that Python's own archive
# (LIBPL/LIBRARY, with the libraries it needs) where its build left one:
# Debian's libpython3.X.a is built with profile-guided optimisation and
# without -fPIC, as its /usr/bin/python3 is, and its shared library is
# not; Python code ran 0.82x the time in the static link. The symbols are
# exported (--export-dynamic) for the extension modules, which Debian
# does not link against libpython, as for its python3. Without an
# archive, the answer is the shared library's. Set CGO_LDFLAGS apart for
# a static build (the Makefile does), for the build cache again.
real=${M0_PKG_CONFIG:-pkg-config}
pc=${M0_PYTHON_PC:-python3-embed}

# static_libs prints the link flags of the archive of $pc's Python, or
# fails where that Python's build left none.
static_libs() {
	python=$("$real" --variable=exec_prefix "$pc")/bin/python$("$real" --modversion "$pc") || return 1
	[ -x "$python" ] || return 1
	"$python" - <<'EOF'
import os, sys, sysconfig
var = sysconfig.get_config_var
archive = os.path.join(var("LIBPL") or "", var("LIBRARY") or "")
if not os.path.isfile(archive):
    sys.exit(1)
flags = []
for flag in " ".join(var(k) or "" for k in ("LIBS", "SYSLIBS", "MODLIBS")).split():
    if flag not in flags:
        flags.append(flag)
print("-Wl,--export-dynamic", archive, *flags)
EOF
}

if [ -n "$M0_PYTHON_PC" ] && [ ! -f "$M0_PYTHON_PC" ]; then
	echo "pkg-config.sh: M0_PYTHON_PC=$M0_PYTHON_PC: no such file" >&2
	exit 1
fi
libs=0
for arg in "$@"; do
	[ "$arg" = "--libs" ] && libs=1
done
if [ "$libs" = 1 ] && [ "${M0_PYTHON_LINK:-shared}" = static ] && static_libs; then
	exit 0
fi
if [ -z "$M0_PYTHON_PC" ]; then
	exec "$real" "$@"
fi
set -- $(for arg in "$@"; do
	if [ "$arg" = "python3-embed" ]; then echo "$M0_PYTHON_PC"; else echo "$arg"; fi
done)
out=$("$real" "$@") || exit $?
if [ "$libs" = 1 ]; then
	libdir=$("$real" --variable=libdir "$M0_PYTHON_PC")
	out="$out -Wl,-rpath,$libdir"
fi
echo "$out"
