#!/bin/sh
# tests/container/test.sh: builds the repository's Dockerfile with podman
# and checks the image the way `docker run` and `docker stop` use it: its
# binary links CPython statically, it serves examples/hello_wsgi.py on
# 0.0.0.0:8000 as a non-root user, falls back to epoll because the
# runtime's default seccomp profile refuses io_uring_setup (as Docker's
# does), and on SIGTERM finishes a request in flight and exits 0. `make
# test-container` runs it; it takes minutes the first time (debootstrap,
# two image builds), so make test does not. Then it builds the recipe
# for an app with dependencies (examples/docker: a venv made from a
# requirements.txt in a builder stage) and the HttpArena native entry
# (arena/m0serve-native) FROM that image, and checks that each serves as its README says.
#
# No image registry is reachable here, so the base images are made
# locally: debian:bookworm-slim from debootstrap (Debian's packages,
# cached in M0_ROOTFS_CACHE, default build/debootstrap),
# golang:1.26-bookworm from it plus this
# machine's Go tree (golang.Containerfile). The Dockerfile is built
# unchanged with those two as its GO_IMAGE and RUNTIME_IMAGE.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/container
cache=${M0_ROOTFS_CACHE:-$root/build/debootstrap}
base=localhost/m0serve-test/debian:bookworm-slim
golang=localhost/m0serve-test/golang:1.26-bookworm
image=localhost/m0serve-test/m0serve:$(cat "$root/VERSION")
app_image=localhost/m0serve-test/example-app:latest
arena_image=localhost/m0serve-test/arena-native:latest

# A cgroup v1 machine with a cgroup2 hierarchy that holds controllers
# ("hybrid") is refused by crun; run in a mount namespace of our own
# without that hierarchy. The machine's mounts are not touched.
if [ -z "${M0_CONTAINER_NS:-}" ] && grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
	exec env M0_CONTAINER_NS=1 unshare --mount --propagation private \
		sh -c 'umount /sys/fs/cgroup/unified && exec sh "$0"' "$0"
fi

# Sandboxes that refuse to raise hard rlimits refuse podman's defaults for
# root containers (RLIMIT_NOFILE and RLIMIT_NPROC 1048576): ask for
# limits within this shell's (RLIMIT_NPROC at most 32768, the highest
# this machine's crun was seen to accept).
conf=$(mktemp)
workdir=$(mktemp -d)
name=m0serve-test-$$
cleanup() {
	pm rm --force --time 0 "$name" >/dev/null 2>&1 || true
	rm -rf "$conf" "$workdir"
}
trap cleanup EXIT
hard() { awk -v name="$1" 'index($0, name) == 1 { print ($(NF-1) == "unlimited" ? 65536 : $(NF-1)) }' /proc/self/limits; }
nofile=$(hard "Max open files")
nproc=$(hard "Max processes")
[ "$nproc" -le 32768 ] || nproc=32768
ulimits="--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc"
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' "$nofile" "$nofile" "$nproc" "$nproc" >"$conf"
pm() { CONTAINERS_CONF=$conf podman --storage-driver vfs --cgroup-manager cgroupfs "$@"; }
fail() {
	echo "test-container: FAIL: $*" >&2
	pm logs "$name" 2>&1 | sed 's/^/  container: /' >&2 || true
	exit 1
}

step() { echo "test-container: $*"; }

if ! pm image exists "$base"; then
	if [ ! -x "$cache/usr/bin/python3" ]; then
		step "debootstrap bookworm into $cache (minutes)"
		rm -rf "$cache"
		debootstrap --variant=minbase bookworm "$cache" http://deb.debian.org/debian >"$workdir/debootstrap.log" 2>&1 ||
			{ tail -20 "$workdir/debootstrap.log" >&2; exit 1; }
	fi
	step "import $base"
	tar -C "$cache" -c . | pm import --quiet - "$base" >/dev/null
fi
if ! pm image exists "$golang"; then
	step "build $golang"
	pm build --quiet $ulimits --network host --build-arg BASE_IMAGE="$base" -t "$golang" \
		-f "$here/golang.Containerfile" "$(go env GOROOT)" >/dev/null
fi
# The build stage fetches modules from the Go proxy with this machine's
# CA bundle, so that a TLS-intercepting egress proxy trusted here is
# trusted in the build too (mounted for the RUN steps only; the images
# keep Debian's bundle).
ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
step "build $image from the Dockerfile"
pm build --quiet $ulimits -v "$ca:/etc/ssl/certs/ca-certificates.crt:ro" --network host --build-arg GO_IMAGE="$golang" --build-arg RUNTIME_IMAGE="$base" \
	--build-arg COMMIT="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
	-t "$image" "$root" >/dev/null

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_log PATTERN: the container's log shows PATTERN within 60 s.
wait_log() {
	i=0
	while ! pm logs "$name" 2>&1 | grep -q "$1"; do
		i=$((i + 1))
		[ $i -le 120 ] || fail "no '$1' in the log within 60 s"
		sleep 0.5
	done
}

# 0. The binary carries Debian's CPython (linked statically, as make build
# links it): the runtime stage installs no libpython.
linked=$(pm run --rm --entrypoint ldd "$image" /usr/local/bin/m0serve) || fail "ldd of the image's binary failed"
case "$linked" in
*libpython*) fail "the image's binary links a shared libpython: $linked" ;;
esac
step "ok: the image's binary links no shared libpython"

# 1. The image as built: hello_wsgi on 0.0.0.0, non-root, epoll.
port=$(free_port)
step "run $image (port $port)"
pm run --detach --name "$name" --network host -e M0_PORT="$port" "$image" >/dev/null
wait_log "serving on http://0.0.0.0:$port"
start=$(pm logs "$name" 2>&1 | grep "serving on")
case "$start" in
*"(epoll"*) ;;
*) fail "start line does not show the epoll fallback: $start" ;;
esac
body=$(curl -sS --max-time 10 "http://127.0.0.1:$port/")
[ "$body" = "Hello, World!" ] || fail "GET / answered '$body'"
pid=$(pm inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
[ "$uid" = 10001 ] || fail "m0serve runs as uid $uid, want 10001"
pm stop --time 10 "$name" >/dev/null
code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "exit status $code after stop, want 0"
pm rm "$name" >/dev/null
step "ok: serves hello_wsgi on 0.0.0.0 as uid 10001; $start"

# 2. A stop with a request in flight: it is answered, then exit 0.
port=$(free_port)
pm run --detach --name "$name" --network host -e M0_PORT="$port" \
	-v "$here/slow_app.py:/app/slow_app.py:ro" "$image" slow_app:app >/dev/null
wait_log "serving on http://0.0.0.0:$port"
curl -sS --max-time 20 -o "$workdir/slow" "http://127.0.0.1:$port/" &
curl_pid=$!
wait_log "slow request inside"
pm stop --time 10 "$name" >/dev/null
wait "$curl_pid" || fail "the request in flight at the stop failed"
[ "$(cat "$workdir/slow")" = "slow done" ] || fail "the request in flight got '$(cat "$workdir/slow")'"
code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "exit status $code after stop with a request in flight, want 0"
pm logs "$name" 2>&1 | grep -q "draining" || fail "no draining line after SIGTERM"
pm rm "$name" >/dev/null
step "ok: SIGTERM drained the request in flight and exited 0"

# 3. examples/docker: a builder stage makes /venv from requirements.txt
# (pinned with hashes, from PyPI) on the m0serve image; the runtime
# stage, that image again, gets the venv and the app, and m0serve
# imports Flask from it (VIRTUAL_ENV).
# pip fetches from PyPI with this machine's CA bundle too, as a local
# certificate that update-ca-certificates adds to the image's bundle
# when the builder stage installs ca-certificates (python3-venv needs
# it): mounted over the bundle itself, it would make that file
# read-only to dpkg.
step "build $app_image from examples/docker/Dockerfile (FROM $image)"
pm build --quiet $ulimits -v "$ca:/usr/local/share/ca-certificates/m0serve-test-host.crt:ro" --network host --build-arg M0SERVE_IMAGE="$image" \
	-t "$app_image" "$root/examples/docker" >/dev/null
if pm run --rm --entrypoint dpkg "$app_image" -s python3-venv >/dev/null 2>&1; then
	fail "the example's runtime image has python3-venv: the builder stage's packages leaked into it"
fi
port=$(free_port)
pm run --detach --name "$name" --network host -e M0_PORT="$port" "$app_image" >/dev/null
wait_log "serving on http://0.0.0.0:$port"
pm logs "$name" 2>&1 | grep -q "venv /venv" || fail "the start line does not name the venv /venv"
body=$(curl -sS --max-time 10 "http://127.0.0.1:$port/")
[ "$body" = "Hello from Flask in a container!" ] || fail "the example app's GET / answered '$body'"
env_json=$(curl -sS --max-time 10 "http://127.0.0.1:$port/env")
python3 -c 'import json, sys
env = json.loads(sys.argv[1])
assert env["prefix"] == "/venv" and env["flask"] == "3.1.2" and env["flask_file"].startswith("/venv/lib/"), env' "$env_json" ||
	fail "GET /env answered $env_json: want Flask 3.1.2 from /venv"
pid=$(pm inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
[ "$uid" = 10001 ] || fail "the example app runs as uid $uid, want 10001"
pm stop --time 10 "$name" >/dev/null
code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "the example app's exit status $code after stop, want 0"
pm rm "$name" >/dev/null
step "ok: examples/docker serves Flask 3.1.2 from its venv ($env_json)"

# 4. The HttpArena native entry (arena/m0serve-native): its launch.sh,
# process 1, starts one m0serve per port (8080 and 8082 here: no
# certificate is mounted), each with one worker per CPU the container may
# use, and a stop drains them all and exits 0. The harness runs it with
# --network host, so ports 8080 and 8082 must be free.
step "build $arena_image from arena/m0serve-native (FROM $image)"
pm build --quiet $ulimits --build-arg M0SERVE_IMAGE="$image" -t "$arena_image" "$root/arena/m0serve-native" >/dev/null
cpus=$(pm run --rm --entrypoint nproc "$arena_image")
pm run --detach --name "$name" --network host \
	-v "$root/arena/validate/httparena/data/dataset.json:/data/dataset.json:ro" "$arena_image" >/dev/null
wait_log "$cpus workers ready"
body=$(curl -sS --max-time 10 "http://127.0.0.1:8080/baseline11?a=13&b=42")
[ "$body" = 55 ] || fail "the arena image's GET /baseline11?a=13&b=42 answered '$body'"
count=$(curl -sS --max-time 10 --http2-prior-knowledge "http://127.0.0.1:8082/json/3?m=2" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["count"])')
[ "$count" = 3 ] || fail "the arena image's h2c GET /json/3?m=2 answered $count items"
pm stop --time 10 "$name" >/dev/null
code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "the arena image's exit status $code after stop, want 0"
pm rm "$name" >/dev/null
step "ok: the arena native image serves on 8080 and 8082 with $cpus workers each (one per CPU) and stops with 0"
