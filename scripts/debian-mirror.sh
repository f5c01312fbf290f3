#!/bin/sh
# debian-mirror.sh: the first Debian archive URI among this machine's apt
# sources (deb822 .sources files, then one-line .list files), the
# security archive and other repositories left out; fails with one line
# where there is none. make pythons and make wheel-sid fetch sid from it,
# so that no host is written into the repository.
mirrors() {
	for file in /etc/apt/sources.list.d/*.sources; do
		[ -f "$file" ] || continue
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$file"
	done
	for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$file" ] || continue
		awk '$1 == "deb" || $1 == "deb-src" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }' "$file"
	done
}
uri=$(mirrors | grep -E '/debian/?$' | head -1)
if [ -z "$uri" ]; then
	echo "debian-mirror: no Debian archive among the apt sources under /etc/apt (want a URI ending in /debian)" >&2
	exit 1
fi
echo "$uri"
