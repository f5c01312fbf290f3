"""Appends each request's path and query to $GATE_FILE.log as it arrives;
/hold then waits (at most 20 s) for the file $GATE_FILE to exist."""
import os
import time


def app(environ, start_response):
    gate = os.environ["GATE_FILE"]
    with open(gate + ".log", "a") as log:
        log.write("%s?%s\n" % (environ["PATH_INFO"], environ["QUERY_STRING"]))
    if environ["PATH_INFO"] == "/hold":
        deadline = time.monotonic() + 20
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.01)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
