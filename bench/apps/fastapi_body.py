"""The FastAPI row with a body: POST /items with a JSON object that
pydantic validates into a model, answered with the model's fields and a
derived one, as a typical FastAPI endpoint does.

    bin/m0serve --interface asgi --app-dir bench/apps fastapi_body:app

The harness posts {"name":"widget","price":2.5,"quantity":4}; the answer
is {"name":"widget","total":10.0}.
"""
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float
    quantity: int


class Total(BaseModel):
    name: str
    total: float


@app.post("/items")
async def items(item: Item) -> Total:
    return Total(name=item.name, total=item.price * item.quantity)
