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
# not. Linked statically, a pure-Python loop ran in 0.82x the time and a
# Flask request took 0.93x the CPU (bench-python). The symbols are
# exported (--export-dynamic) for the extension modules, which Debian
# does not link against libpython, as for its python3. --cflags then
# defines M0_PYTHON_PREFIX, where pybridge finds the standard library
# (home.go), which it otherwise finds from libpython's path. Without an
# archive, or with a prefix cgo would refuse in a -D (a '-' in it), the
# answers are the shared library's. Set CGO_LDFLAGS apart for a static
# build (the Makefile does), for the build cache again.
#
# With M0_PYTHON_LINK=none (the extension module, cmd/m0serve-ext), no
# libpython is linked: the host interpreter provides the C API. --libs
# answers nothing and --cflags the include directory M0_PYTHON_INCLUDE
# (sysconfig's "include" path; no .pc file is needed, so any CPython with
# its headers builds it). packaging/setup.py sets both.
real=${M0_PKG_CONFIG:-pkg-config}
pc=${M0_PYTHON_PC:-python3-embed}

# static_link prints the prefix of $pc's Python on one line and the link
# flags of its archive on the next, or fails where there is no archive.
static_link() {
	python=$("$real" --variable=exec_prefix "$pc")/bin/python$("$real" --modversion "$pc") || return 1
	[ -x "$python" ] || return 1
	"$python" - <<'EOF'
import os, re, sys, sysconfig
var = sysconfig.get_config_var
archive = os.path.join(var("LIBPL") or "", var("LIBRARY") or "")
prefix = var("prefix") or ""
if not os.path.isfile(archive) or not re.fullmatch(r"/[A-Za-z0-9_./]*", prefix):
    sys.exit(1)
flags = []
for flag in " ".join(var(k) or "" for k in ("LIBS", "SYSLIBS", "MODLIBS")).split():
    if flag not in flags:
        flags.append(flag)
print(prefix)
print("-Wl,--export-dynamic", archive, *flags)
EOF
}

if [ -n "$M0_PYTHON_PC" ] && [ ! -f "$M0_PYTHON_PC" ]; then
	echo "pkg-config.sh: M0_PYTHON_PC=$M0_PYTHON_PC: no such file" >&2
	exit 1
fi
if [ "${M0_PYTHON_LINK:-}" = none ]; then
	if [ -z "${M0_PYTHON_INCLUDE:-}" ] || [ ! -f "$M0_PYTHON_INCLUDE/Python.h" ]; then
		echo "pkg-config.sh: M0_PYTHON_LINK=none wants M0_PYTHON_INCLUDE, a directory with Python.h (got \"${M0_PYTHON_INCLUDE:-}\")" >&2
		exit 1
	fi
	for arg in "$@"; do
		case "$arg" in
		--cflags) echo "-I$M0_PYTHON_INCLUDE" && exit 0 ;;
		--libs) echo && exit 0 ;;
		esac
	done
	exit 0
fi
libs=0 cflags=0
for arg in "$@"; do
	[ "$arg" = "--libs" ] && libs=1
	[ "$arg" = "--cflags" ] && cflags=1
done
static=
if [ "${M0_PYTHON_LINK:-shared}" = static ] && [ $((libs + cflags)) = 1 ]; then
	static=$(static_link) || static=
fi
if [ -n "$static" ] && [ "$libs" = 1 ]; then
	echo "$static" | sed 1d
	exit 0
fi
if [ -z "$M0_PYTHON_PC" ]; then
	out=$("$real" "$@") || exit $?
else
	set -- $(for arg in "$@"; do
		if [ "$arg" = "python3-embed" ]; then echo "$M0_PYTHON_PC"; else echo "$arg"; fi
	done)
	out=$("$real" "$@") || exit $?
	if [ "$libs" = 1 ]; then
		out="$out -Wl,-rpath,$("$real" --variable=libdir "$M0_PYTHON_PC")"
	fi
fi
if [ -n "$static" ]; then
	# cgo splits this answer as a shell would: the quotes are escaped.
	out="$out -DM0_PYTHON_PREFIX=\\\"$(echo "$static" | sed -n 1p)\\\""
fi
echo "$out"
