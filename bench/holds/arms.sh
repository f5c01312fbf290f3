#!/bin/sh
# arms.sh M0SERVE SEED [N] [ROUNDS] [PAIRS]: held SSE streams, m0serve
# (the binary M0SERVE) against the Mojo m0serve (SEED, its wheel's
# m0serve command), arms alternated, a fresh server each (so that its
# resident memory grows by the streams alone), 2 workers each. N streams
# (default 1800: the seed holds at most 1024 per worker), ROUNDS
# publishes each delivered to all. One JSON line per arm (holds/main.go).
set -eu
ours=$1 seed=$2 n=${3:-1800} rounds=${4:-100} pairs=${5:-2}
here=$(cd "$(dirname "$0")" && pwd)
(cd "$here" && go build -o holds.bin .)
port=18700
arm() {
	label=$1
	shift
	port=$((port + 1))
	"$@" --port $port --app-dir "$here" sse_app:app >/dev/null 2>&1 &
	pid=$!
	sleep 4
	"$here/holds.bin" -addr 127.0.0.1:$port -path /events/bench -publish /pub/bench -n "$n" -rounds "$rounds" -pid $pid -label "$label" || true
	kill -TERM $pid
	wait $pid || true
}
for _ in $(seq "$pairs"); do
	arm m0serve "$ours" --realtime --workers 2 --max-connections 20000
	arm seed "$seed" --realtime --workers 2
done
rm -f "$here/holds.bin"
