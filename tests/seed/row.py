"""The seed's row, checked on a server: --health-path, --doctor, the seed's
flag spellings, a bare MODULE, and a view calling its own server under
two workers. The same script runs against bin/m0serve (TestSeedRow in
tests/) and against the seed's wheel (make test-seed); where the two
differ on purpose, --impl says which to expect (README, "Coming from the
Mojo m0serve"). Standard library only; the responses are read as raw
bytes where their framing is the point.

    python3 row.py --server PATH [--impl ours|seed] [--only NAME ...]
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "apps")
STATIC = os.path.join(APPS, "static")
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; sandbox"


class Failure(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server process on a free port, stopped with SIGTERM."""

    def __init__(self, opts, *args, workers=0):
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        argv = [opts.server, "--host", "127.0.0.1", "--port", str(self.port), "--app-dir", APPS]
        if workers:
            argv += ["--workers", str(workers)]
        self.proc = subprocess.Popen(argv + list(args), stdout=self.log, stderr=subprocess.STDOUT, cwd=APPS)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure("exited with %d: %s" % (self.proc.returncode, self.logs()))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                # Every worker up: the last to bind may come later.
                time.sleep(0.5 if workers else 0.1)
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise Failure("not listening after 30 s: " + self.logs())

    def logs(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def raw(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self.log.close()


def read_response(sock):
    """One HTTP/1.1 response with a Content-Length, as bytes: (head, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise Failure("connection closed before a response head: %r" % data)
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head.decode("latin-1").lower(), rest[:length]


def closed_by_peer(sock, wait):
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


# The checks. Each takes the options and raises Failure.


def check_health(opts):
    with Server(opts, "--health-path", "/healthz", "seed_app") as s:
        status, headers, body = s.request("GET", "/healthz")
        expect(status == 200, "/healthz: status %d" % status)
        expect(headers.get("content-type", "").startswith("application/json"), "/healthz: content-type %r" % headers.get("content-type"))
        expect(json.loads(body).get("status") == "ok", "/healthz: %r" % body)
        status, _, body = s.request("GET", "/count")
        expect(body == b"1", "the app saw %s calls, want 1 (its own /count): /healthz entered it" % body)


def check_static(opts):
    with Server(opts, "--static", "/s=" + STATIC, "--static-header", "X-Seed: yes",
                "--static-cache-control", "public, max-age=60", "seed_app") as s:
        status, headers, body = s.request("GET", "/s/a.svg")
        expect(status == 200 and body.startswith(b"<svg"), "/s/a.svg: %d %r" % (status, body))
        expect(headers.get("content-security-policy") == SVG_POLICY, "/s/a.svg: CSP %r" % headers.get("content-security-policy"))
        expect(headers.get("x-content-type-options") == "nosniff", "/s/a.svg: no nosniff")
        expect(headers.get("x-seed") == "yes", "/s/a.svg: no --static-header field")
        expect(headers.get("cache-control") == "public, max-age=60", "/s/a.svg: cache-control %r" % headers.get("cache-control"))
        status, headers, body = s.request("GET", "/s/a.txt")
        expect(status == 200 and body == b"hello\n", "/s/a.txt: %d %r" % (status, body))
        expect(headers.get("x-content-type-options") == "nosniff", "/s/a.txt: no nosniff")
        expect("content-security-policy" not in headers, "/s/a.txt: a CSP on text")
        status, headers, body = s.request("GET", "/s/missing.txt")
        if opts.impl == "ours":
            # A miss under a mount is the mount's 404, with its fields.
            expect(status == 404 and headers.get("x-seed") == "yes", "/s/missing.txt: %d %r" % (status, headers))
        else:
            # The seed falls through to the app.
            expect(status == 200 and body == b"app /s/missing.txt", "/s/missing.txt: %d %r" % (status, body))


def check_max_body(opts):
    with Server(opts, "--max-body", "16", "seed_app") as s:
        status, _, body = s.request("POST", "/echo", body=b"x" * 16)
        expect(status == 200 and body == b"16", "16 bytes: %d %r" % (status, body))
        status, _, _ = s.request("POST", "/echo", body=b"x" * 17)
        expect(status == 413, "17 bytes over --max-body 16: %d, want 413" % status)


def check_keepalive_requests(opts):
    with Server(opts, "--max-keepalive-requests", "2", "seed_app") as s:
        with s.raw() as sock:
            for i in (1, 2):
                sock.sendall(b"GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
                head, _ = read_response(sock)
                expect(head.startswith("http/1.1 200"), "request %d: %s" % (i, head))
                says_close = "connection: close" in head
                expect(says_close == (i == 2), "request %d: connection close %s, want %s" % (i, says_close, i == 2))
            expect(closed_by_peer(sock, 5), "still open after the last of --max-keepalive-requests 2")


def check_idle_timeout(opts):
    with Server(opts, "--idle-timeout", "1", "seed_app") as s:
        with s.raw() as sock:
            sock.sendall(b"GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
            read_response(sock)
            expect(closed_by_peer(sock, 10), "an idle connection outlived --idle-timeout 1 by 9 s")


def check_metrics(opts):
    with Server(opts, "--metrics", "seed_app") as s:
        s.request("GET", "/pid")
        status, headers, body = s.request("GET", "/__metrics")
        expect(status == 200, "/__metrics: %d" % status)
        expect(b"# TYPE " in body, "/__metrics: not Prometheus text: %r" % body[:200])
        status, _, body = s.request("GET", "/count")
        expect(body == b"2", "the app saw %s calls, want 2: /__metrics entered it" % body)


def check_blocking_threads(opts):
    with Server(opts, "--blocking-threads", "2", "seed_app") as s:
        results = []

        def one():
            results.append(s.request("GET", "/barrier")[0])

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        expect(results == [200, 200], "two requests under --blocking-threads 2 did not meet in the app: %r" % results)


def check_protocol(opts):
    with Server(opts, "--protocol", "asgi", "seed_asgi:app") as s:
        status, _, body = s.request("GET", "/x")
        expect(status == 200 and body == b"asgi /x", "--protocol asgi: %d %r" % (status, body))


def check_bare_module(opts):
    with Server(opts, "seedpkg") as s:
        status, _, body = s.request("GET", "/")
        expect(status == 200 and body == b"seedpkg.wsgi", "bare seedpkg: %d %r" % (status, body))


def doctor(opts, *args):
    proc = subprocess.run([opts.server, "--doctor", "--app-dir", APPS] + list(args), capture_output=True, cwd=APPS, timeout=60)
    report = None
    lines = proc.stdout.decode().strip().splitlines()
    if lines:
        try:
            report = json.loads(lines[-1])
        except ValueError:
            pass
    return proc.returncode, report, proc.stdout.decode() + proc.stderr.decode()


def check_doctor(opts):
    # The port is taken: a doctor that bound it would fail.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        code, report, out = doctor(opts, "--host", "127.0.0.1", "--port", port, "seed_app")
    expect(code == 0 and report and report["ok"] and report["exit"] == 0, "--doctor seed_app: %d %s" % (code, out))
    python = report["python"]
    for key in ("version", "free_threaded_build", "gil_enabled", "executable", "prefix"):
        expect(key in python, "--doctor: python.%s missing: %s" % (key, python))
    expect(report["application"].get("protocol") == "wsgi", "--doctor: protocol %r" % report["application"])
    expect("topology" in report and report["checks"], "--doctor: no topology or checks")
    code, report, out = doctor(opts, "seed_asgi:app")
    expect(code == 0 and report["application"].get("protocol") == "asgi", "--doctor seed_asgi:app: %d %s" % (code, out))
    code, report, out = doctor(opts, "--mount", "/=mount_app:site", "--mount", "/api=mount_app:api")
    mounts = report and report["application"].get("mounts")
    expect(code == 0 and mounts and sorted((m["prefix"], m["protocol"]) for m in mounts) == [("/", "wsgi"), ("/api", "wsgi")],
           "--doctor --mount: %d %s" % (code, out))
    for args, want in ((["--port", "70000", "seed_app"], 78), (["nosuchmodule"], 1), (["--workers", "x", "seed_app"], 2)):
        code, report, out = doctor(opts, *args)
        expect(code == want, "--doctor %s: exit %d, want %d: %s" % (" ".join(args), code, want, out))
        if want != 2:
            failed = [c for c in report["checks"] if not c["ok"]]
            expect(report["exit"] == want and failed and failed[0].get("fix"), "--doctor %s: %s" % (" ".join(args), report))


def check_self_call(opts):
    with Server(opts, "--blocking-threads", "1", "seed_app", workers=2) as s:
        # Both workers up first: with one, the view has nobody to call.
        pids, deadline = set(), time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            pids.add(s.request("GET", "/pid")[2])
        expect(len(pids) == 2, "two workers never both answered: %r" % pids)
        for i in range(20):
            status, _, body = s.request("GET", "/outer")
            expect(status == 200 and b"failed" not in body, "try %d: a view calling its own server: %d %r" % (i, status, body))
            outer, _, inner = body.partition(b" ")
            expect(outer != inner, "try %d: served by the worker that was waiting on it (%r)" % (i, body))


def check_mount(opts):
    with Server(opts, "--mount", "/=mount_app:site", "--mount", "/api=mount_app:api", "--mount", "/api/v2=mount_app:v2") as s:
        for path, want in (("/", b"site||/"), ("/x", b"site||/x"), ("/api/x", b"api|/api|/x"),
                           ("/apix", b"site||/apix"), ("/api/v2/y", b"v2|/api/v2|/y")):
            status, _, body = s.request("GET", path)
            expect(status == 200 and body == want, "--mount, GET %s: %d %r, want %r" % (path, status, body, want))


CHECKS = [
    ("health-path", check_health),
    ("static", check_static),
    ("max-body", check_max_body),
    ("max-keepalive-requests", check_keepalive_requests),
    ("idle-timeout", check_idle_timeout),
    ("metrics", check_metrics),
    ("blocking-threads", check_blocking_threads),
    ("protocol", check_protocol),
    ("bare-module", check_bare_module),
    ("mount", check_mount),
    ("doctor", check_doctor),
    ("self-call", check_self_call),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True, help="the m0serve to run")
    parser.add_argument("--impl", choices=("ours", "seed"), default="ours")
    parser.add_argument("--only", action="append", help="run only these checks")
    opts = parser.parse_args()
    failed = 0
    for name, check in CHECKS:
        if opts.only and name not in opts.only:
            continue
        try:
            check(opts)
            print("ok    %s" % name, flush=True)
        except Failure as err:
            failed += 1
            print("FAIL  %s: %s" % (name, err), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
