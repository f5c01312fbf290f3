"""The realtime tests' app: a stream view that holds its connection
(M0-Hold), views that publish with m0pub, from the view and from a child
process handed m0pub.child_fds(), and one that issues a hold mount's
grants with m0serve.grant."""

import os
import subprocess
from urllib.parse import parse_qs

from m0serve import m0pub


def app(environ, start_response):
    path = environ["PATH_INFO"]
    query = parse_qs(environ.get("QUERY_STRING", ""))
    if path.startswith("/events/"):
        body = b": connected\n\n"
        start_response("200 OK", [
            ("Content-Type", "text/event-stream"),
            ("Cache-Control", "no-cache"),
            ("X-Worker", str(os.getpid())),
            ("M0-Hold", "stream"),
            ("M0-Channel", path[len("/events/"):]),
            ("Content-Length", str(len(body))),
        ])
        return [body]
    if path.startswith("/socket/"):
        # A WebSocket handshake approved and held: the server answers 101.
        start_response("200 OK", [("M0-Hold", "websocket"), ("M0-Channel", path[len("/socket/"):])])
        return [b"approved"]
    if path == "/ws/message":
        # A held WebSocket's message: published back on its channel.
        message = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))
        channel = environ["HTTP_M0_CHANNEL"]
        int(environ["HTTP_M0_SLOT"])
        m0pub.publish(channel, "%s %s %s" % (channel, environ["HTTP_M0_OPCODE"], message.decode()))
        start_response("204 No Content", [])
        return []
    if path.startswith("/publish/"):
        channel = path[len("/publish/"):]
        data = query.get("data", [""])[0]
        event = query.get("event", [None])[0]
        if "frame" in query:
            reached = m0pub.publish_frame(channel, query["frame"][0].encode())
        else:
            reached = m0pub.publish(channel, data, event=event)
        body = ("%d\n" % reached).encode()
    elif path.startswith("/grant/"):
        # m0serve.grant, as a view issues a hold mount's grants.
        from m0serve import grant
        kwargs = {"ttl": int(query.get("ttl", ["3600"])[0])}
        if "key" in query:
            kwargs["key"] = query["key"][0].encode()
        if "session" in query:
            kwargs["session"] = query["session"][0]
        body = (grant.issue(path[len("/grant/"):], **kwargs) + "\n").encode()
    elif path.startswith("/child/"):
        code = "import sys; from m0serve import m0pub; print(m0pub.publish(sys.argv[1], 'from a child'))"
        env = dict(os.environ, PYTHONPATH=os.environ["REALTIME_CHILD_PATH"])
        done = subprocess.run([os.environ["REALTIME_CHILD_PYTHON"], "-c", code, path[len("/child/"):]],
                              pass_fds=m0pub.child_fds(), capture_output=True, env=env)
        body = done.stdout + done.stderr
    else:
        body = b"ok\n"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
