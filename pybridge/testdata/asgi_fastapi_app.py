"""A FastAPI app for the executor's framework tests."""

from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []


@app.post("/items")
async def create(item: Item):
    return {"name": item.name, "total": item.price * 2, "tags": item.tags}


@app.get("/items/{item_id}")
async def read(item_id: int, q: str | None = None):
    return {"item_id": item_id, "q": q}
