"""A Litestar 2 app for the end-to-end tests (tests/.venv): routes with
typed path and query parameters, a dataclass body validated by Litestar
(a bad one is its 400), a streamed response, lifespan state, and two
WebSocket handlers: a listener that echoes, and a raw handler that closes
with a code of its own."""

from dataclasses import dataclass

from litestar import Litestar, WebSocket, get, post, websocket, websocket_listener
from litestar.datastructures import State
from litestar.response import Stream


@dataclass
class Order:
    item: str
    quantity: int


def startup(app: Litestar) -> None:
    app.state.greeting = "started by lifespan"


@get("/")
async def index() -> str:
    return "Hello from Litestar"


@get("/state")
async def state(state: State) -> dict:
    return {"greeting": state.greeting}


@get("/items/{item_id:int}")
async def item(item_id: int, q: str = "none") -> dict:
    return {"id": item_id, "q": q}


@post("/orders")
async def orders(data: Order) -> dict:
    return {"item": data.item, "quantity": data.quantity, "double": data.quantity * 2}


@get("/stream")
async def stream() -> Stream:
    async def lines():
        for i in range(50):
            yield f"line {i}\n"
    return Stream(lines(), media_type="text/plain")


@websocket_listener("/echo")
async def echo(data: str) -> str:
    return f"echo {data}"


@websocket("/raw")
async def raw(socket: WebSocket) -> None:
    await socket.accept()
    async for message in socket.iter_data():
        if message == "bye":
            await socket.close(code=4003, reason="litestar bye")
            return
        await socket.send_json({"got": message, "path": socket.scope["path"]})


app = Litestar([index, state, item, orders, stream, echo, raw], on_startup=[startup])
