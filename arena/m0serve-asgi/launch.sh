#!/bin/bash
# launch.sh: m0serve on HttpArena's ports, for one entry (its arguments:
# the app, app:app, or --native arena). The harness runs the container
# with --network host and expects
#   8080  HTTP/1.1 (and WebSocket): baseline, pipelined, limited-conn,
#         json, json-comp, upload, static, echo-ws
#   8081  HTTP/1.1 over TLS, ALPN http/1.1 only: json-tls
#   8082  HTTP/2 cleartext by prior knowledge, HTTP/1.1 refused:
#         baseline-h2c, json-h2c
#   8443  HTTP/2 over TLS (ALPN h2, http/1.1 too): baseline-h2, static-h2
# m0serve listens on one address per process, so this starts one
# m0serve (a master and one worker per CPU) per port, as HttpArena's
# uvicorn entry starts one uvicorn per port. The TLS ports need the
# harness's certificate (/certs), the static mount its files
# (/data/static): each is left out when the harness mounts none.
# This file is the same in every entry (arena/launch.sh is the
# original); ARENA_DATA and ARENA_CERTS move /data and /certs for a run
# outside a container (arena/validate/docker).
set -u
data=${ARENA_DATA:-/data}
certs=${ARENA_CERTS:-/certs}
export DATASET_PATH=${DATASET_PATH:-$data/dataset.json}

# One worker per CPU the container may run on (its cpuset).
common=(--host 0.0.0.0 --workers "${ARENA_WORKERS:-$(nproc)}")
if [ -d "$data/static" ]; then
	common+=(--static-path-mount "$data/static" --static-path-route /static)
fi

pids=()
start() {
	m0serve "${common[@]}" "$@" &
	pids+=($!)
}
start --port 8080 "$@"
start --port 8082 --http 2 "$@"
if [ -r "$certs/server.crt" ] && [ -r "$certs/server.key" ]; then
	tls=(--ssl-certfile "$certs/server.crt" --ssl-keyfile "$certs/server.key")
	start --port 8081 --http 1 "${tls[@]}" "$@"
	start --port 8443 "${tls[@]}" "$@"
fi

# The container's stop signal stops every server (each drains); a server
# that ends on its own ends the others and the container, with its status.
stopping=0
stop() { kill -TERM "${pids[@]}" 2>/dev/null; }
trap 'stopping=1; stop' TERM INT
ended=
wait -n -p ended "${pids[@]}"
first=$?
ended=${ended:-} # a signal's trap leaves it unset
stop
status=0
for pid in "${pids[@]}"; do
	[ "$pid" = "$ended" ] && continue
	wait "$pid" || status=$?
done
if [ "$stopping" = 0 ] && [ -n "$ended" ]; then
	echo "launch.sh: m0serve (pid $ended) ended with status $first; stopped the others" >&2
	[ "$first" = 0 ] && first=1
	exit "$first"
fi
exit "$status"
