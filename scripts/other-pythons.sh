#!/bin/sh
# other-pythons.sh: the interpreters of the embeddable CPython 3.10+
# builds under PYENV_ROOT (default /root/.pyenv), one per minor version,
# other than /usr/bin/python3's minor version; one path a line. make wheel
# builds a wheel for each, make test-pythons tests each.
default=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
seen=" $default "
for python in "${PYENV_ROOT:-/root/.pyenv}"/versions/3.*/bin/python3; do
	[ -x "$python" ] || continue
	version=$("$python" -c 'import sys, sysconfig
if sys.version_info >= (3, 10) and sysconfig.get_config_var("Py_ENABLE_SHARED"):
    print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
	[ -n "$version" ] || continue
	case "$seen" in *" $version "*) continue ;; esac
	seen="$seen$version "
	echo "$python"
done
