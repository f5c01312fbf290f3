"""Apps for the wheel test (tests/wheel_test.go), served by an m0serve
installed with pip into a virtual environment. Each imports
wheel_venv_marker, a module the test writes only into that environment's
site-packages, and answers with it and WHEEL_PROBE from the environment:
proof that the venv is used without --venv and that the launcher passed
the environment on."""
import os

import wheel_venv_marker


def body(kind):
    return ("%s %s %s" % (kind, wheel_venv_marker.NAME, os.environ.get("WHEEL_PROBE", "-"))).encode()


def wsgi_app(environ, start_response):
    data = body("wsgi")
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]


async def asgi_app(scope, receive, send):
    if scope["type"] != "http":
        return
    data = body("asgi")
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(data))]})
    await send({"type": "http.response.body", "body": data})


def flask_app():
    """A factory, so importing this module needs no Flask (the other
    Pythons of make test-pythons have none)."""
    from flask import Flask

    app = Flask(__name__)

    @app.route("/")
    def index():
        return body("flask")

    return app
