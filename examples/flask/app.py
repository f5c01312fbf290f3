"""A small Flask app served by m0serve (WSGI).

    m0serve --app-dir examples/flask app:app

Routes:
  GET  /                  a greeting (text)
  GET  /items/<id>        an item as JSON; 404 as JSON for an unknown one
  POST /items             JSON in ({"name": ...}), 201 and the new item out
  POST /upload            a multipart form's file "file": its name and size
  GET  /whoami            the client and scheme the app sees (behind a
                          proxy: start m0serve with --proxy-headers)
"""
from flask import Flask, abort, jsonify, request

app = Flask(__name__)

# An in-memory store keeps the example self-contained; a real app has a
# database. With --threads N several requests run at once: the dict's
# single operations are atomic under the GIL, which is all this needs.
ITEMS = {1: {"id": 1, "name": "teapot"}}


@app.get("/")
def index():
    return "Hello from Flask on m0serve!\n", 200, {"Content-Type": "text/plain; charset=utf-8"}


@app.get("/items/<int:item_id>")
def get_item(item_id):
    item = ITEMS.get(item_id)
    if item is None:
        abort(404)
    return jsonify(item)


@app.post("/items")
def create_item():
    data = request.get_json(silent=True)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return jsonify(error='want a JSON object with a "name" string'), 400
    item = {"id": max(ITEMS, default=0) + 1, "name": data["name"]}
    ITEMS[item["id"]] = item
    return jsonify(item), 201


@app.post("/upload")
def upload():
    file = request.files.get("file")
    if file is None:
        return jsonify(error='want a multipart form with a "file" field'), 400
    return jsonify(filename=file.filename, size=len(file.read()))


@app.get("/whoami")
def whoami():
    return jsonify(client=request.remote_addr, scheme=request.scheme, host=request.host)


@app.errorhandler(404)
def not_found(error):
    return jsonify(error="not found"), 404
