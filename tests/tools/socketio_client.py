"""python-socketio's client (tests/.venv: requests and websocket-client
underneath) against tests/apps/socketio_app.py served by m0serve, run by
tests/socketio_test.go: one line per check, "name ok" or "name FAIL
detail". Two clients connect straight over WebSocket, a third starts on
HTTP long-polling and upgrades, as a browser's does."""

import sys
import threading
import time

import socketio

results = []


def check(name, ok, detail=""):
    results.append(f"{name} {'ok' if ok else 'FAIL ' + str(detail)}")


def client(name, url, transports):
    sio = socketio.Client(reconnection=False)
    sio.news = []
    sio.got_news = threading.Event()

    @sio.on("news")
    def news(data):
        sio.news.append(data)
        sio.got_news.set()

    sio.connect(url, transports=transports, auth={"name": name}, wait_timeout=20)
    return sio


def wait_for_websocket(sio):
    # The upgrade from polling completes after connect returns.
    deadline = time.monotonic() + 20
    while sio.transport() != "websocket" and time.monotonic() < deadline:
        time.sleep(0.05)
    return sio.transport()


def main(url):
    ada = client("ada", url, ["websocket"])
    check("websocket-transport", ada.transport() == "websocket", ada.transport())
    answer = ada.call("echo", {"n": 1, "text": "héllo"}, timeout=20)
    check("ack", answer == {"echo": {"n": 1, "text": "héllo"}, "from": "ada"}, answer)
    big = "x" * 200_000
    answer = ada.call("echo", big, timeout=20)
    check("ack-200KB", answer == {"echo": big, "from": "ada"}, len(str(answer)))

    bob = client("bob", url, ["websocket"])
    eve = client("eve", url, ["polling", "websocket"])
    transport = wait_for_websocket(eve)
    check("polling-upgrade", transport == "websocket", transport)
    for sio in (ada, bob, eve):
        joined = sio.call("join", "lobby", timeout=20)
        if joined != "joined lobby":
            check("join", False, joined)
    check("join", True)

    ada.emit("say", {"room": "lobby", "text": "hi all"})
    ok = bob.got_news.wait(20) and eve.got_news.wait(20)
    check("broadcast", ok and bob.news == eve.news == [{"text": "hi all", "from": "ada"}] and not ada.news,
          (bob.news, eve.news, ada.news))

    for sio in (ada, bob, eve):
        sio.disconnect()
    check("disconnect", not any(sio.connected for sio in (ada, bob, eve)))
    print("\n".join(results))


main(sys.argv[1])
