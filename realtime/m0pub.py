"""Publish server-sent events to the streams m0serve --realtime holds.

    from m0serve import m0pub
    m0pub.publish("news", "hello", event="greeting")

A view holds a stream by answering with the headers ``M0-Hold: stream``
and ``M0-Channel: NAME``; ``publish`` then reaches every client held on
NAME, on every worker, and returns how many workers it reached (0 under a
server without the bus, gunicorn's for one: the same code runs anywhere).
The wire is the Mojo m0serve's, so an app and its clients work on both.

How it travels: the server makes one datagram socket per worker before
the workers start, and every process holds every write end (their numbers
in ``M0_BUS_WRITE_FDS``). A publish is one ``send`` per worker of

    bytes 0..7   the event id, int64 little-endian (-1: unnumbered)
    bytes 8..9   the channel's length, uint16 little-endian
    then         the channel, UTF-8, then the SSE frame

and each worker's event loop writes the frame to its held clients. The id
comes from one counter all processes share, an int64 on a page the server
maps in every process (``M0_SHARED_ID_FD``): ids start at 1 and increase
across workers, so a client reconnecting with ``Last-Event-ID`` is sent
what it missed (the server journals the last ``--replay-frames``).

A child process the app starts publishes when handed the descriptors:
``subprocess.Popen([...], pass_fds=m0pub.child_fds())``. The server's
descriptors are close-on-exec otherwise, and a number inherited without
its descriptor is recognised (by device and inode, ``M0_BUS_WRITE_IDS``)
and not written to. A child numbers its frames from the page where it can
add to it atomically (libatomic); otherwise they go unnumbered, which
delivers them all the same.
"""

import ctypes
import json
import mmap
import os
import stat
import struct

__all__ = [
    "publish", "publish_with_id", "publish_frame", "sse_event", "next_event_id",
    "bus_write_fds", "child_fds", "notify_sql", "NO_EVENT_ID", "MAX_FRAME",
]

MAX_FRAME = 65536
"""The largest frame the bus carries; a larger one is not sent (0 returned)."""

MAX_CHANNEL = 65535

NO_EVENT_ID = -1

PG_NOTIFY_CHANNEL = "m0"
"""The Postgres channel ``--pg-listen`` listens on; the destination is in the payload."""

PG_NOTIFY_MAX_BYTES = 7999

BUS_FDS_ENV = "M0_BUS_WRITE_FDS"
BUS_IDS_ENV = "M0_BUS_WRITE_IDS"
ID_FD_ENV = "M0_SHARED_ID_FD"

PAGE_MAGIC = 0x6D30706167650001
PAGE_MAGIC_OFFSET = 16

# A channel starting with this byte is the Mojo m0serve's namespace for its
# own control frames; refused here and by the server.
_RESERVED = b"\x01"

# (pid, fds): the write ends found in that process.
_fds = None
# The numbering: a callable returning the next id, False for none, None
# before the first look.
_numbering = None
# The page's mapping in a child, kept for the process's life.
_page = None


def _ints(text):
    out = []
    for part in text.split(","):
        try:
            out.append(int(part))
        except ValueError:
            pass
    return out


def bus_write_fds():
    """The bus's write ends in this process: each number the server named
    that is the socket it says (same device and inode), so a child handed
    no descriptors finds none."""
    global _fds
    pid = os.getpid()
    if _fds is None or _fds[0] != pid:
        ids = os.environ.get(BUS_IDS_ENV, "").split(",")
        kept = []
        for i, fd in enumerate(_ints(os.environ.get(BUS_FDS_ENV, ""))):
            try:
                st = os.fstat(fd)
            except (OSError, ValueError, OverflowError):
                continue
            if not stat.S_ISSOCK(st.st_mode):
                continue
            if i < len(ids) and ids[i] != "%d:%d" % (st.st_dev, st.st_ino):
                continue
            kept.append(fd)
        _fds = (pid, kept)
    return list(_fds[1])


def _page_fd():
    try:
        fd = int(os.environ.get(ID_FD_ENV, ""))
        os.fstat(fd)
    except (ValueError, OSError, OverflowError):
        return None
    return fd


def child_fds():
    """The descriptors a child process needs to publish: pass them as
    ``pass_fds``. The bus's write ends and the counter's page."""
    fds = bus_write_fds()
    page = _page_fd()
    if page is not None and fds:
        fds.append(page)
    return fds


def _child_numbering():
    """Numbering from the page by descriptor, added to with libatomic: a
    process the server did not start (a child handed child_fds())."""
    global _page
    fd = _page_fd()
    if fd is None:
        return False
    try:
        if os.fstat(fd).st_size < PAGE_MAGIC_OFFSET + 8:
            return False
        page = mmap.mmap(fd, 4096)
    except (OSError, ValueError):
        return False
    if struct.unpack_from("<q", page, PAGE_MAGIC_OFFSET)[0] != PAGE_MAGIC:
        page.close()
        return False
    try:
        lib = ctypes.CDLL("libatomic.so.1")
        add = lib.__atomic_fetch_add_8
    except (OSError, AttributeError):
        page.close()
        return False
    add.restype = ctypes.c_int64
    add.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int]
    _page = page
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return lambda: add(addr, 1, 5) + 1  # 5: __ATOMIC_SEQ_CST


def next_event_id():
    """The next id from the counter every worker shares (the first is 1),
    or NO_EVENT_ID where there is none."""
    global _numbering
    if _numbering is None:
        # The server sets _server_next_id on this module in its own
        # processes: an atomic add in C on the page it maps.
        server = globals().get("_server_next_id")
        _numbering = server if server is not None else _child_numbering()
    if not _numbering:
        return NO_EVENT_ID
    return int(_numbering())


def sse_event(data, event=None, event_id=NO_EVENT_ID):
    """One SSE event as bytes: ``id``, ``event``, then a ``data`` line per
    line of data, and the blank line that ends it."""
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode("utf-8")
    lines = []
    if event_id != NO_EVENT_ID:
        lines.append("id: %d" % event_id)
    if event:
        lines.append("event: " + event)
    lines += ["data: " + line for line in (data.splitlines() or [""])]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def publish_frame(channel, frame, event_id=NO_EVENT_ID):
    """Send a frame that is already SSE (bytes or str) to ``channel`` on
    every worker. Returns the workers reached: 0 for no bus, a frame over
    MAX_FRAME or a refused channel (a full worker is skipped)."""
    if isinstance(frame, str):
        frame = frame.encode("utf-8")
    if len(frame) > MAX_FRAME:
        return 0
    name = channel.encode("utf-8")
    if name[:1] == _RESERVED or len(name) > MAX_CHANNEL:
        return 0
    fds = bus_write_fds()
    if not fds:
        return 0
    datagram = struct.pack("<qH", event_id, len(name)) + name + frame
    reached = 0
    for fd in fds:
        try:
            os.write(fd, datagram)
            reached += 1
        except OSError:
            pass
    return reached


def publish_with_id(channel, data, event=None):
    """``publish``, returning (workers reached, the event's id)."""
    if not bus_write_fds():
        return 0, NO_EVENT_ID
    event_id = next_event_id()
    return publish_frame(channel, sse_event(data, event, event_id), event_id), event_id


def publish(channel, data, event=None):
    """Publish ``data`` (the payload, not a frame) as one event on
    ``channel``; returns how many workers it reached."""
    return publish_with_id(channel, data, event)[0]


def notify_sql(channel, data, event=None):
    """``(statement, parameters)`` that publish from outside the server
    through Postgres, for a server started with ``--pg-listen``::

        cursor.execute(*m0pub.notify_sql("news", "hello"))
    """
    payload = json.dumps({"channel": channel, "event": event or "", "data": data}, separators=(",", ":"))
    if len(payload.encode("utf-8")) > PG_NOTIFY_MAX_BYTES:
        raise ValueError("a NOTIFY payload is limited to %d bytes" % PG_NOTIFY_MAX_BYTES)
    return ("SELECT pg_notify(%s, %s)", [PG_NOTIFY_CHANNEL, payload])


class Broadcast:
    """What an ASGI app finds at ``scope["state"]["m0"]`` under --realtime
    (the Mojo m0serve's): ``publish(channel, frame)`` sends a frame that is
    already SSE to every worker and returns its id. Holding a stream is
    the same for ASGI as for WSGI: a response with ``M0-Hold: stream`` and
    ``M0-Channel``; ``subscribe`` (the seed's in-task iterator) is not
    provided."""

    @property
    def active(self):
        return bool(bus_write_fds())

    def publish(self, channel, payload):
        if isinstance(payload, str):
            payload = payload.encode("utf-8")
        name = channel.encode("utf-8") if isinstance(channel, str) else bytes(channel)
        if name[:1] == _RESERVED or len(name) > MAX_CHANNEL:
            return NO_EVENT_ID
        if len(payload) > MAX_FRAME:
            raise ValueError("m0 publish: a frame is limited to %d bytes" % MAX_FRAME)
        event_id = next_event_id() if bus_write_fds() else NO_EVENT_ID
        publish_frame(name.decode("utf-8"), payload, event_id)
        return event_id

    def subscribe(self, channel, max_queue=256):
        raise NotImplementedError(
            "m0serve holds streams for the app instead: answer with M0-Hold: stream and M0-Channel (README, Realtime)")
