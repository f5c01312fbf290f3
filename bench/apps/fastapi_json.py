"""The FastAPI benchmark app: one GET route returning a dict, the row of
`make bench-python` where FastAPI's dependency resolution and response
serialisation (jsonable_encoder, then JSONResponse) sit on top of
Starlette's cost.

    bin/m0serve --interface asgi --loop uvloop --app-dir bench/apps fastapi_json:app

GET / answers {"message":"Hello, World!"} with Content-Type
application/json, the same bytes as starlette_json.py.
"""
from fastapi import FastAPI

app = FastAPI()


@app.get("/")
async def hello():
    return {"message": "Hello, World!"}
