#!/bin/sh
# root-wheels.sh [VERSION...]: wheels for CPythons this machine does not
# run, built from the sdist and tried with Debian's own interpreters in
# a Debian root made once with debootstrap from the mirror this
# machine's apt sources name (scripts/debian-mirror.sh). SUITE (default
# sid) and ARCH (a Debian architecture, default this machine's) choose
# the root, ROOT (default build/SUITE-ARCH-root) where it lives; VERSION
# defaults to 3.14 3.15, what sid has beyond Debian 12. Run as root,
# after build-wheel.sh made the sdist: make wheel-sid (CPython 3.14 and
# 3.15) and make wheel-arm64 (Debian 12's 3.11 on arm64) do both.
#
# An arm64 root on an x86_64 machine runs under qemu-user (Debian's
# qemu-user-static, registered with binfmt_misc, which this script does
# when it is not): the interpreter, pip and the server are emulated; Go
# and Zig are this machine's own, cross-compiling (GOARCH, zig cc
# -target aarch64-linux-gnu.2.17). io_uring is refused under qemu-user,
# and the server must say so and serve on epoll.
#
# Inside the root, for each version: the build tools
# (packaging/tools-requirements.txt but Zig, which comes from this
# machine's build/packaging-venv, mounted) in a venv of the first
# version's Python, the wheel built from the sdist with Go (this
# machine's toolchain and build cache, mounted) and Zig targeting glibc
# 2.17, and auditwheel's word on the tag. The wheel then lands in OUTDIR
# (default dist), where readelf checks its glibc symbols; then `pip
# install --no-index --find-links /dist m0serve-go` into a fresh venv of
# that Python, `m0serve -V` must name it, and the console script serves
# tests/apps/wheel_app.py's WSGI, ASGI and Flask apps (Flask from PyPI,
# pinned in tests/wheel-requirements.txt), each answer checked to come
# from the venv's interpreter. Debian has no free-threaded build
# (3.14t), so no cp314t here. The last lines out are the wheels' paths.
set -eu

if [ "$(id -u)" != 0 ]; then
	echo "root-wheels: needs root (debootstrap, chroot, mounts)" >&2
	exit 1
fi
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- 3.14 3.15
suite=${SUITE:-sid}
debarch=${ARCH:-$(dpkg --print-architecture)}
sid=${ROOT:-$root/build/$suite-$debarch-root}
outdir=${OUTDIR:-$root/dist}
tools=${TOOLS_PYTHON:-$root/build/packaging-venv/bin/python}
go=${GO:-go}
release=$(cat "$root/VERSION")
case "$debarch" in
amd64) arch=x86_64 goarch=amd64 ;;
arm64) arch=aarch64 goarch=arm64 ;;
*)
	echo "root-wheels: ARCH=$debarch: want amd64 or arm64" >&2
	exit 1
	;;
esac
platform=manylinux_2_17_$arch
sdist=$outdir/m0serve_go-$release.tar.gz
if [ ! -f "$sdist" ]; then
	echo "root-wheels: no $sdist: run make wheel first" >&2
	exit 1
fi

packages=ca-certificates
for version in "$@"; do
	packages="$packages,python$version-dev,python$version-venv"
done
if [ "$debarch" != "$(dpkg --print-architecture)" ]; then
	# qemu-user for the root's programs; F: the kernel opens the
	# emulator now, so that it runs inside the chroot too.
	binfmt=/proc/sys/fs/binfmt_misc
	[ -f "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"
	if [ ! -f "$binfmt/qemu-$arch" ]; then
		sed 's/:[A-Z]*$/:OCF/' "/usr/lib/binfmt.d/qemu-$arch.conf" >"$binfmt/register"
	fi
fi
if [ ! -f "$sid/etc/debian_version" ]; then
	uri=$(sh "$root/scripts/debian-mirror.sh")
	log=$root/build/$suite-$debarch-debootstrap.log
	echo "root-wheels: debootstrap $suite ($debarch) into $sid from $uri (minutes, once)" >&2
	debootstrap --arch="$debarch" --variant=minbase --include="$packages" "$suite" "$sid" "$uri" >"$log" 2>&1 || {
		tail -20 "$log" >&2
		echo "root-wheels: debootstrap failed (log: $log)" >&2
		exit 1
	}
fi

# The root sees this machine's name servers and CA certificates (pip
# reaches PyPI through them), Go's toolchain and its build cache.
goroot=$("$go" env GOROOT)
gocache=$("$go" env GOCACHE)
zigdir=$("$tools" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))') || {
	echo "root-wheels: no ziglang in $tools: run make wheel-tools" >&2
	exit 1
}
mkdir -p "$sid/opt/go" "$sid/opt/gocache" "$sid/opt/zig" "$sid/dist" "$sid/opt/apps"
cp /etc/resolv.conf "$sid/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$sid/etc/ssl/certs/ca-certificates.crt"
mounted=""
cleanup() {
	for point in $mounted; do
		umount "$point" 2>/dev/null || umount -l "$point"
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM
for m in "proc:$sid/proc" "/dev:$sid/dev" "$goroot:$sid/opt/go" "$gocache:$sid/opt/gocache" "$zigdir:$sid/opt/zig"; do
	source=${m%%:*} point=${m#*:}
	case "$source" in
	proc) mount -t proc proc "$point" ;;
	*) mount --bind "$source" "$point" ;;
	esac
	mounted="$point $mounted"
done
mount -o remount,bind,ro "$sid/opt/go"
mount -o remount,bind,ro "$sid/opt/zig"
# in_root runs a command in the root, with an environment of its own.
root_env="PATH=/opt/go/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root GOCACHE=/opt/gocache GOTOOLCHAIN=local
	GOFLAGS=-mod=vendor GOOS=linux GOARCH=$goarch PIP_DISABLE_PIP_VERSION_CHECK=1"
in_root() {
	# shellcheck disable=SC2086
	chroot "$sid" /usr/bin/env -i $root_env "$@"
}

missing=""
for version in "$@"; do
	[ -x "$sid/usr/bin/python$version" ] && [ -f "$sid/usr/include/python$version/Python.h" ] || missing="$missing python$version-dev python$version-venv"
done
if [ -n "$missing" ]; then
	in_root apt-get -q update >/dev/null
	# shellcheck disable=SC2086
	in_root apt-get -q install -y --no-install-recommends $missing >/dev/null
fi

# The build tools, in a venv of the first version given; Zig is mounted.
sed '/^ziglang/,/^[^ ]/{/^ziglang/d;/^ /d}' "$root/packaging/tools-requirements.txt" >"$sid/opt/tools-requirements.txt"
if ! cmp -s "$sid/opt/tools-requirements.txt" "$sid/opt/tools/.installed" 2>/dev/null; then
	rm -rf "$sid/opt/tools"
	in_root "python$1" -m venv /opt/tools
	in_root /opt/tools/bin/pip install --quiet --require-hashes --only-binary :all: -r /opt/tools-requirements.txt
	cp "$sid/opt/tools-requirements.txt" "$sid/opt/tools/.installed"
fi
zig=/opt/zig/zig
cp "$sdist" "$sid/dist/"
cp "$root/tests/apps/wheel_app.py" "$sid/opt/apps/"
cp "$root/tests/wheel-requirements.txt" "$sid/opt/wheel-requirements.txt"

built=""
port=$((18900 + $$ % 90))
for version in "$@"; do
	tag=cp$(echo "$version" | tr -d .)
	wheel=m0serve_go-$release-$tag-$tag-$platform.whl
	rm -rf "$sid/opt/wheel-$tag" "$sid/dist/$wheel"
	mkdir -p "$sid/opt/wheel-$tag"
	tar -xzf "$sdist" -C "$sid/opt/wheel-$tag" --strip-components=1
	log=$root/build/sid-wheel-$tag.log
	in_root env CC="$zig cc -target $arch-linux-gnu.2.17" M0_TARGET_PYTHON="/usr/bin/python$version" M0_WHEEL_PLATFORM="$platform" \
		/opt/tools/bin/python -m build --wheel --no-isolation --outdir /dist "/opt/wheel-$tag" >"$log" 2>&1 || {
		tail -30 "$log" >&2
		echo "root-wheels: the wheel for Python $version failed (log: $log)" >&2
		exit 1
	}
	show=$(in_root /opt/tools/bin/python -m auditwheel show "/dist/$wheel" 2>&1)
	case "$show" in
	*"\"$platform\""*) ;;
	*)
		echo "$show" >&2
		echo "root-wheels: auditwheel does not agree with $platform for $wheel" >&2
		exit 1
		;;
	esac
	ext=$(ls "$sid/opt/wheel-$tag"/build/lib*/m0serve/_m0serve*.so)
	newest=$(readelf --dyn-syms -W "$ext" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
	if [ "$(printf '%s\n%s\n' "$newest" 2.17 | sort -V | tail -1)" != 2.17 ]; then
		echo "root-wheels: $ext needs glibc $newest, newer than 2.17 ($platform)" >&2
		exit 1
	fi
	cp "$sid/dist/$wheel" "$outdir/"

	# Installed as a user would, and serving.
	venv=/opt/venv-$tag
	rm -rf "$sid$venv"
	in_root "python$version" -m venv "$venv"
	in_root "$venv/bin/pip" install --quiet --no-index --find-links /dist m0serve-go
	in_root "$venv/bin/pip" install --quiet --require-hashes --no-deps --only-binary :all: -r /opt/wheel-requirements.txt
	site=$(in_root "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	echo "NAME = 'venv'" >"$sid$site/wheel_venv_marker.py"
	full=$(in_root "python$version" -c 'import sys; print(sys.version.split()[0])')
	said=$(in_root "$venv/bin/m0serve" -V)
	case "$said" in
	"m0serve $release "*"CPython $full in $venv/bin/python"*", GIL enabled, "*"$goarch)") ;;
	*)
		echo "root-wheels: $venv/bin/m0serve -V: $said; want CPython $full in $venv/bin/python" >&2
		exit 1
		;;
	esac
	for app in wsgi asgi flask; do
		port=$((port + 1))
		target=wheel_app:${app}_app
		[ "$app" = flask ] && target="--factory $target"
		# exec: chroot and env exec too, so $! is the server's pid.
		# shellcheck disable=SC2086
		(exec chroot "$sid" /usr/bin/env -i $root_env "$venv/bin/m0serve" --host 127.0.0.1 --port "$port" \
			--app-dir /opt/apps $target) >"$log" 2>&1 &
		pid=$!
		answer=""
		for _ in $(seq 100); do
			answer=$(curl -s "http://127.0.0.1:$port/" 2>/dev/null) && break
			sleep 0.1
		done
		kill -TERM "$pid"
		wait "$pid" || {
			cat "$log" >&2
			echo "root-wheels: Python $version, $app: the server did not exit 0 on SIGTERM" >&2
			exit 1
		}
		# qemu-user refuses io_uring_setup: the fallback must say so.
		if [ "$debarch" != "$(dpkg --print-architecture)" ] &&
			! tr '\n' ' ' <"$log" | grep -q 'falling back to epoll.*serving on [^ ]* (epoll)'; then
			cat "$log" >&2
			echo "root-wheels: Python $version, $app under qemu-user: no word of the epoll fallback, or not served on it" >&2
			exit 1
		fi
		case "$answer" in
		*"\"kind\": \"$app\""*"\"marker\": \"venv\""*"\"exe\": \"/usr/bin/python$version\""*"\"prefix\": \"$venv\""*) ;;
		*)
			cat "$log" >&2
			echo "root-wheels: Python $version, $app: answered '$answer'; want $app from $venv in /usr/bin/python$version" >&2
			exit 1
			;;
		esac
	done
	echo "root-wheels: Python $full: $wheel installs with pip --find-links and serves WSGI, ASGI and Flask ($said)" >&2
	built="$built $outdir/$wheel"
done
for wheel in $built; do
	echo "$wheel"
done
