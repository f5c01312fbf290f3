"""HTTP/2 checks with httpx and h2 (tests/.venv, as pinned in
tests/requirements.txt), run by tests/http2_more_test.go against m0serve
serving tests/apps/h2_app.py: one line per check, "name ok" or
"name FAIL detail".

Usage: httpx_h2_client.py URL PROTOCOL [CAFILE]. With CAFILE the URL is
https and h2 comes by ALPN; without, it is http and the client speaks
HTTP/2 by prior knowledge (http1=False). PROTOCOL is what the app should
report seeing ("HTTP/2" from WSGI's SERVER_PROTOCOL, "2" from ASGI's
http_version)."""

import asyncio
import hashlib
import ssl
import sys

import httpx

UPLOAD = bytes((i * 7 + (i >> 10)) & 0xFF for i in range(3 << 20))
SIZES = [0, 1, 65536, 200000, 1000000]


def client_args(cafile):
    if cafile:
        return {"http2": True, "verify": ssl.create_default_context(cafile=cafile)}
    return {"http1": False, "http2": True}


def reply_problem(resp, protocol, body=b"", method="GET"):
    """What is wrong with the app's account of a request, or ""."""
    if resp.status_code != 200 or resp.http_version != "HTTP/2":
        return f"{resp.status_code} over {resp.http_version}"
    r = resp.json()
    want = {"protocol": protocol, "method": method, "length": len(body),
            "sha256": hashlib.sha256(body).hexdigest()}
    got = {k: r.get(k) for k in want}
    return "" if got == want else f"the app saw {got}, want {want}"


async def gathered(base, protocol, args, check):
    """Requests at once on one AsyncClient: downloads of several sizes
    beside small uploads."""
    async with httpx.AsyncClient(timeout=120, **args) as client:
        async def download(n):
            resp = await client.get(f"{base}/size/{n}")
            piece = b"0123456789abcdef" * 4096
            want = (piece * (n // len(piece) + 1))[:n]
            if resp.status_code != 200 or resp.http_version != "HTTP/2" or resp.content != want:
                return f"/size/{n}: {resp.status_code} over {resp.http_version}, {len(resp.content)} bytes"
            return ""

        async def upload(i):
            body = f"small {i}".encode() * (i + 1)
            resp = await client.post(f"{base}/small/{i}", content=body)
            problem = reply_problem(resp, protocol, body, "POST")
            return f"/small/{i}: {problem}" if problem else ""

        tasks = [download(n) for n in SIZES] + [upload(i) for i in range(15)]
        problems = [p for p in await asyncio.gather(*tasks) if p]
    check("async-gather", not problems, "; ".join(problems))


def main(base, protocol, cafile):
    results = []

    def check(name, ok, detail=""):
        results.append(f"{name} {'ok' if ok else 'FAIL ' + detail}")

    args = client_args(cafile)
    with httpx.Client(timeout=120, **args) as client:
        resp = client.get(f"{base}/hello")
        problem = reply_problem(resp, protocol)
        check("get", not problem, problem)
        resp = client.post(f"{base}/upload", content=UPLOAD)
        problem = reply_problem(resp, protocol, UPLOAD, "POST")
        check("post-3mib", not problem, problem)
        n = 5000000
        with client.stream("GET", f"{base}/size/{n}") as resp:
            got = sum(len(chunk) for chunk in resp.iter_bytes())
            check("stream-download", resp.http_version == "HTTP/2" and got == n,
                  f"{got} bytes over {resp.http_version}")
    asyncio.run(gathered(base, protocol, args, check))
    print("\n".join(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
