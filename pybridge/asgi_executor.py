"""The Python half of pybridge's ASGI 3.0 executor.

One handler thread runs this module's event loop, or the server's loop
thread steps it (driven). Requests are the C side's (asgi_executor.c
starts each as a task; asgi_request.c owns its receive and send): what
is left here is the loop's main coroutine, the stepping, and the
lifespan protocol.
"""

import asyncio
import inspect
import selectors
import sys
import threading

import _m0asgi

# send() after the client went away (ASGI spec: a server-specific
# subclass of OSError); the C request type raises it.
ClientDisconnected = _m0asgi.ClientDisconnected


def _is_request(task):
    """Whether task runs a request: asgi_executor.c starts each with the
    coroutine asgi_task.c wraps the app's in."""
    coro = type(task.get_coro())
    return coro.__module__ == "_m0asgi" and coro.__name__ == "RequestRun"


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


def _realtime_state():
    """The lifespan state every scope copies: under --realtime, "m0" is
    m0pub's Broadcast (publish from an ASGI app, as the Mojo m0serve's)."""
    try:
        from m0serve import m0pub
    except ImportError:
        return {}
    return {"m0": m0pub.Broadcast()} if m0pub.bus_write_fds() else {}


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


class _DrivenSelector(selectors.DefaultSelector):
    """The selector of a loop the server's loop thread steps: while
    driven, select never blocks (the server waits, on its own ring), and
    asks the kernel only when the server saw the descriptor ready."""

    driven = False
    io = False

    def select(self, timeout=None):
        if self.driven:
            if not self.io:
                return []
            timeout = 0
        return super().select(timeout)


class Executor:
    """The event loop of the ASGI apps (one, or several --mount ones),
    their lifespans and their requests."""

    def __init__(self, exid, apps, loop_kind, lifespan, wake_fd, cancel_timeout, driven):
        self.exid = exid
        self.apps = [app if _asgi3(app) else _ASGI2(app) for app in apps]
        self.selector = None
        if driven:
            # Stepped through asyncio's own iteration (_run_once, on every
            # CPython from 3.10): uvloop has no step of its own.
            self.selector = _DrivenSelector()
            self.loop, self.loop_name = asyncio.SelectorEventLoop(self.selector), "asyncio"
        else:
            self.loop, self.loop_name = _new_loop(loop_kind)
        asyncio.set_event_loop(self.loop)
        self.lifespan = lifespan
        self.lifespans = [_Lifespan(app, lifespan) for app in self.apps]
        self.states = [each.state for each in self.lifespans]
        self.wake_fd = wake_fd
        self.cancel_timeout = cancel_timeout
        self.stopped = self.loop.create_future()

    def stop(self):
        if not self.stopped.done():
            self.stopped.set_result(None)

    def run(self):
        """Start, then serve until stopped; driven, only start: the
        loop thread steps the loop from here, and finish ends it."""
        if self.selector is not None:
            try:
                if self.loop.run_until_complete(self.begin()):
                    return
            except BaseException:
                self.close()
                raise
            self.close()
            return
        try:
            self.loop.run_until_complete(self.main())
        finally:
            self.close()

    def finish(self):
        try:
            self.loop.run_until_complete(self.serve())
        finally:
            self.close()

    def close(self):
        try:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            self.loop.close()

    # Driven: the loop thread makes the loop its running one for as long
    # as it serves (what run_forever sets up, once rather than per step),
    # then steps it one iteration per pass of its own.

    def enter(self):
        loop = self.loop
        self.hooks = sys.get_asyncgen_hooks()
        loop._thread_id = threading.get_ident()
        sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook)
        asyncio.events._set_running_loop(loop)
        self.selector.driven = True
        return self.selector.fileno()

    def step(self, io):
        loop = self.loop
        self.selector.io = io
        loop._run_once()
        if loop._ready:
            return 0.0
        if loop._scheduled:
            return max(0.0, loop._scheduled[0]._when - loop.time())
        return -1.0

    def leave(self):
        self.selector.driven = False
        asyncio.events._set_running_loop(None)
        self.loop._thread_id = None
        sys.set_asyncgen_hooks(*self.hooks)

    async def main(self):
        if await self.begin():
            await self.serve()

    async def begin(self):
        """Lifespan startup; whether it went well."""
        error = None
        if self.lifespan != "off":
            # In the order mounted; the first failure fails the start.
            for each in self.lifespans:
                error = await each.startup()
                if error is not None:
                    break
        _m0asgi.started(self.exid, error, self.loop_name, self.loop.get_task_factory())
        if error is not None:
            for each in self.lifespans:
                if each.task is not None:
                    each.task.cancel()
            return False
        return True

    async def serve(self):
        # The reader stays while tasks are cancelled: their finally
        # clauses may still send, and a send's resume comes by the wake.
        self.loop.add_reader(self.wake_fd, _m0asgi.wake, self.exid)
        try:
            await self.stopped
            # The requests' tasks first, then lifespan shutdown, then
            # whatever else still runs, as uvicorn and asyncio.run do: a
            # task the lifespan started (anyio's task group in Litestar's
            # event emitter, a broadcaster's reader) is the lifespan's to
            # end. Cancelled before it, anyio cancelled the lifespan task
            # too ("lifespan shutdown failed: CancelledError").
            await self.cancel_tasks(_is_request)
            if self.lifespan != "off":
                for each in reversed(self.lifespans):
                    if each.task is not None:
                        await each.shutdown()
            await self.cancel_tasks(lambda task: True)
        finally:
            self.loop.remove_reader(self.wake_fd)
            # Jobs queued since the last wake end with a 503, and reads
            # and sends still waiting on the server fail.
            _m0asgi.wake(self.exid, True)

    async def cancel_tasks(self, which):
        current = asyncio.current_task()
        lifespans = {each.task for each in self.lifespans}
        tasks = [t for t in asyncio.all_tasks() if t is not current and t not in lifespans and which(t)]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=self.cancel_timeout)


class _Lifespan:
    """One app's lifespan, as uvicorn runs it: "auto" tolerates an app
    that raises on the lifespan scope; "on" makes that a startup failure.
    Its state is the app's own, copied into each of its scopes."""

    def __init__(self, app, lifespan):
        self.app = app
        self.lifespan = lifespan
        self.state = _realtime_state()
        self.task = None
        self.lifespan_queue = None
        self.startup_done = None
        self.shutdown_done = None
        self.startup_failed = None
        self.shutdown_failed = None
        self.lifespan_error = False

    async def startup(self):
        self.lifespan_queue = asyncio.Queue()
        self.startup_done = asyncio.Event()
        self.shutdown_done = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self.lifespan_main())
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
