"""Apps for the wheel test (tests/wheel_test.go), served by an m0serve
installed with pip into a virtual environment, inside that environment's
interpreter. Each imports wheel_venv_marker, a module the test writes
only into that environment's site-packages, and answers with a JSON
object: the marker, WHEEL_PROBE from the environment, and what the
serving process is (its pid, /proc/self/exe, sys.prefix). /slow creates
the file WHEEL_SLOW_STARTED names, then waits (30 s at most) until the
file WHEEL_SLOW_RELEASE names exists, so that a test can signal the
server while a request is in the app."""
import json
import os
import sys
import time

import wheel_venv_marker


def body(kind, path):
    if path == "/slow":
        open(os.environ["WHEEL_SLOW_STARTED"], "w").close()
        deadline = time.monotonic() + 30
        while not os.path.exists(os.environ["WHEEL_SLOW_RELEASE"]) and time.monotonic() < deadline:
            time.sleep(0.01)
    return json.dumps({
        "kind": kind,
        "marker": wheel_venv_marker.NAME,
        "probe": os.environ.get("WHEEL_PROBE", "-"),
        "pid": os.getpid(),
        "exe": os.readlink("/proc/self/exe"),
        "prefix": sys.prefix,
        "path": path,
    }).encode()


def wsgi_app(environ, start_response):
    data = body("wsgi", environ["PATH_INFO"])
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


async def asgi_app(scope, receive, send):
    if scope["type"] != "http":
        return
    data = body("asgi", scope["path"])
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]})
    await send({"type": "http.response.body", "body": data})


def flask_app():
    """A factory, so importing this module needs no Flask."""
    from flask import Flask, request

    app = Flask(__name__)

    @app.route("/")
    def index():
        return body("flask", request.path)

    return app
