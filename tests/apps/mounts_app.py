"""Apps mounted side by side (--mount): a Flask app, a Starlette app with
a lifespan and a WebSocket, a plain WSGI app, and a Starlette app whose
startup fails. Each answers with what it sees of its mount."""

import contextlib
import os

from flask import Flask, jsonify, redirect, request, url_for
from starlette.applications import Starlette
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route, WebSocketRoute

flask = Flask(__name__)


@flask.route("/who")
def flask_who():
    return jsonify(app="flask", script_root=request.script_root, path=request.path,
                   url=url_for("flask_who"), full=request.url)


@flask.route("/go")
def flask_go():
    return redirect(url_for("flask_who"))


def _note(line):
    """Appends line to $E2E_DIR/lifespan (each worker's, one per line)."""
    with open(os.path.join(os.environ["E2E_DIR"], "lifespan"), "a") as f:
        f.write(line + "\n")


def _lifespan(name):
    @contextlib.asynccontextmanager
    async def lifespan(app):
        _note(f"startup {name} {os.getpid()}")
        yield {"started": name}
        _note(f"shutdown {name} {os.getpid()}")

    return lifespan


async def _who(request):
    return JSONResponse({"app": "starlette", "root_path": request.scope["root_path"],
                         "path": request.scope["path"], "url": str(request.url_for("who")),
                         "started": request.state.started})


async def _go(request):
    return RedirectResponse(request.url_for("who"))


async def _echo(websocket):
    await websocket.accept()
    message = await websocket.receive_text()
    await websocket.send_text(f"{websocket.scope['root_path']} {websocket.scope['path']} {message}")
    await websocket.close()


def _starlette(name):
    return Starlette(routes=[Route("/who", _who, name="who"), Route("/go", _go),
                             WebSocketRoute("/echo", _echo)], lifespan=_lifespan(name))


starlette = _starlette("a")
other = _starlette("b")


def site(environ, start_response):
    """Plain WSGI: its SCRIPT_NAME and PATH_INFO."""
    body = f"site {environ['SCRIPT_NAME']!r} {environ['PATH_INFO']!r}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


@contextlib.asynccontextmanager
async def _failing_lifespan(app):
    raise RuntimeError("m0 mounted database unreachable")
    yield


failing = Starlette(routes=[Route("/who", _who, name="who")], lifespan=_failing_lifespan)
