"""python-socketio's ASGI app for the end-to-end tests (tests/.venv),
driven by tests/tools/socketio_client.py: an event answered with an ack,
rooms, and a broadcast to every other client of a room."""

import socketio

sio = socketio.AsyncServer(async_mode="asgi")


@sio.event
async def connect(sid, environ, auth):
    await sio.save_session(sid, {"name": (auth or {}).get("name", "anonymous")})


@sio.on("echo")
async def echo(sid, data):
    session = await sio.get_session(sid)
    return {"echo": data, "from": session["name"]}


@sio.on("join")
async def join(sid, room):
    await sio.enter_room(sid, room)
    return "joined " + room


@sio.on("say")
async def say(sid, data):
    session = await sio.get_session(sid)
    await sio.emit("news", {"text": data["text"], "from": session["name"]}, room=data["room"], skip_sid=sid)


app = socketio.ASGIApp(sio)
