#!/bin/bash
# The access log's cost (bench/README.md, The access log's cost): BIN
# serving bench/apps' APP without and with --access-log, alternated for
# ROUNDS rounds, the server on CPU 0 with its stderr read by cat, wrk on
# CPU 1; prints the server's CPU µs per request. Run from the repository.
# usage: bench/accesslog-cost.sh BIN APP ROUNDS
bin=$1; app=$2; rounds=$3
port=18731
for r in $(seq $rounds); do
  for arm in off on; do
    flag=""; [ $arm = on ] && flag="--access-log"
    taskset -c 0 $bin --host 127.0.0.1 --port $port --app-dir bench/apps $flag $app 2> >(cat > /dev/null) &
    pid=$!
    for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:$port/ && break; sleep 0.1; done
    t0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 wrk -t1 -c16 -d5s http://127.0.0.1:$port/ 2>&1)
    t1=$(awk '{print $14+$15}' /proc/$pid/stat)
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    kill -TERM $pid; wait $pid 2>/dev/null
    hz=$(getconf CLK_TCK)
    echo "$app $arm round=$r reqs=$reqs rps=$rps us_per_req=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.2f", t * 1000000 / hz / n }')"
  done
done
