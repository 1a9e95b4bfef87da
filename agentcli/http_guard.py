"""What every HTTP server of agentcli checks before anything runs (`serve`'s AG-UI endpoint,
`mcp serve --http`): on loopback, a Host header that is not this machine's (DNS
rebinding); an Origin not allowed (a web page's cross-site request); a missing or wrong
bearer token. Each refusal is one 4xx line."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class Rejected(Exception):
    """A request answered with one clear 4xx line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str:
    """The host of a Host header (`127.0.0.1:8765`, `[::1]:8765`, `localhost`), lowered."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def check_browser(
    headers: Any, *, listen_host: str, cors_origins: Iterable[str], hint: str = ""
) -> None:
    """A foreign Host on loopback, and an Origin that is neither allowed nor this server's
    own, refused. `hint`: how to allow an origin, said with the refusal."""
    host = host_name(headers.get("host", ""))
    if is_loopback(listen_host) and host not in LOOPBACK_NAMES | {listen_host}:
        raise Rejected(403, f"Host {host!r} is not this server's (loopback only)")
    origin = headers.get("origin")
    if origin is not None and origin not in set(cors_origins):
        same = origin in (
            f"http://{headers.get('host', '')}",
            f"https://{headers.get('host', '')}",
        )
        if not same:
            raise Rejected(403, f"Origin {origin!r} is not allowed{hint}")


def check_bearer(headers: Any, token: str | None) -> None:
    """The request carries `Authorization: Bearer TOKEN` (compared in constant time)."""
    if token is None:
        return
    given = headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    sent = value.strip().encode("utf-8", "replace")
    if scheme.lower() != "bearer" or not hmac.compare_digest(sent, token.encode()):
        raise Rejected(401, "missing or wrong bearer token (Authorization: Bearer TOKEN)")
