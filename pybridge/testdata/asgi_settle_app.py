"""The app of pybridge/asgi_settle_test.go: requests whose sends and
receives must settle although a hook of the bridge's raised on the way
(a waiting receive's future refusing its result), and a task that is
closed or collected unfinished while its coroutine ignores
GeneratorExit. /seen answers what the last request recorded; /gc
collects; /close-task closes the waiting task's coroutine."""

import asyncio
import gc

seen = []
waiting = []  # /ignores-exit's task, for /close-task (not for /gc)


class Refusing(asyncio.Future):
    """A future whose result cannot be set: the disconnect the bridge
    gives a waiting receive raises inside its resume of a send."""

    def set_result(self, value):
        raise RuntimeError("refused by the test")


def refusing_receive(receive):
    loop = asyncio.get_running_loop()
    loop.create_future = lambda: Refusing(loop=loop)
    try:
        return receive()
    finally:
        del loop.create_future


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    path = scope["path"]
    if path == "/seen":
        # Asked once the response has ended, which can be before the task
        # that ended it has run its next line.
        for _ in range(5000):
            if seen:
                break
            await asyncio.sleep(0.001)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": " ".join(seen).encode()})
        return
    if path == "/gc":
        waiting.clear()
        gc.collect()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"collected"})
        return
    if path == "/started":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"yes"})
        return
    seen.clear()
    if path in ("/written-raises", "/gone-raises"):
        assert (await receive())["type"] == "http.request"
        # Held until the response ends: it waits for the disconnect.
        waiters = [refusing_receive(receive)]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        try:
            # Past the buffer: a write, whose resume ends the response
            # and tells the waiting receive, which refuses.
            await send({"type": "http.response.body", "body": b"x" * 100000})
            seen.append("sent")
        except OSError as e:
            seen.append(type(e).__name__)
        waiters.clear()
        return
    if path == "/close-task":
        # What asyncio does to a task it drops: close its coroutine.
        try:
            waiting[-1].get_coro().close()  # kept: no collection closes it again
        except RuntimeError as e:
            seen.append(str(e))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"closed"})
        return
    if path == "/ignores-exit":
        waiting.append(asyncio.current_task())
        try:
            await asyncio.get_running_loop().create_future()  # never set
        except GeneratorExit:
            seen.append("closed")
            await asyncio.sleep(0)  # close() raises: "coroutine ignored GeneratorExit"
