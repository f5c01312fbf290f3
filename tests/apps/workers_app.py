"""The app of the --workers tests: /pid names the worker, /version what
version.txt beside this file held at import, /sleep?s= and /spin?s= wait
and burn CPU, /crash?how=exit|segv ends the worker, /grow?mb= keeps memory
and /spike?mb= holds it for a moment; /gate adds a line to gate_entered beside
this file and waits until the test creates gate_open there, then names the
worker. WORKERS_APP_FAIL=1 fails the import;
a file slow_import beside this one makes it take 10 s."""
import ctypes
import os
import time

if os.environ.get("WORKERS_APP_FAIL"):
    raise RuntimeError("WORKERS_APP_FAIL is set: this import fails")

_here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_here, "version.txt")) as f:
    VERSION = f.read().strip()
if os.path.exists(os.path.join(_here, "slow_import")):
    time.sleep(10)

_kept = []


def _number(environ, name, default):
    for pair in environ.get("QUERY_STRING", "").split("&"):
        key, _, value = pair.partition("=")
        if key == name:
            return float(value)
    return default


def app(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/version":
        body = VERSION
    elif path == "/sleep":
        time.sleep(_number(environ, "s", 1))
        body = "slept"
    elif path == "/gate":
        with open(os.path.join(_here, "gate_entered"), "a") as f:
            f.write("entered\n")
        while not os.path.exists(os.path.join(_here, "gate_open")):
            time.sleep(0.02)
        body = str(os.getpid())
    elif path == "/spin":
        end = time.monotonic() + _number(environ, "s", 1)
        n = 0
        while time.monotonic() < end:
            n += 1
        body = "spun"
    elif path == "/crash":
        if environ.get("QUERY_STRING") == "how=segv":
            ctypes.string_at(0)
        os._exit(1)
    elif path == "/grow":
        _kept.append(b"x" * int(_number(environ, "mb", 1) * (1 << 20)))
        body = "grown"
    elif path == "/spike":
        held = [b"x" * int(_number(environ, "mb", 1) * (1 << 20))]
        time.sleep(_number(environ, "s", 0.2))
        held.clear()
        body = "spiked"
    else:
        body = str(os.getpid())
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]
