#!/bin/sh
# build-pythons.sh [NAME...]: builds the CPythons that test the wheels
# and the bridge beyond pyenv's, into build/pythons/NAME (default: 3.14
# 3.14t 3.15 3.15t; a trailing t is the free-threaded build,
# --disable-gil), each once: a NAME whose bin/python3 is there is
# skipped. The sources are CPython's own release tarballs as Debian
# ships them: the .orig.tar.xz of sid's source packages python3.14 and
# python3.15, fetched with apt-get source from a deb-src line for sid on
# the mirror this machine's apt already uses (its sources under
# /etc/apt), in a private apt state under build/pythons/apt, so that
# neither a host nor the system's apt configuration changes. apt checks
# each file against the signed Sources index.
#
# Each is configured with --enable-shared (the bridge embeds its
# libpython; the wheel test needs Py_ENABLE_SHARED, as for pyenv's) and
# an rpath to its own lib, without PGO or LTO, and built with JOBS
# (default 2) jobs, one interpreter at a time. The build libraries it
# needs are Debian's (PYTHON_BUILD_PACKAGES in the Makefile).
#
# With PYTHONS_OPTIONAL=1 (make test-pythons), one that cannot be had
# (its source refused by the mirror, a failed build) is named in one line
# and left out, and the others go on; without, that stops the script.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${PYTHONS_DIR:-$root/build/pythons}
jobs=${JOBS:-2}
[ $# -gt 0 ] || set -- 3.14 3.14t 3.15 3.15t

uri=$(sh "$root/scripts/debian-mirror.sh")

apt=$dest/apt
aptopts="-o Dir::Etc::SourceList=$apt/sid.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$apt/lists
	-o Dir::Cache=$apt/cache -o Debug::NoLocking=1"
# fetch_source PACKAGE: the orig tarball of sid's PACKAGE, into $dest/src
# (once); prints its path. The index is fetched again for each download.
fetch_source() {
	mkdir -p "$dest/src"
	found=$(ls "$dest/src/$1"_*.orig.tar.xz 2>/dev/null | tail -1)
	if [ -z "$found" ]; then
		mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
		printf 'Types: deb-src\nURIs: %s\nSuites: sid\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			"$uri" >"$apt/sid.sources"
		# shellcheck disable=SC2086
		apt-get -q $aptopts update >&2 || return 1
		# shellcheck disable=SC2086
		(cd "$dest/src" && apt-get -q $aptopts source --download-only "$1" >&2) || return 1
		found=$(ls "$dest/src/$1"_*.orig.tar.xz 2>/dev/null | tail -1)
	fi
	[ -n "$found" ] && echo "$found"
}

for name in "$@"; do
	prefix=$dest/$name
	if [ -x "$prefix/bin/python3" ]; then
		echo "build-pythons: $name: $prefix/bin/python3 is there"
		continue
	fi
	version=${name%t}
	case "$name" in
	*t) gil=--disable-gil ;;
	*) gil= ;;
	esac
	tarball=$(fetch_source "python$version") || tarball=
	if [ -z "$tarball" ]; then
		echo "build-pythons: $name: apt-get source python$version from sid on $uri failed (the output above says why)" >&2
		[ "${PYTHONS_OPTIONAL:-}" = 1 ] && continue
		exit 1
	fi
	work=$dest/build-$name
	rm -rf "$work" "$prefix"
	mkdir -p "$work"
	tar -xJf "$tarball" -C "$work" --strip-components=1
	log=$dest/build-$name.log
	echo "build-pythons: $name from $(basename "$tarball") into $prefix (log: $log)"
	(
		cd "$work" &&
			./configure --prefix="$prefix" --enable-shared $gil LDFLAGS="-Wl,-rpath,$prefix/lib" &&
			make -j"$jobs" &&
			make install
	) >"$log" 2>&1 || {
		tail -30 "$log" >&2
		echo "build-pythons: $name failed (log: $log)" >&2
		[ "${PYTHONS_OPTIONAL:-}" = 1 ] && continue
		exit 1
	}
	rm -rf "$work"
	# A free-threaded build installs python3.14t; python3 names it too.
	[ -x "$prefix/bin/python3" ] || ln -s "python$name" "$prefix/bin/python3"
	"$prefix/bin/python3" -c 'import sys, sysconfig, ssl, sqlite3, zlib, ctypes
print("build-pythons: %s: CPython %s, GIL %s" % (sys.executable, sys.version.split()[0],
      "disabled" if sysconfig.get_config_var("Py_GIL_DISABLED") else "enabled"))'
done
