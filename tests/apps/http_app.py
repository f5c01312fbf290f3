"""The app of tests/http_test.go: a Flask app whose routes set the
response fields the server used to own (Connection, hop-by-hop fields,
Server, Date) and stream a body of unknown length, and which reports
the mount (SCRIPT_NAME, PATH_INFO) and the interpreter it runs under."""
import os
import sys

from flask import Flask, Response, request

app = Flask(__name__)


@app.route("/stream")
def stream():
    # A generator: Werkzeug gives HEAD no body, and no length is known.
    return Response((piece for piece in (b"one ", b"two")), mimetype="text/plain")


@app.route("/close")
def close():
    return Response("closing\n", headers={"Connection": "close"})


@app.route("/hop")
def hop():
    return Response("hop\n", headers={"Keep-Alive": "timeout=5", "Upgrade": "h2c",
                                      "Proxy-Connection": "keep-alive", "X-Kept": "yes"})


@app.route("/own-server")
def own_server():
    return Response("own\n", headers={"Server": "app-server/1.0",
                                      "Date": "Thu, 01 Jan 2026 00:00:00 GMT",
                                      "X-Frame-Options": "SAMEORIGIN"})


@app.route("/", defaults={"rest": ""})
@app.route("/<path:rest>")
def where(rest):
    return {"script_name": request.environ["SCRIPT_NAME"],
            "path_info": request.environ["PATH_INFO"]}


@app.route("/python")
def python():
    try:
        import uvloop  # noqa: F401
        has_uvloop = True
    except ImportError:
        has_uvloop = False
    try:
        import flask as f
        flask_file = f.__file__
    except ImportError:
        flask_file = ""
    return {"executable": sys.executable, "prefix": sys.prefix,
            "base_prefix": sys.base_prefix, "os": os.__file__,
            "version": "%d.%d.%d" % sys.version_info[:3],
            "uvloop": has_uvloop, "flask": flask_file, "path": sys.path}
