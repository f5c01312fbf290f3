"""The WSGI and ASGI apps of tests/http2_hostile_test.go: /fast answers at
once without reading the body; /fields answers with FIELDS, and
/bad-value and /bad-name with a field that must be refused (the app's
error: a 500); /trailers (WSGI) answers the request's trailers before and
after reading the body; anything else answers, once the body is read, the request
as the app saw it: method, path, query and every header."""
import json

# The fields /fields answers with: a name in upper case, a tab inside a
# value, a hop-by-hop field, and the same name twice.
FIELDS = [("X-Upper-Case", "v"), ("x-tab", "a\tb"), ("Keep-Alive", "timeout=5"),
          ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]
BAD = {"/bad-value": [("X-A", "a\r\nx-injected: yes")], "/bad-name": [(":status", "200")],
       "/bad-name-crlf": [("X-A\r\nx-injected", "yes")]}

from asgi_lifespan import lifespan


def application(environ, start_response):
    if environ["PATH_INFO"] == "/fast":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "4")])
        return [b"fast"]
    if environ["PATH_INFO"] == "/fields":
        start_response("200 OK", [("Content-Type", "text/plain")] + FIELDS)
        return [b"fields"]
    if environ["PATH_INFO"] == "/trailers":
        # m0serve.trailers: present for an HTTP/2 body, filled once
        # wsgi.input is read to its end.
        before = list(environ.get("m0serve.trailers", [("absent", "")]))
        body = environ["wsgi.input"].read()
        out = {"before": before, "after": environ.get("m0serve.trailers", [("absent", "")]), "body": body.decode()}
        data = json.dumps(out).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]
    if environ["PATH_INFO"] in BAD:
        start_response("200 OK", BAD[environ["PATH_INFO"]])
        return [b"bad"]
    length = len(environ["wsgi.input"].read())
    headers = [[k[5:].lower().replace("_", "-"), v] for k, v in environ.items() if k.startswith("HTTP_")]
    for k in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if k in environ:
            headers.append([k.lower().replace("_", "-"), environ[k]])
    out = {"method": environ["REQUEST_METHOD"], "path": environ["PATH_INFO"], "query": environ["QUERY_STRING"],
           "headers": headers, "length": length}
    data = json.dumps(out).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["path"] == "/fast":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"fast"})
        return
    if scope["path"] in ("/fields", *BAD):
        fields = [("Content-Type", "text/plain")] + FIELDS if scope["path"] == "/fields" else BAD[scope["path"]]
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in fields]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": scope["path"][1:].encode()})
        return
    length = 0
    while True:
        event = await receive()
        length += len(event.get("body", b""))
        if not event.get("more_body"):
            break
    out = {"method": scope["method"], "path": scope["path"], "query": scope["query_string"].decode("latin-1"),
           "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]], "length": length}
    data = json.dumps(out).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
