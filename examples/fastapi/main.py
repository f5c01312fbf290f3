"""A FastAPI app with a WebSocket chat, served by m0serve (ASGI).

    m0serve --app-dir examples/fastapi --static-path-mount examples/fastapi/static main:app

Routes:
  GET  /                  the chat page (it loads /static/chat.js)
  GET  /api/health        {"status": "ok", "members": N}
  GET  /api/whoami        the client, scheme and host the app sees
  WS   /ws?name=NAME      the chat: every text message a member sends goes
                          to every member as {"from": NAME, "text": ...};
                          joins and leaves as {"event": "join"|"leave", ...}

/static/ is served by m0serve itself (--static-path-mount) or, behind
nginx, by nginx (../nginx/m0serve.conf): not by the app.
"""
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse

app = FastAPI(title="m0serve chat")


class Room:
    """The members connected to this process. With --workers N each
    worker has its own room: a chat across workers needs a shared broker
    (Redis pub/sub, PostgreSQL LISTEN), or one worker."""

    def __init__(self):
        self.members = {}  # WebSocket -> name

    async def join(self, websocket, name):
        await websocket.accept()
        self.members[websocket] = name
        await self.broadcast({"event": "join", "name": name, "members": len(self.members)})

    async def leave(self, websocket):
        name = self.members.pop(websocket, None)
        if name is not None:
            await self.broadcast({"event": "leave", "name": name, "members": len(self.members)})

    async def broadcast(self, message):
        # A member whose connection has gone is dropped, not retried.
        for websocket in list(self.members):
            try:
                await websocket.send_json(message)
            except Exception:
                self.members.pop(websocket, None)


room = Room()

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>m0serve chat</title></head>
<body>
<h1>m0serve chat</h1>
<form id="join"><input id="name" placeholder="your name" required> <button>Join</button></form>
<ul id="log"></ul>
<form id="say" hidden><input id="text" autocomplete="off"> <button>Send</button></form>
<script src="/static/chat.js"></script>
</body>
</html>
"""


@app.get("/", response_class=HTMLResponse)
async def index():
    return PAGE


@app.get("/api/health")
async def health():
    return {"status": "ok", "members": len(room.members)}


@app.get("/api/whoami")
async def whoami(request: Request):
    client = request.client.host if request.client else None
    return {"client": client, "scheme": request.url.scheme, "host": request.headers.get("host")}


@app.websocket("/ws")
async def chat(websocket: WebSocket, name: str = "anonymous"):
    await room.join(websocket, name[:32])
    try:
        while True:
            text = await websocket.receive_text()
            await room.broadcast({"from": name[:32], "text": text[:1000]})
    except WebSocketDisconnect:
        pass
    finally:
        await room.leave(websocket)
