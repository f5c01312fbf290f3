"""HttpArena's endpoints as a plain ASGI 3 app (no framework; asyncpg for
the database profiles, requirements.txt), served by m0serve. /static/*
never reaches it: m0serve's own static mount serves /data/static
(launch.sh)."""
import json
import os
import struct
import time
import zlib
from urllib.parse import parse_qsl

import asyncpg

DATASET_PATH = os.environ.get("DATASET_PATH", "/data/dataset.json")
try:
    with open(DATASET_PATH, encoding="utf-8") as f:
        DATASET = json.load(f)
except OSError:
    DATASET = []

TEXT = (b"content-type", b"text/plain")
JSON = (b"content-type", b"application/json")
GZIP = (b"content-encoding", b"gzip")
CACHE_HIT, CACHE_MISS = (b"x-cache", b"HIT"), (b"x-cache", b"MISS")
EMPTY_DB = b'{"items":[],"count":0}'

ASYNC_DB_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE price BETWEEN $1 AND $2 LIMIT $3"""
CRUD_ONE_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE id = $1"""
CRUD_LIST_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE category = $1 ORDER BY id LIMIT $2 OFFSET $3"""
CRUD_UPSERT_SQL = """INSERT INTO items (id, name, category, price, quantity, active, tags, rating_score, rating_count)
VALUES ($1, $2, $3, $4, $5, true, '[]', 0, 0)
ON CONFLICT (id) DO UPDATE SET name = $2, category = $3, price = $4, quantity = $5"""
CRUD_UPDATE_SQL = "UPDATE items SET name = $1, price = $2, quantity = $3 WHERE id = $4"


def query_sum(scope):
    """The sum of the query's integer values (a=13&b=42: 55)."""
    total = 0
    for _, value in parse_qsl(scope["query_string"].decode("latin-1")):
        try:
            total += int(value)
        except ValueError:
            pass
    return total


async def read_body(receive):
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


async def answer(send, status, headers, body):
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def accepts_gzip(scope):
    for name, value in scope["headers"]:
        if name == b"accept-encoding":
            return b"gzip" in value
    return False


def query_ints(scope, defaults):
    """The query's values for the names of defaults, as integers; a
    missing or malformed one is its default."""
    values = dict(defaults)
    for name, value in parse_qsl(scope["query_string"].decode("latin-1")):
        if name in values:
            try:
                values[name] = int(value)
            except ValueError:
                pass
    return values


class SharedCache:
    """The crud profile's cache-aside store, shared by the server's worker
    processes (a per-process dict would answer MISS for what another
    worker cached): one file per key in a tmpfs folder, its first eight
    bytes the absolute deadline (wall clock, the same in every process),
    written whole by rename. A hit costs open, read and close, no round
    trip to a cache server."""

    def __init__(self, folder, ttl):
        self.folder, self.ttl = folder, ttl
        os.makedirs(folder, exist_ok=True)

    def get(self, key):
        try:
            with open(f"{self.folder}/{key}", "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        if len(data) < 8 or struct.unpack_from("<d", data)[0] <= time.time():
            return None
        return data[8:]

    def put(self, key, body):
        temporary = f"{self.folder}/.{key}.{os.getpid()}"
        with open(temporary, "wb") as f:
            f.write(struct.pack("<d", time.time() + self.ttl) + body)
        os.replace(temporary, f"{self.folder}/{key}")

    def drop(self, key):
        try:
            os.unlink(f"{self.folder}/{key}")
        except FileNotFoundError:
            pass


def default_cache_folder():
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else "/tmp"
    return f"{base}/m0serve-arena-crud-{os.getuid()}"


CACHE = SharedCache(os.environ.get("CRUD_CACHE_DIR") or default_cache_folder(), 0.2)


class QuietConnection(asyncpg.Connection):
    """No reset query when the pool takes a connection back (as
    HttpArena's uvicorn entry): the app holds no session state, and the
    reset would be a round trip to Postgres per request."""

    def get_reset_query(self):
        return ""


class Database:
    """A pool of asyncpg connections for this worker, made on first use
    (and again after a failure) from DATABASE_URL, its size this worker's
    share of DATABASE_MAX_CONN. Connections open as requests need them,
    so the servers on the other ports, which get no database requests,
    hold none."""

    def __init__(self):
        self.pool = None
        url = os.environ.get("DATABASE_URL", "")
        self.url = "postgresql://" + url[len("postgres://"):] if url.startswith("postgres://") else url
        workers = max(len(os.sched_getaffinity(0)), 1)
        self.size = max(int(int(os.environ.get("DATABASE_MAX_CONN", "256")) * 0.9) // workers, 2)

    async def connection_pool(self):
        if self.pool is None and self.url:
            self.pool = await asyncpg.create_pool(self.url, min_size=0, max_size=self.size,
                                                  connection_class=QuietConnection)
        return self.pool

    async def fetch(self, sql, *args):
        pool = await self.connection_pool()
        if pool is None:
            raise OSError("no DATABASE_URL")
        try:
            return await pool.fetch(sql, *args)
        except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError):
            self.pool = None
            await pool.close()
            raise

    async def execute(self, sql, *args):
        pool = await self.connection_pool()
        if pool is None:
            raise OSError("no DATABASE_URL")
        return await pool.execute(sql, *args)

    async def close(self):
        if self.pool is not None:
            pool, self.pool = self.pool, None
            await pool.close()


DATABASE = Database()


def item_of(row):
    return {
        "id": row["id"], "name": row["name"], "category": row["category"],
        "price": row["price"], "quantity": row["quantity"], "active": row["active"],
        "tags": json.loads(row["tags"]),
        "rating": {"score": row["rating_score"], "count": row["rating_count"]},
    }


def dumps(value):
    return json.dumps(value, separators=(",", ":")).encode()


async def serve_async_db(scope, send):
    """GET /async-db?min&max&limit: the items priced in [min, max], at most
    limit (1 to 50) of them; Postgres out of reach answers no items."""
    query = query_ints(scope, {"min": 10, "max": 50, "limit": 50})
    limit = min(max(query["limit"], 1), 50)
    try:
        rows = await DATABASE.fetch(ASYNC_DB_SQL, query["min"], query["max"], limit)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
        await answer(send, 200, [JSON], EMPTY_DB)
        return
    items = [item_of(row) for row in rows]
    await answer(send, 200, [JSON], dumps({"items": items, "count": len(items)}))


def item_fields(body):
    """name, category, price and quantity of a POST or PUT body, or None
    when it is not a JSON object with integer price and quantity."""
    try:
        fields = json.loads(body)
        return (str(fields.get("name") or ""), str(fields.get("category") or ""),
                int(fields.get("price", 0)), int(fields.get("quantity", 0)), fields)
    except (ValueError, TypeError, AttributeError):
        return None


async def serve_crud(scope, receive, send, method, tail):
    """/crud/items (GET: a page of a category; POST: upsert) and
    /crud/items/{id} (GET: cache-aside, X-Cache says which; PUT: update,
    dropping the cached copy)."""
    try:
        if tail == "":
            if method == "GET":
                query = query_ints(scope, {"page": 1, "limit": 10})
                category = dict(parse_qsl(scope["query_string"].decode("latin-1"))).get("category") or "electronics"
                page, limit = max(query["page"], 1), min(max(query["limit"], 1), 50)
                rows = await DATABASE.fetch(CRUD_LIST_SQL, category, limit, (page - 1) * limit)
                items = [item_of(row) for row in rows]
                await answer(send, 200, [JSON], dumps({"items": items, "total": len(items), "page": page, "limit": limit}))
                return
            if method == "POST":
                body = await read_body(receive)
                if body is None:
                    return
                fields = item_fields(body)
                if fields is None or not isinstance(fields[4].get("id"), int):
                    await answer(send, 400, [TEXT], b"want a JSON object with an integer id, price and quantity")
                    return
                name, category, price, quantity, raw = fields
                await DATABASE.execute(CRUD_UPSERT_SQL, raw["id"], name or "New Product", category or "test", price, quantity)
                CACHE.drop(raw["id"])
                await answer(send, 201, [JSON], dumps({"id": raw["id"], "name": name or "New Product",
                                                        "category": category or "test", "price": price, "quantity": quantity}))
                return
        elif tail.isdigit():
            item_id = int(tail)
            if method == "GET":
                cached = CACHE.get(item_id)
                if cached is not None:
                    await answer(send, 200, [JSON, CACHE_HIT], cached)
                    return
                rows = await DATABASE.fetch(CRUD_ONE_SQL, item_id)
                if not rows:
                    await answer(send, 404, [TEXT, CACHE_MISS], b"not found")
                    return
                body = dumps(item_of(rows[0]))
                CACHE.put(item_id, body)
                await answer(send, 200, [JSON, CACHE_MISS], body)
                return
            if method == "PUT":
                body = await read_body(receive)
                if body is None:
                    return
                fields = item_fields(body)
                if fields is None:
                    await answer(send, 400, [TEXT], b"want a JSON object with integer price and quantity")
                    return
                name, _, price, quantity, _ = fields
                status = await DATABASE.execute(CRUD_UPDATE_SQL, name or "Updated", price, quantity, item_id)
                CACHE.drop(item_id)
                if status == "UPDATE 0":
                    await answer(send, 404, [TEXT], b"not found")
                    return
                await answer(send, 200, [JSON], dumps({"id": item_id, "name": name or "Updated", "price": price, "quantity": quantity}))
                return
        else:
            await answer(send, 404, [TEXT], b"not found")
            return
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        await answer(send, 503, [TEXT], f"database: {error}".encode())
        return
    await answer(send, 405, [TEXT], b"method not allowed")


def json_items(count, multiplier):
    """The first count items of the dataset, each with its total: made
    and serialised for every request."""
    items = []
    for item in DATASET[:count]:
        item = dict(item)
        item["total"] = item["price"] * item["quantity"] * multiplier
        items.append(item)
    return json.dumps({"items": items, "count": len(items)}, separators=(",", ":")).encode()


async def serve_json(scope, send, tail):
    try:
        count = int(tail)
        multiplier = int(dict(parse_qsl(scope["query_string"].decode("latin-1"))).get("m", "1"))
    except ValueError:
        await answer(send, 400, [TEXT], b"count and m are integers")
        return
    body = json_items(max(count, 0), multiplier)
    if accepts_gzip(scope):
        await answer(send, 200, [JSON, GZIP], zlib.compress(body, 1, 31))
    else:
        await answer(send, 200, [JSON], body)


async def echo(receive, send):
    """The echo-ws profile: every message back as it came."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") is not None:
            await send({"type": "websocket.send", "text": message["text"]})
        else:
            await send({"type": "websocket.send", "bytes": message["bytes"]})


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await DATABASE.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope, receive, send):
    kind = scope["type"]
    if kind == "http":
        path, method = scope["path"], scope["method"]
        if path in ("/baseline11", "/baseline2"):
            total = query_sum(scope)
            if method == "POST":
                body = await read_body(receive)
                if body is None:
                    return
                try:
                    total += int(body)
                except ValueError:
                    await answer(send, 400, [TEXT], b"the body is not an integer")
                    return
            await answer(send, 200, [TEXT], str(total).encode())
        elif path == "/pipeline":
            await answer(send, 200, [TEXT], b"ok")
        elif path.startswith("/json/"):
            await serve_json(scope, send, path[len("/json/"):])
        elif path == "/async-db":
            await serve_async_db(scope, send)
        elif path == "/crud/items" or path.startswith("/crud/items/"):
            await serve_crud(scope, receive, send, method, path[len("/crud/items/"):])
        elif path == "/upload" and method == "POST":
            size = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                size += len(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            await answer(send, 200, [TEXT], str(size).encode())
        else:
            await answer(send, 404, [TEXT], b"not found")
    elif kind == "websocket":
        if scope["path"] == "/ws":
            await echo(receive, send)
        else:
            await send({"type": "websocket.close", "code": 1008})
    elif kind == "lifespan":
        await lifespan(receive, send)
