"""Grants for the streams a ``--mount PREFIX=hold`` opens without the app.

A view decides who may follow which channel; the grant carries that
decision in the stream's URL, where the server verifies it alone:

    v1.<kid>.<exp>.<channel>.<sb>.<sig>

``kid`` is the first 8 hex digits of SHA-256(key), ``exp`` the unix second
after which the server refuses it, ``channel`` [A-Za-z0-9_:-]{1,64}, ``sb``
the session binding (base64url of the first 16 bytes of SHA-256 of the
session cookie's value, unpadded; ``-`` for none) and ``sig``
base64url(HMAC-SHA256(key, everything before it)), unpadded: the Mojo
m0serve's format, so a grant verifies on either server.

The key is ``M0_GRANT_KEY`` (``openssl rand -base64 32``), which the server
reads too; during a rotation it also accepts ``M0_GRANT_KEY_PREV``. A
bound grant is checked against the cookie ``M0_GRANT_COOKIE`` names
(``sessionid`` by default): a copied URL is of no use without the cookie.
A grant is good until it expires (``ttl``, an hour by default); a client
refused with 401 asks the view for a fresh one.

Standard library only: a script or a management command issues grants too.
"""

import base64
import hashlib
import hmac
import os
import re
import time
from urllib.parse import quote

VERSION = "v1"
KEY_ENV = "M0_GRANT_KEY"
PREV_KEY_ENV = "M0_GRANT_KEY_PREV"
DEFAULT_TTL = 3600
CHANNEL_RE = re.compile(r"^[A-Za-z0-9_:-]{1,64}$")
KID_CHARS = 8
UNBOUND = "-"

__all__ = ["GrantError", "issue", "stream_url", "key_id", "session_binding", "load_key"]


class GrantError(ValueError):
    """No key to sign with, or a channel a grant cannot name."""


def _unpadded(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def key_id(key):
    """The kid of ``key`` (bytes): the first 8 hex digits of its SHA-256."""
    return hashlib.sha256(key).hexdigest()[:KID_CHARS]


def session_binding(session):
    """The ``sb`` field for a session cookie's value (str or bytes), ``-`` for None."""
    if session is None:
        return UNBOUND
    if isinstance(session, str):
        session = session.encode("utf-8")
    return _unpadded(hashlib.sha256(session).digest()[:16])


def load_key(env=None, name=KEY_ENV):
    """The key in ``name`` of ``env`` (``os.environ``), as bytes; GrantError if unset."""
    value = (os.environ if env is None else env).get(name, "")
    if not value:
        raise GrantError("%s is not set: the server verifies grants with the key they are signed with" % name)
    return value.encode("utf-8")


def issue(channel, *, session=None, ttl=DEFAULT_TTL, key=None, now=None):
    """A grant for ``channel``, good for ``ttl`` seconds, bound to ``session``
    (the session cookie's value) unless it is None. ``key`` is bytes,
    ``M0_GRANT_KEY`` by default; a negative ``ttl`` makes an expired one."""
    if not isinstance(channel, str) or not CHANNEL_RE.match(channel):
        raise GrantError("channel %r is not [A-Za-z0-9_:-]{1,64}: a grant cannot name it" % (channel,))
    if key is None:
        key = load_key()
    expires = int((time.time() if now is None else now) + ttl)
    signed = "%s.%s.%d.%s.%s" % (VERSION, key_id(key), expires, channel, session_binding(session))
    return signed + "." + _unpadded(hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest())


def stream_url(prefix, channel, **kwargs):
    """``PREFIX/stream?g=GRANT``, for an ``EventSource``: the hold mount's stream."""
    return prefix.rstrip("/") + "/stream?g=" + quote(issue(channel, **kwargs), safe="-_.:")
