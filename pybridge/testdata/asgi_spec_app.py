"""ASGI apps for the executor's spec tests: one route per behaviour."""

import asyncio
import contextvars
import json
import os
import sys
import tempfile
import threading

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "file_body.txt")

# What a task saw after its response, read back by a later request.
seen = {}
kept = []

# Set by each /first-step request: the next one must not see it.
_request_var = contextvars.ContextVar("request_var")
_answered_task = None


def _jsonable(v):
    if isinstance(v, bytes):
        return {"bytes": v.decode("latin-1")}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    return v


async def _reply(send, status, body, headers=()):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), *headers]})
    await send({"type": "http.response.body", "body": body})


async def _read_all(receive):
    pieces = []
    while True:
        m = await receive()
        assert m["type"] == "http.request", m
        pieces.append(m["body"])
        if not m.get("more_body", False):
            return pieces


_counted = {"now": 0, "max": 0}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            m = await receive()
            if m["type"] == "lifespan.startup":
                scope["state"]["greeting"] = "from lifespan"
                await send({"type": "lifespan.startup.complete"})
            elif m["type"] == "lifespan.shutdown":
                # The test that made this file reads it back.
                marker = os.path.join(tempfile.gettempdir(), f"m0-asgi-shutdown-{os.getpid()}")
                if os.path.exists(marker):
                    open(marker, "w").write("shutdown")
                await send({"type": "lifespan.shutdown.complete"})
                return
    # The route is what follows the root path (as Starlette's routing reads it).
    path = scope["path"][len(scope["root_path"]):]
    query = scope["query_string"].decode()
    if path != "/seen":
        # What an earlier run of the same test recorded (go test -count).
        seen.pop(query, None)
    if path == "/hello":
        await _reply(send, 200, b"hello")
    elif path == "/keep":
        # receive and send kept past the request's task, for /stale.
        kept[:] = [receive, send]
        await _reply(send, 200, b"kept")
    elif path == "/stale":
        old_receive, old_send = kept
        m = await old_receive()
        try:
            await old_send({"type": "http.response.start", "status": 200, "headers": []})
            sent = "sent"
        except RuntimeError as e:
            sent = type(e).__name__
        body = b"".join(await _read_all(receive))
        await _reply(send, 200, b"%s %s %s" % (m["type"].encode(), sent.encode(), body))
    elif path == "/awaitables":
        # receive and send return awaitables, not coroutines: they work
        # wherever asyncio takes an awaitable.
        m = await asyncio.ensure_future(receive())
        task = asyncio.current_task()
        await asyncio.gather(send({"type": "http.response.start", "status": 200, "headers": []}))
        await asyncio.ensure_future(send({"type": "http.response.body", "body": b"%s %r %s" % (
            m["type"].encode(), m["more_body"], task.get_name().encode())}))
    elif path.startswith("/scope"):
        s = {k: v for k, v in scope.items() if k != "state"}
        s["state"] = dict(scope["state"])
        await _reply(send, 200, json.dumps(_jsonable(s)).encode())
    elif path == "/echo":
        pieces = await _read_all(receive)
        await _reply(send, 200, b"".join(pieces), [(b"x-pieces", str(len(pieces)).encode())])
    elif path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"one;", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        await send({"type": "http.response.body", "body": bytearray(b"two;"), "more_body": True})
        await send({"type": "http.response.body", "body": b"three", "more_body": False})
    elif path == "/stream-yielding":
        # A turn of the event loop between pieces, as anyio's checkpoints
        # take one.
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for piece in (b"one;", b"two;"):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b"three", "more_body": False})
    elif path == "/no-turn":
        # A receive whose piece is in and a send the output has room for
        # are over without a turn of the event loop, as a transport's
        # read and write are: the other task has not run by the end.
        turns = []

        async def other():
            turns.append(1)

        task = asyncio.ensure_future(other())
        message = await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": message["body"], "more_body": True})
        ran = len(turns)
        await task
        await send({"type": "http.response.body", "body": b" turns %d" % ran})
    elif path == "/trailers":
        await send({"type": "http.response.start", "status": 200, "headers": [], "trailers": True})
        await send({"type": "http.response.body", "body": b"data", "more_body": False})
        await send({"type": "http.response.trailers", "headers": [(b"x-sum", b"1")], "more_trailers": True})
        await send({"type": "http.response.trailers", "headers": [(b"x-count", b"2")]})
    elif path == "/after-done":
        await _reply(send, 200, b"first")
        try:
            await send({"type": "http.response.body", "body": b"again"})
        except Exception as e:
            seen[query] = type(e).__name__
        seen.setdefault(query, "no error")
    elif path == "/disconnect":
        await _read_all(receive)
        await _reply(send, 200, b"ok")
        m = await receive()
        seen[query] = m["type"]
    elif path == "/seen":
        for _ in range(500):
            if query in seen:
                break
            await asyncio.sleep(0.01)
        await _reply(send, 200, str(seen.get(query)).encode())
    elif path == "/wait-disconnect":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"tick", "more_body": True})
        m = await receive()
        try:
            await send({"type": "http.response.body", "body": b"tock", "more_body": True})
            seen[query] = m["type"] + " then sent"
        except OSError as e:
            seen[query] = m["type"] + " then " + type(e).__name__
            raise
    elif path == "/cancel-receive":
        t = asyncio.ensure_future(receive())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        t.cancel()
        try:
            await t
        except asyncio.CancelledError:
            pass
        seen[query] = "cancelled"
        await _reply(send, 200, b"".join(await _read_all(receive)))
    elif path == "/receive-past-the-task":
        # A receive of the app's own, still waiting for a body piece when
        # the request's task ends, gets http.disconnect then.
        async def wait_for_body():
            seen[query] = (await receive())["type"]
        kept[:] = [asyncio.ensure_future(wait_for_body())]
        await asyncio.sleep(0)
        await _reply(send, 200, b"answered")
    elif path == "/two-receives":
        first, second = await asyncio.gather(receive(), receive())
        rest = await _read_all(receive) if second["more_body"] else []
        await _reply(send, 200, first["body"] + second["body"] + b"".join(rest))
    elif path == "/raise-before":
        raise ValueError("raised before the head")
    elif path == "/raise-after":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise ValueError("raised after the head")
    elif path == "/no-response":
        return
    elif path == "/head-only":
        await send({"type": "http.response.start", "status": 200, "headers": []})
    elif path == "/body-first":
        await send({"type": "http.response.body", "body": b"x"})
    elif path == "/bad-status":
        await send({"type": "http.response.start", "status": "200", "headers": []})
    elif path == "/bad-header":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x", b"a\r\nb")]})
    elif path == "/str-header":
        await send({"type": "http.response.start", "status": 200, "headers": [("x", "y")]})
    elif path == "/double-start":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.start", "status": 200, "headers": []})
    elif path == "/pathsend":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.pathsend", "path": FILE})
    elif path == "/big":
        await _reply(send, 200, b"x" * (200 << 10))
    elif path == "/sleep":
        await asyncio.sleep(0.2)
        await _reply(send, 200, str(threading.get_ident()).encode())
    elif path == "/counted":
        # How many /counted requests run at once, at most (MaxInFlight).
        _counted["now"] += 1
        _counted["max"] = max(_counted["max"], _counted["now"])
        try:
            await asyncio.sleep(0.2)
        finally:
            _counted["now"] -= 1
        await _reply(send, 200, str(_counted["max"]).encode())
    elif path == "/forever":
        try:
            await asyncio.sleep(3600)
        finally:
            open(query, "w").write("finally ran")
    elif path == "/first-step":
        # The request's first step (eager on every version: asgi_eager.c
        # before 3.12) runs in the request's task, in a context of its
        # own; stepped from the server's thread, no Python frame is below
        # it, as none is when the task's constructor runs it.
        task = asyncio.current_task()
        leaked = _request_var.get("unset")
        _request_var.set(query)
        below = "none" if sys._getframe().f_back is None else sys._getframe().f_back.f_code.co_name
        await _reply(send, 200, f"{task.get_name()}|{leaked}|{below}".encode())
    elif path == "/registered":
        # ?keep answers at once and keeps its own task; the next request
        # says whether asyncio's registry of tasks holds that task (done
        # in its first step), and whether all_tasks() lists a task this
        # request starts and leaves pending.
        global _answered_task
        if query == "keep":
            _answered_task = asyncio.current_task()
            await _reply(send, 200, b"kept")
            return
        registry = getattr(asyncio.tasks, "_all_tasks", None)
        if registry is None:  # 3.12 and later
            registry = asyncio.tasks._scheduled_tasks
        gate = asyncio.Event()
        pending = asyncio.ensure_future(gate.wait())
        listed = pending in asyncio.all_tasks()
        gate.set()
        await pending
        await _reply(send, 200, f"{_answered_task in registry}|{listed}".encode())
    elif path == "/loop":
        await _reply(send, 200, type(asyncio.get_running_loop()).__module__.encode())
    else:
        await _reply(send, 404, b"not found")


async def failing_startup(scope, receive, send):
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "the database is down"})
        return
    await _reply(send, 200, b"unreachable")


async def task_factory(scope, receive, send):
    """Sets a task factory at startup; each request reports whether its
    task came from it."""
    if scope["type"] == "lifespan":
        await receive()
        made = set()

        def factory(loop, coro, **kwargs):
            task = asyncio.Task(coro, loop=loop, **kwargs)
            made.add(task)
            return task

        asyncio.get_running_loop().set_task_factory(factory)
        scope["state"]["made"] = made
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b"from the factory" if asyncio.current_task() in scope["state"]["made"] else b"not from the factory"
    await _reply(send, 200, body)


async def no_lifespan(scope, receive, send):
    if scope["type"] == "lifespan":
        raise RuntimeError("this app does not do lifespan")
    await _reply(send, 200, b"served without lifespan")


class ASGI2:
    """A double-callable (ASGI 2) app."""

    def __init__(self, scope):
        self.scope = scope

    async def __call__(self, receive, send):
        if self.scope["type"] == "lifespan":
            raise RuntimeError("no lifespan")
        await _reply(send, 200, b"asgi2 " + self.scope["path"].encode())


class AwaitableApp:
    """An ASGI 3 app that is a class with awaitable instances: calling it
    returns an awaitable that is not a coroutine."""

    def __init__(self, scope, receive, send):
        if scope.get("path") == "/raise-on-call":
            raise ValueError("raised when called")
        self.scope, self.send = scope, send

    def __await__(self):
        if self.scope["type"] == "lifespan":
            raise RuntimeError("no lifespan")
        return _reply(self.send, 200, b"awaitable " + self.scope["path"].encode()).__await__()
