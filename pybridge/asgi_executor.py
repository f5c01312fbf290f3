"""The Python half of pybridge's ASGI 3.0 executor.

One handler thread runs this module's event loop. Requests are the C
side's (asgi_executor.c starts each as a task; asgi_request.c owns its
receive and send): what is left here is the loop's main coroutine and
the lifespan protocol.
"""

import asyncio
import inspect
import sys

import _m0asgi

# send() after the client went away (ASGI spec: a server-specific
# subclass of OSError); the C request type raises it.
ClientDisconnected = _m0asgi.ClientDisconnected


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
