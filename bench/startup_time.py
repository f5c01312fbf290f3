"""Start-up time to the first answered request, commands alternated.

Usage: python3 bench/startup_time.py ROUNDS NAME=COMMAND...
Each COMMAND (split on spaces; {port} is replaced) is started ROUNDS
times, the commands taking turns; the time from the start to the first
200 answer of GET / on 127.0.0.1:{port} is recorded, then the server gets
SIGTERM and is waited for. Prints each command's median and spread (min,
max) in milliseconds. make bench-extension runs it (bench/README.md)."""
import http.client
import signal
import statistics
import subprocess
import sys
import time


def once(command, port):
    argv = [arg.replace("{port}", str(port)) for arg in command.split()]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = start + 60
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                raise SystemExit("%s exited with %d before answering" % (argv, proc.returncode))
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    return time.perf_counter() - start
            except OSError:
                time.sleep(0.002)
        raise SystemExit("%s did not answer within 60 s" % argv)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def main():
    rounds = int(sys.argv[1])
    arms = [arg.split("=", 1) for arg in sys.argv[2:]]
    times = {name: [] for name, _ in arms}
    port = 18790
    for _ in range(rounds):
        for name, command in arms:
            port += 1
            times[name].append(once(command, port) * 1000)
    for name, _ in arms:
        t = times[name]
        print("%-24s median %7.1f ms  min %7.1f  max %7.1f  (%d runs)" % (name, statistics.median(t), min(t), max(t), len(t)))


main()
