"""The two ends of an OAuth login that are on this machine: the browser it is opened in, and
the loopback listener the authorization server's redirect comes back to (RFC 8252: a native
app listens on 127.0.0.1 at a port of its own, for one request)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

CALLBACK_PATH = "/callback"
PAGE = (
    "<!doctype html><meta charset=utf-8><title>agentcli</title>"
    "<p>{text}</p><p>You can close this tab and go back to the terminal.</p>"
)
# What a browser opener needs to reach the desktop session, beside the usual allow-list.
DESKTOP_VARIABLES = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "BROWSER",
)


class AuthorizationRefused(Exception):
    """The authorization server redirected back with an error, not a code."""


class CallbackListener:
    """Listens on 127.0.0.1 at a port the OS picks, for the one redirect that ends a login."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._answer: asyncio.Future[dict[str, str]] = self._loop.create_future()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.received(self)

            def log_message(self, *args: object) -> None:
                pass  # the query holds the code: never printed

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def answer(self, timeout: float) -> dict[str, str]:
        """The redirect's query (code, state, iss); AuthorizationRefused for an error."""
        return await asyncio.wait_for(asyncio.shield(self._answer), timeout)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def received(self, request: BaseHTTPRequestHandler) -> None:
        """A request reached the listener (called by its handler, on its own thread)."""
        # A page in the browser can send requests to loopback too: only a request for this
        # host and port and path is the redirect (DNS rebinding brings another Host).
        url = urlparse(request.path)
        host_ok = request.headers.get("Host") in (
            f"127.0.0.1:{self.port}",
            f"localhost:{self.port}",
        )
        if not host_ok or url.path != CALLBACK_PATH or self._answer.done():
            _respond(request, 404, "Not the login this listener waits for.")
            return
        query = {key: values[0] for key, values in parse_qs(url.query).items() if values}
        if "error" in query:
            what = query["error"] + (
                f" ({query['error_description']})" if "error_description" in query else ""
            )
            _respond(request, 400, "The authorization server refused the login.")
            self._loop.call_soon_threadsafe(_settle, self._answer, AuthorizationRefused(what))
        elif "code" in query:
            _respond(request, 200, "agentcli is logged in.")
            self._loop.call_soon_threadsafe(_settle, self._answer, query)
        else:
            _respond(request, 400, "This redirect carries no authorization code.")


def _settle(future: asyncio.Future[dict[str, str]], outcome: Any) -> None:
    if future.done():
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _respond(request: BaseHTTPRequestHandler, status: int, text: str) -> None:
    body = PAGE.format(text=text).encode()
    request.send_response(status)
    request.send_header("Content-Type", "text/html; charset=utf-8")
    request.send_header("Content-Length", str(len(body)))
    request.send_header("Cache-Control", "no-store")
    request.end_headers()
    with contextlib.suppress(OSError):
        request.wfile.write(body)


def has_display() -> bool:
    """Whether a browser could open here: a desktop session, or macOS or Windows."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> bool:
    """Asks the desktop to open `url`; whether an opener was found. Not `webbrowser`: it
    passes the whole environment (API keys included) to the browser it starts."""
    from agentcli.process.env import child_environment

    if sys.platform == "win32":
        with contextlib.suppress(OSError):
            os.startfile(url)  # type: ignore[attr-defined]
            return True
        return False
    opener = shutil.which("open" if sys.platform == "darwin" else "xdg-open")
    if opener is None:
        return False
    try:
        subprocess.Popen(
            [opener, url],
            env=child_environment(DESKTOP_VARIABLES),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
