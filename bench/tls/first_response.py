"""The first response's latency on new TLS connections, from Python's ssl
with Nagle's algorithm on (no TCP_NODELAY, as a bare ssl socket has it):
p50 of the first and of the second GET on each of N connections.

    python3 bench/tls/first_response.py HOST:PORT CA.pem [N [TLSv1_2|TLSv1_3]]
"""
import socket
import ssl
import statistics
import sys
import time


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    if len(sys.argv) > 4:
        ctx.maximum_version = getattr(ssl.TLSVersion, sys.argv[4])
    first, second = [], []
    for _ in range(n):
        sock = socket.create_connection((host, int(port)), timeout=10)
        tls = ctx.wrap_socket(sock, server_hostname="localhost")
        for times in (first, second):
            start = time.monotonic()
            tls.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            tls.recv(65536)
            times.append((time.monotonic() - start) * 1000)
        tls.close()
    print("first p50 %.2f ms, second p50 %.2f ms (%d connections)" % (
        statistics.median(first), statistics.median(second), n))


if __name__ == "__main__":
    main()
