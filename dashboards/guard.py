"""The dashboard's door: only requests whose Host and Origin name the address it serves.

DNS rebinding: a page on ``evil.example`` makes its name resolve to 127.0.0.1 and then talks
to the dashboard as if it were its own site: the browser sends ``Host: evil.example:8501``
and ``Origin: http://evil.example:8501``, the same origin as far as the browser is
concerned, so CORS never applies and the cost data would flow over the websocket. Checking
the Host header against the names the dashboard is really reached by stops it; checking
Origin stops a page on another site from opening the websocket to 127.0.0.1 directly.

`HostGuard` is a pure ASGI middleware wrapped around the whole Streamlit app (HTTP and
websocket alike, every route). A request is served when its Host, and its Origin when it
sends one, name:

- ``localhost`` or a loopback address (127.0.0.0/8, ::1);
- the bound address itself (``--host 10.0.0.5`` or ``--host dash.internal``);
- when bound to every interface (``0.0.0.0``, ``::``), any IP address (an IP literal cannot
  be rebound to another site) and the machine's host name;
- a name given with ``gpu-finops dashboard --allow-host NAME`` (a reverse proxy's name);
  ``--allow-host '*'`` switches the check off, for deliberate exposure behind another guard.

Anything else gets 403 (HTTP) or a refused websocket handshake, with a short reason.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

ALLOWED_HOSTS_ENV = "GPU_FINOPS_ALLOWED_HOSTS"
"""The guard's settings for the server process (JSON: bind address and allowed names)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_WILDCARDS = {"", "0.0.0.0", "::", "[::]", "*"}


@dataclass(frozen=True)
class AllowedHosts:
    """Which names a Host or Origin header may carry (see the module docstring)."""

    names: frozenset[str]
    any_ip: bool = False
    anything: bool = False

    @classmethod
    def for_address(cls, bound: str, extra: Iterable[str] = ()) -> AllowedHosts:
        names = {"localhost"}
        # A name may come with a port or as a URL's host part (``dash.example:443``): the name counts.
        extra = [(host_of_header(name.strip()) or name.strip()).lower().rstrip(".") for name in extra if name.strip()]
        any_ip = bound.strip().lower() in _WILDCARDS
        if any_ip:
            names.add(socket.gethostname().lower())
        else:
            names.add(_bare(bound))
        return cls(frozenset(names | {n for n in extra if n != "*"}), any_ip, "*" in extra)

    def to_json(self) -> str:
        return json.dumps({"names": sorted(self.names), "any_ip": self.any_ip, "anything": self.anything})

    @classmethod
    def from_json(cls, text: str) -> AllowedHosts:
        value = json.loads(text)
        return cls(frozenset(value["names"]), bool(value["any_ip"]), bool(value["anything"]))

    @classmethod
    def from_env(cls) -> AllowedHosts:
        """The server process's settings; loopback only when none were passed."""
        text = os.environ.get(ALLOWED_HOSTS_ENV)
        return cls.from_json(text) if text else cls.for_address("127.0.0.1")

    def allows(self, host: str | None) -> bool:
        """True when ``host`` (a hostname, no port) may be used to reach the dashboard."""
        if self.anything:
            return True
        if not host:
            return False
        host = host.lower().rstrip(".")
        if host in self.names:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return address.is_loopback or self.any_ip


def _bare(address: str) -> str:
    return address.strip().strip("[]").lower().rstrip(".")


def host_of_header(value: str | None) -> str | None:
    """The hostname of a Host header (``name:port``, ``[::1]:8501``), None when malformed."""
    if not value:
        return None
    try:
        parts = urlsplit(f"//{value}")
        _ = parts.port  # validates the port
    except ValueError:
        return None
    if parts.username or parts.password or parts.path or parts.query or parts.fragment:
        return None
    return parts.hostname


def host_of_origin(value: str) -> str | None:
    """The hostname of an Origin header (``http://name:port``); None for ``null`` or junk."""
    try:
        parts = urlsplit(value)
        _ = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    return parts.hostname


def refusal(headers: dict[str, str], allowed: AllowedHosts) -> str | None:
    """Why a request with ``headers`` (lower-case names) is refused, or None to serve it."""
    host = headers.get("host")
    if not allowed.allows(host_of_header(host)):
        return f"Host {host!r} is not an address of this dashboard"
    origin = headers.get("origin")
    if origin is not None and not allowed.allows(host_of_origin(origin)):
        return f"Origin {origin!r} is not this dashboard's"
    return None


class HostGuard:
    """ASGI middleware: serve a request only when `refusal` finds nothing wrong with it."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts | None = None) -> None:
        self.app = app
        self.allowed = allowed or AllowedHosts.from_env()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", ())
        }
        why = refusal(headers, self.allowed)
        if why is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await receive()  # websocket.connect; closing before accepting refuses the handshake (403)
            await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
            return
        body = f"gpu-finops dashboard: refused: {why} (see gpu-finops dashboard --allow-host)\n".encode()
        await send({
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode())],
        })
        await send({"type": "http.response.body", "body": body})
