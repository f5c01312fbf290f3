"""The Python half of pybridge's ASGI 3.0 executor.

One handler thread runs this module's event loop. The C side (the
_m0asgi module, asgi_module.c) builds each scope from a template, reads
the response head through the C API into the job's arena and moves body
bytes; what is left here is the protocol's order of messages and the
awaiting. One Request per request, with bound receive and send: no
closures are made per request (measured: three closures and their lists
cost more than the scope build).
"""

import asyncio
import inspect
import sys

import _m0asgi

# Send states: the order ASGI's HTTP messages must come in.
START, BODY, TRAILERS, DONE = 0, 1, 2, 3

# What a write or a pathsend answered (asgi_module.c): done at once,
# queued (await the resume), or the client is gone.
WRITTEN, QUEUED, GONE = 0, 1, -1


class ClientDisconnected(OSError):
    """send() after the client went away (ASGI spec: a server-specific
    subclass of OSError)."""


def _asgi3(app):
    """uvicorn's rule: a class is ASGI 3 when its instances are
    awaitable; a function or a callable object when it is a coroutine
    function. Anything else is ASGI 2 (double-callable)."""
    if inspect.isclass(app):
        return hasattr(app, "__await__")
    if inspect.isfunction(app) or inspect.ismethod(app):
        return asyncio.iscoroutinefunction(app)
    call = getattr(app, "__call__", None)
    return asyncio.iscoroutinefunction(call)


class _ASGI2:
    __slots__ = ("app",)

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        instance = self.app(scope)
        await instance(receive, send)


def _new_loop(kind):
    if kind in ("auto", "uvloop"):
        try:
            import uvloop
        except ImportError:
            if kind == "uvloop":
                raise
        else:
            return uvloop.new_event_loop(), "uvloop"
    return asyncio.new_event_loop(), "asyncio"


class Request(_m0asgi.Request):
    """One HTTP request: its receive and send, bound methods of one
    object. The C base (asgi_request.c) holds the state, named as
    members (slot, executor, send_state, trailers, streaming, body_done,
    reading, writing, gone, closed, stash), and answers the common
    messages itself; _receive and _send, below, are the rest of the
    protocol."""

    __slots__ = ()

    async def run(self, awaitable):
        """What an app returned that is not a coroutine (those run in
        asgi_task.c, which does the same), awaited as the request's task."""
        slot = self.slot
        try:
            await awaitable
        except asyncio.CancelledError:
            _m0asgi.cancelled(slot)
        except BaseException as exc:
            _m0asgi.failed(slot, exc, "the ASGI application raised")
        else:
            if self.send_state != DONE:
                _m0asgi.failed(slot, None, "the ASGI application returned without completing its response")
        finally:
            # Ends the request too (m0_asgi_request_end): a send or
            # receive kept past the task must not reach the slot's next
            # request.
            _m0asgi.release(slot)

    def _close(self):
        self.closed = True
        gone = self.gone
        if gone is not None and not gone.done():
            gone.set_result(None)

    async def _receive(self):
        while not self.body_done:
            message = self.stash
            if message is not None:
                self.stash = None
            elif self.reading is not None:
                if self.reading.done():
                    # The receive that asked was cancelled; its read is
                    # still out, and its piece comes to this one.
                    self.reading = self.executor.loop.create_future()
                    message = await self.reading
                else:
                    # Another receive waits on a read: wait for it
                    # (without cancelling it if this one is), then read on.
                    await asyncio.wait((self.reading,))
                    continue
            else:
                message = _m0asgi.read(self.slot)
                if message is None:
                    fut = self.executor.loop.create_future()
                    self.reading = fut
                    # Cancelled here, the piece is kept for the next
                    # receive (resume_read finds the future done).
                    message = await fut
            if message["type"] != "http.request" or not message["more_body"]:
                self.body_done = True
                if message["type"] == "http.disconnect":
                    self._close()
            return message
        if not self.closed:
            if self.gone is None:
                self.gone = self.executor.loop.create_future()
            await self.gone
        return {"type": "http.disconnect"}

    def resume_read(self, message):
        fut = self.reading
        self.reading = None
        if fut is not None and not fut.done():
            fut.set_result(message)
        else:
            self.stash = message

    def resume_input_ended(self):
        # The client sends no more: a receive after the body says
        # http.disconnect, but the response still goes out (not _close).
        gone = self.gone
        if gone is None:
            gone = self.gone = self.executor.loop.create_future()
        if not gone.done():
            gone.set_result(None)

    def resume_gone(self):
        self._close()
        fut = self.reading
        self.reading = None
        if fut is not None and not fut.done():
            fut.set_result({"type": "http.disconnect"})

    def resume_write(self, rc):
        fut = self.writing
        self.writing = None
        if rc == GONE:
            self._close()
        if fut is not None and not fut.done():
            fut.set_result(rc)

    async def _wait_write(self, rc):
        if rc == QUEUED:
            # One write at a time (asgi_module.c refuses a second): a
            # cancelled send leaves its write to finish on its own.
            fut = self.executor.loop.create_future()
            self.writing = fut
            rc = await fut
        if rc == GONE:
            self.send_state = DONE
            raise ClientDisconnected("the client is gone")

    async def _send(self, message):
        kind = message["type"]
        state = self.send_state
        if self.closed and state != DONE:
            raise ClientDisconnected("the client is gone")
        if state == BODY and kind == "http.response.body":
            body = message.get("body", b"")
            more = message.get("more_body", False)
            if not more and not self.streaming and not self.trailers:
                # The fast path: the whole response in one message.
                self.send_state = DONE
                rc = _m0asgi.complete(self.slot, body)
                if rc != WRITTEN:
                    await self._wait_write(rc)
                    _m0asgi.finish(self.slot)
                self._close()
                return
            self.streaming = True
            if body:
                await self._wait_write(_m0asgi.write(self.slot, body))
            if not more:
                if self.trailers:
                    self.send_state = TRAILERS
                    return
                self.send_state = DONE
                await self._wait_write(_m0asgi.flush(self.slot))
                _m0asgi.finish(self.slot)
                self._close()
            return
        if state == START and kind == "http.response.start":
            self.trailers = bool(message.get("trailers", False))
            _m0asgi.head(self.slot, message["status"], message.get("headers", ()), self.trailers)
            self.send_state = BODY
            return
        if state == BODY and kind == "http.response.pathsend" and not self.streaming:
            self.send_state = DONE
            _m0asgi.pathsend(self.slot, message["path"])
            self._close()
            return
        if state == TRAILERS and kind == "http.response.trailers":
            _m0asgi.trailers(self.slot, message.get("headers", ()))
            if not message.get("more_trailers", False):
                self.send_state = DONE
                await self._wait_write(_m0asgi.flush(self.slot))
                _m0asgi.finish(self.slot)
                self._close()
            return
        if state == DONE and self.closed and kind.startswith("http.response."):
            # After the response ended: the spec has send raise once the
            # connection is closed; a later message is the app's error.
            raise RuntimeError(f"ASGI message {kind!r} after the response was complete")
        raise RuntimeError(f"unexpected ASGI message {kind!r} in response state {('start', 'body', 'trailers', 'done')[state]}")


class Executor:
    """The event loop of one ASGI app, its lifespan and its requests."""

    def __init__(self, exid, app, loop_kind, lifespan, wake_fd, cancel_timeout):
        self.exid = exid
        self.app = app if _asgi3(app) else _ASGI2(app)
        self.loop, self.loop_name = _new_loop(loop_kind)
        asyncio.set_event_loop(self.loop)
        self.lifespan = lifespan
        self.state = {}
        self.wake_fd = wake_fd
        self.cancel_timeout = cancel_timeout
        self.stopped = self.loop.create_future()
        self.lifespan_task = None
        self.lifespan_queue = None
        self.startup_done = None
        self.shutdown_done = None
        self.startup_failed = None
        self.shutdown_failed = None
        self.lifespan_error = False

    def stop(self):
        if not self.stopped.done():
            self.stopped.set_result(None)

    def run(self):
        try:
            self.loop.run_until_complete(self.main())
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                self.loop.close()

    async def main(self):
        error = None
        if self.lifespan != "off":
            error = await self.startup()
        _m0asgi.started(self.exid, error, self.loop_name, self.loop.get_task_factory())
        if error is not None:
            if self.lifespan_task is not None:
                self.lifespan_task.cancel()
            return
        # The reader stays while tasks are cancelled: their finally
        # clauses may still send, and a send's resume comes by the wake.
        self.loop.add_reader(self.wake_fd, _m0asgi.wake, self.exid)
        try:
            await self.stopped
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current and t is not self.lifespan_task]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=self.cancel_timeout)
            if self.lifespan != "off" and self.lifespan_task is not None:
                await self.shutdown()
        finally:
            self.loop.remove_reader(self.wake_fd)
            # Jobs queued since the last wake end with a 503.
            _m0asgi.wake(self.exid)

    # Lifespan, as uvicorn runs it: "auto" tolerates an app that raises
    # on the lifespan scope; "on" makes that a startup failure.

    async def startup(self):
        self.lifespan_queue = asyncio.Queue()
        self.startup_done = asyncio.Event()
        self.shutdown_done = asyncio.Event()
        self.lifespan_task = self.loop.create_task(self.lifespan_main())
        await self.lifespan_queue.put({"type": "lifespan.startup"})
        await self.startup_done.wait()
        if self.startup_failed is not None:
            return self.startup_failed or "lifespan startup failed"
        if self.lifespan_error and self.lifespan == "on":
            return "the application raised in the lifespan protocol (see the traceback above)"
        return None

    async def shutdown(self):
        if self.lifespan_error:
            return
        await self.lifespan_queue.put({"type": "lifespan.shutdown"})
        await self.shutdown_done.wait()
        if self.shutdown_failed is not None:
            _m0asgi.log(f"m0serve: ASGI lifespan shutdown failed: {self.shutdown_failed}")

    async def lifespan_main(self):
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        try:
            await self.app(scope, self.lifespan_receive, self.lifespan_send)
        except BaseException:
            self.lifespan_error = True
            if self.startup_failed is None and self.shutdown_failed is None:
                if self.lifespan == "auto":
                    _m0asgi.log("m0serve: ASGI 'lifespan' protocol appears unsupported.")
                else:
                    _m0asgi.log_exception(sys.exc_info()[1], "m0serve: exception in the ASGI 'lifespan' protocol")
        finally:
            self.startup_done.set()
            self.shutdown_done.set()

    async def lifespan_receive(self):
        return await self.lifespan_queue.get()

    async def lifespan_send(self, message):
        kind = message["type"]
        if kind == "lifespan.startup.complete" and not self.startup_done.is_set():
            self.startup_done.set()
        elif kind == "lifespan.startup.failed" and not self.startup_done.is_set():
            self.startup_failed = str(message.get("message", ""))
            self.startup_done.set()
        elif kind == "lifespan.shutdown.complete" and self.startup_done.is_set():
            self.shutdown_done.set()
        elif kind == "lifespan.shutdown.failed" and self.startup_done.is_set():
            self.shutdown_failed = str(message.get("message", ""))
            self.shutdown_done.set()
        else:
            raise RuntimeError(f"unexpected ASGI lifespan message {kind!r}")
