#!/bin/sh
# install-packages.sh PACKAGE...: installs with apt-get those of the named
# Debian packages that are not installed yet, and is quick when none are
# missing. The Makefile calls it with what each target needs (run, test,
# bench). Where there is no dpkg (not Debian or Ubuntu) it names the
# packages and leaves installing their equivalents to the user.
set -eu

if [ $# = 0 ]; then
	echo "usage: install-packages.sh PACKAGE..." >&2
	exit 2
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-packages: no dpkg-query here; install the equivalents of: $*" >&2
	exit 0
fi

missing=""
for package in "$@"; do
	if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $package"
	fi
done
[ -n "$missing" ] || exit 0

sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-packages: missing:$missing (run as root, or install them)" >&2
		exit 1
	fi
	sudo=sudo
fi
echo "install-packages: installing$missing"
$sudo apt-get update -qq
# $missing is a word list on purpose: one argument per package.
# shellcheck disable=SC2086
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
