"""/stream?mb=N answers N MiB as a generator of numbered 64 KiB blocks
(block i is the 8-digit i repeated): a streamed body of unknown length,
checkable block by block, for the bound on what the I/O thread gathers;
/ok a quick answer."""

BLOCK = 64 << 10


def app(environ, start_response):
    if environ["PATH_INFO"] == "/ok":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    mb = int(environ.get("QUERY_STRING", "mb=1").partition("=")[2])
    start_response("200 OK", [("Content-Type", "application/octet-stream")])

    def blocks():
        for i in range(mb * ((1 << 20) // BLOCK)):
            yield (b"%08d" % i) * (BLOCK // 8)
    return blocks()
