"""A Quart app for the end-to-end tests (tests/.venv): JSON in and out,
a multipart upload read with Quart's own parser, a streamed response, a
before_serving hook (lifespan), and a WebSocket that echoes until told
to close."""

import hashlib

from quart import Quart, request, websocket

app = Quart(__name__)


@app.before_serving
async def startup():
    app.config["GREETING"] = "started by lifespan"


@app.route("/")
async def index():
    return "Hello from Quart"


@app.route("/state")
async def state():
    return {"greeting": app.config["GREETING"]}


@app.post("/json")
async def json_route():
    data = await request.get_json()
    return {"doubled": [n * 2 for n in data["numbers"]], "name": data["name"]}


@app.post("/upload")
async def upload():
    files = await request.files
    form = await request.form
    blob = files["file"].read()
    return {"filename": files["file"].filename, "size": len(blob),
            "sha256": hashlib.sha256(blob).hexdigest(), "note": form["note"]}


@app.route("/stream")
async def stream():
    async def lines():
        for i in range(50):
            yield f"line {i}\n".encode()
    return lines(), 200, {"Content-Type": "text/plain"}


@app.websocket("/ws")
async def ws():
    while True:
        message = await websocket.receive()
        if message == "bye":
            await websocket.close(4004, "quart bye")
            return
        await websocket.send(f"echo {message}")
