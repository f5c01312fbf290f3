#!/bin/sh
# other-pythons.sh: the interpreters of the embeddable CPython 3.10+
# builds under PYENV_ROOT (default /root/.pyenv) and under build/pythons
# (make pythons), one per minor version, other than /usr/bin/python3's
# minor version; one path a line. make wheel builds a wheel for each,
# make test-pythons tests each. Free-threaded builds (3.14t) are left
# out, with a line on stderr: the bridge builds only against a CPython
# with a GIL (pybridge/shim.h).
root=$(cd "$(dirname "$0")/.." && pwd)
default=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
seen=" $default "
for python in "${PYENV_ROOT:-/root/.pyenv}"/versions/3.*/bin/python3 "${PYTHONS_DIR:-$root/build/pythons}"/3.*/bin/python3; do
	[ -x "$python" ] || continue
	version=$("$python" -c 'import sys, sysconfig
if sys.version_info >= (3, 10) and sysconfig.get_config_var("Py_ENABLE_SHARED"):
    print("%d.%d%s" % (sys.version_info[:2] + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "",)))' 2>/dev/null)
	[ -n "$version" ] || continue
	case "$version" in
	*t)
		echo "other-pythons: $python: CPython $version is free-threaded; the bridge needs the GIL (pybridge/shim.h): left out" >&2
		continue
		;;
	esac
	case "$seen" in *" $version "*) continue ;; esac
	seen="$seen$version "
	echo "$python"
done
