"""HttpArena's endpoints as a plain WSGI app (no framework; psycopg for
the database profiles, requirements.txt), served by m0serve. /static/*
never reaches it: m0serve's own static mount serves /data/static
(launch.sh)."""
import json
import os
import struct
import threading
import time
import zlib
from urllib.parse import parse_qsl

import psycopg

DATASET_PATH = os.environ.get("DATASET_PATH", "/data/dataset.json")
try:
    with open(DATASET_PATH, encoding="utf-8") as f:
        DATASET = json.load(f)
except OSError:
    DATASET = []

OK, BAD, NOT_FOUND = "200 OK", "400 Bad Request", "404 Not Found"
TEXT = ("Content-Type", "text/plain")
JSON = ("Content-Type", "application/json")
GZIP = ("Content-Encoding", "gzip")
CACHE_HIT, CACHE_MISS = ("X-Cache", "HIT"), ("X-Cache", "MISS")
EMPTY_DB = b'{"items":[],"count":0}'
CREATED, UNAVAILABLE, NOT_ALLOWED = "201 Created", "503 Service Unavailable", "405 Method Not Allowed"

ASYNC_DB_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE price BETWEEN %s AND %s LIMIT %s"""
CRUD_ONE_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE id = %s"""
CRUD_LIST_SQL = """SELECT id, name, category, price, quantity, active, tags, rating_score, rating_count
FROM items WHERE category = %s ORDER BY id LIMIT %s OFFSET %s"""
CRUD_UPSERT_SQL = """INSERT INTO items (id, name, category, price, quantity, active, tags, rating_score, rating_count)
VALUES (%s, %s, %s, %s, %s, true, '[]', 0, 0)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, category = EXCLUDED.category,
price = EXCLUDED.price, quantity = EXCLUDED.quantity"""
CRUD_UPDATE_SQL = "UPDATE items SET name = %s, price = %s, quantity = %s WHERE id = %s"
UPLOAD_CHUNK = 256 << 10


def query_sum(environ):
    """The sum of the query's integer values (a=13&b=42: 55)."""
    total = 0
    for _, value in parse_qsl(environ.get("QUERY_STRING", "")):
        try:
            total += int(value)
        except ValueError:
            pass
    return total


def query_ints(environ, defaults):
    """The query's values for the names of defaults, as integers; a
    missing or malformed one is its default."""
    values = dict(defaults)
    for name, value in parse_qsl(environ.get("QUERY_STRING", "")):
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
        temporary = f"{self.folder}/.{key}.{os.getpid()}.{threading.get_ident()}"
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


class Database:
    """One psycopg connection per handler thread (--threads), made on
    first use and again after a failure, from DATABASE_URL; autocommit,
    and psycopg prepares a statement after its fifth use."""

    def __init__(self):
        self.url = os.environ.get("DATABASE_URL", "")
        self.local = threading.local()

    def connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None or conn.closed:
            if not self.url:
                raise psycopg.OperationalError("no DATABASE_URL")
            conn = self.local.conn = psycopg.connect(self.url, autocommit=True)
        return conn

    def run(self, sql, args):
        """The rows of sql (None for a statement without), and the rows
        it touched."""
        try:
            cursor = self.connection().execute(sql, args)
            return (cursor.fetchall() if cursor.description else None), cursor.rowcount
        except psycopg.OperationalError:
            conn, self.local.conn = getattr(self.local, "conn", None), None
            if conn is not None:
                conn.close()
            raise


DATABASE = Database()


def item_of(row):
    """A row of the items table (tags decoded by psycopg from JSONB)."""
    return {
        "id": row[0], "name": row[1], "category": row[2], "price": row[3], "quantity": row[4],
        "active": row[5], "tags": row[6], "rating": {"score": row[7], "count": row[8]},
    }


def dumps(value):
    return json.dumps(value, separators=(",", ":")).encode()


def serve_async_db(environ):
    """GET /async-db?min&max&limit: the items priced in [min, max], at most
    limit (1 to 50) of them; Postgres out of reach answers no items."""
    query = query_ints(environ, {"min": 10, "max": 50, "limit": 50})
    try:
        rows, _ = DATABASE.run(ASYNC_DB_SQL, (query["min"], query["max"], min(max(query["limit"], 1), 50)))
    except psycopg.Error:
        return OK, [JSON], EMPTY_DB
    items = [item_of(row) for row in rows]
    return OK, [JSON], dumps({"items": items, "count": len(items)})


def item_fields(environ):
    """The POST or PUT body as a dict with name, category, price and
    quantity (integers), or None when it is not such a JSON object."""
    try:
        fields = json.loads(environ["wsgi.input"].read())
        fields["price"], fields["quantity"] = int(fields.get("price", 0)), int(fields.get("quantity", 0))
        fields["name"], fields["category"] = str(fields.get("name") or ""), str(fields.get("category") or "")
        return fields
    except (ValueError, TypeError, AttributeError):
        return None


def serve_crud(environ, method, tail):
    """/crud/items (GET: a page of a category; POST: upsert) and
    /crud/items/{id} (GET: cache-aside, X-Cache says which; PUT: update,
    dropping the cached copy)."""
    try:
        if tail == "" and method == "GET":
            query = query_ints(environ, {"page": 1, "limit": 10})
            category = dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("category") or "electronics"
            page, limit = max(query["page"], 1), min(max(query["limit"], 1), 50)
            rows, _ = DATABASE.run(CRUD_LIST_SQL, (category, limit, (page - 1) * limit))
            items = [item_of(row) for row in rows]
            return OK, [JSON], dumps({"items": items, "total": len(items), "page": page, "limit": limit})
        if tail == "" and method == "POST":
            fields = item_fields(environ)
            if fields is None or not isinstance(fields.get("id"), int):
                return BAD, [TEXT], b"want a JSON object with an integer id, price and quantity"
            item = {"id": fields["id"], "name": fields["name"] or "New Product",
                    "category": fields["category"] or "test", "price": fields["price"], "quantity": fields["quantity"]}
            DATABASE.run(CRUD_UPSERT_SQL, tuple(item.values()))
            CACHE.drop(item["id"])
            return CREATED, [JSON], dumps(item)
        if not tail.isdigit():
            return NOT_FOUND, [TEXT], b"not found"
        item_id = int(tail)
        if method == "GET":
            cached = CACHE.get(item_id)
            if cached is not None:
                return OK, [JSON, CACHE_HIT], cached
            rows, _ = DATABASE.run(CRUD_ONE_SQL, (item_id,))
            if not rows:
                return NOT_FOUND, [TEXT, CACHE_MISS], b"not found"
            body = dumps(item_of(rows[0]))
            CACHE.put(item_id, body)
            return OK, [JSON, CACHE_MISS], body
        if method == "PUT":
            fields = item_fields(environ)
            if fields is None:
                return BAD, [TEXT], b"want a JSON object with integer price and quantity"
            name = fields["name"] or "Updated"
            _, touched = DATABASE.run(CRUD_UPDATE_SQL, (name, fields["price"], fields["quantity"], item_id))
            CACHE.drop(item_id)
            if touched == 0:
                return NOT_FOUND, [TEXT], b"not found"
            return OK, [JSON], dumps({"id": item_id, "name": name, "price": fields["price"], "quantity": fields["quantity"]})
    except psycopg.Error as error:
        return UNAVAILABLE, [TEXT], f"database: {error}".encode()
    return NOT_ALLOWED, [TEXT], b"method not allowed"


def json_items(count, multiplier):
    """The first count items of the dataset, each with its total: made
    and serialised for every request."""
    items = []
    for item in DATASET[:count]:
        item = dict(item)
        item["total"] = item["price"] * item["quantity"] * multiplier
        items.append(item)
    return json.dumps({"items": items, "count": len(items)}, separators=(",", ":")).encode()


def serve(environ):
    """The status, headers and body of one request."""
    path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
    if path in ("/baseline11", "/baseline2"):
        total = query_sum(environ)
        if method == "POST":
            try:
                total += int(environ["wsgi.input"].read())
            except ValueError:
                return BAD, [TEXT], b"the body is not an integer"
        return OK, [TEXT], str(total).encode()
    if path == "/pipeline":
        return OK, [TEXT], b"ok"
    if path.startswith("/json/"):
        try:
            count = int(path[len("/json/"):])
            multiplier = int(dict(parse_qsl(environ.get("QUERY_STRING", ""))).get("m", "1"))
        except ValueError:
            return BAD, [TEXT], b"count and m are integers"
        body = json_items(max(count, 0), multiplier)
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            return OK, [JSON, GZIP], zlib.compress(body, 1, 31)
        return OK, [JSON], body
    if path == "/async-db":
        return serve_async_db(environ)
    if path == "/crud/items" or path.startswith("/crud/items/"):
        return serve_crud(environ, method, path[len("/crud/items/"):])
    if path == "/upload" and method == "POST":
        size, body = 0, environ["wsgi.input"]
        while chunk := body.read(UPLOAD_CHUNK):
            size += len(chunk)
        return OK, [TEXT], str(size).encode()
    return NOT_FOUND, [TEXT], b"not found"


def app(environ, start_response):
    status, headers, body = serve(environ)
    start_response(status, headers)
    return [body]
