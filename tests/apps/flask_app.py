"""A Flask app exercising routes, JSON, forms, uploads, cookies, the
session, streaming and abort."""
import hashlib

from flask import Flask, Response, abort, jsonify, request, session, stream_with_context

from validated import validator

flask_app = Flask(__name__)
flask_app.secret_key = b"m0serve test key, not a secret"


@flask_app.route("/")
def index():
    return "Hello from Flask"


@flask_app.route("/user/<name>")
def user(name):
    return f"user {name}"


@flask_app.route("/json", methods=["POST"])
def echo_json():
    data = request.get_json()
    return jsonify(received=data, doubled=[x * 2 for x in data.get("numbers", [])])


@flask_app.route("/form", methods=["POST"])
def form():
    return jsonify(name=request.form["name"], tags=request.form.getlist("tag"))


@flask_app.route("/upload", methods=["POST"])
def upload():
    f = request.files["file"]
    data = f.read()
    return jsonify(filename=f.filename, size=len(data),
                   sha256=hashlib.sha256(data).hexdigest(), note=request.form.get("note"))


@flask_app.route("/cookie/set")
def set_cookie():
    resp = Response("set")
    resp.set_cookie("flavour", "oatmeal")
    resp.set_cookie("colour", "blue")
    return resp


@flask_app.route("/cookie/get")
def get_cookie():
    return jsonify(flavour=request.cookies.get("flavour"), colour=request.cookies.get("colour"))


@flask_app.route("/session")
def count():
    session["n"] = session.get("n", 0) + 1
    return jsonify(n=session["n"])


@flask_app.route("/stream")
def stream():
    def lines():
        for i in range(100):
            yield f"line {i} of {request.args.get('who', 'nobody')}\n"
    return Response(stream_with_context(lines()), mimetype="text/plain")


@flask_app.route("/missing")
def missing():
    abort(404)


app = validator(flask_app.wsgi_app)
