#!/bin/bash
# run.sh: HttpArena's scripts/validate.sh, unchanged, for each entry of
# arena/ (make arena-validate). No container can be built or pulled here,
# so docker is arena/validate/docker: it runs the entry's ENTRYPOINT and
# CMD (launch.sh, and m0serve from M0SERVE) as processes, with the
# script's mounts as links. The script and its data come from HTTPARENA, a
# checkout of MDA2AV/HttpArena, or else from httparena/ here (the copy
# pinned in httparena/README.md, with the static files made by
# static.py and the database profiles' pgdb-seed.sql by HttpArena's
# generate-pgdb.py). The entries' virtual environments (their
# requirements.txt) are kept in ARENA_VENVS, by default
# arena/validate/.venvs. The whole run gets a network namespace of its own, so the
# script's fixed ports (8080-8082, 8443) are free whatever else runs on
# the machine.
#
#	arena/validate/run.sh [ENTRY...]	(default: every arena/m0serve-*)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
arena=$(dirname "$here")
binary=$(realpath "${M0SERVE:-$arena/../bin/m0serve}")
source=$(realpath "${HTTPARENA:-$here/httparena}")
[ -x "$binary" ] || { echo "arena-validate: $binary: no m0serve binary (make build, or set M0SERVE)" >&2; exit 2; }
[ -f "$source/scripts/validate.sh" ] || { echo "arena-validate: HTTPARENA=$source: no scripts/validate.sh there" >&2; exit 2; }

export ARENA_VENVS=${ARENA_VENVS:-$here/.venvs}
if [ -z "${ARENA_NETNS:-}" ]; then
	# The entries' virtual environments first: pip needs the network.
	for requirements in "$arena"/m0serve-*/requirements.txt; do
		[ -f "$requirements" ] || continue
		"$here/docker" venv "$requirements" >/dev/null ||
			{ echo "arena-validate: $requirements: pip install failed" >&2; exit 1; }
	done
	if unshare -rn true 2>/dev/null; then
		exec env ARENA_NETNS=1 M0SERVE="$binary" HTTPARENA="$source" unshare -rn "$0" "$@"
	fi
	echo "arena-validate: no network namespace (unshare -rn refused): using the host's ports 8080-8082 and 8443" >&2
elif ! ip link set lo up; then
	echo "arena-validate: cannot bring lo up in the network namespace" >&2
	exit 2
fi

entries=("$@")
if [ ${#entries[@]} -eq 0 ]; then
	for dir in "$arena"/m0serve-*/; do entries+=("$(basename "$dir")"); done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/arena-validate.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/frameworks" "$root/data" "$work/bin" "$work/logs"
# validate.sh finds its root as scripts/.., so scripts is a copy, not a link.
cp -r "$source/scripts" "$root/scripts"
ln -s "$source/certs" "$root/certs"
ln -s "$source/data/dataset.json" "$root/data/dataset.json"
# A checkout's seed may be a Git LFS pointer, not the SQL.
if head -c 12 "$source/data/pgdb-seed.sql" 2>/dev/null | grep -q '^CREATE TABLE'; then
	ln -s "$source/data/pgdb-seed.sql" "$root/data/pgdb-seed.sql"
else
	python3 "$source/scripts/generate-pgdb.py" "$source/data/dataset.json" "$root/data/pgdb-seed.sql" >/dev/null
fi
if [ -d "$source/data/static" ]; then
	ln -s "$source/data/static" "$root/data/static"
else
	python3 "$here/static.py" "$root/data/static"
fi
ln -s "$here/docker" "$work/bin/docker"
ln -s "$binary" "$work/bin/m0serve"

failed=()
for entry in "${entries[@]}"; do
	if [ ! -f "$arena/$entry/meta.json" ]; then
		echo "arena-validate: $entry: no arena/$entry/meta.json" >&2
		failed+=("$entry")
		continue
	fi
	if ! cmp -s "$arena/launch.sh" "$arena/$entry/launch.sh"; then
		echo "arena-validate: $entry: launch.sh differs from arena/launch.sh (cp -p arena/launch.sh arena/$entry/)" >&2
		failed+=("$entry")
		continue
	fi
	ln -s "$arena/$entry" "$root/frameworks/$entry"
	# A process group of its own, ended with the script: its watchdog's
	# sleep would otherwise hold the output open for VALIDATE_TIMEOUT.
	(cd "$root" && PATH="$work/bin:$PATH" ARENA_DOCKER_STATE="$work/state" ARENA_DOCKER_LOGS="$work/logs" \
		CRUD_CACHE_DIR="$work/crud-cache" \
		exec setsid bash scripts/validate.sh "$entry") &
	script=$!
	status=0
	wait "$script" || status=$?
	kill -TERM -- "-$script" 2>/dev/null || true
	if [ "$status" = 0 ]; then
		echo "arena-validate: $entry: pass"
	else
		echo "arena-validate: $entry: FAIL; the servers' output:" >&2
		cat "$work/logs/"*"$entry"*.log >&2 2>/dev/null || true
		failed+=("$entry")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "arena-validate: failed: ${failed[*]}" >&2
	exit 1
fi
