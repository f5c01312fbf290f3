"""A FastAPI app for the end-to-end ASGI tests: a pydantic model, a
dependency on lifespan state."""

import contextlib

from fastapi import Depends, FastAPI, Request
from pydantic import BaseModel

app = FastAPI(title="m0serve e2e")


@contextlib.asynccontextmanager
async def lifespan(app):
    # Lifespan state (Starlette >= 0.26), through the router: this
    # FastAPI (0.92) has no lifespan argument of its own.
    yield {"prices": {"apple": 1.5, "pear": 2.0}}

app.router.lifespan_context = lifespan


class Order(BaseModel):
    fruit: str
    quantity: int


def price_list(request: Request) -> dict:
    return request.state.prices


@app.post("/orders")
async def order(body: Order, prices: dict = Depends(price_list)):
    return {"fruit": body.fruit, "quantity": body.quantity,
            "total": prices[body.fruit] * body.quantity}


@app.get("/prices/{fruit}")
async def price(fruit: str, prices: dict = Depends(price_list)):
    return {"fruit": fruit, "price": prices.get(fruit)}
