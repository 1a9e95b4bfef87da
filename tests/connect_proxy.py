"""An HTTP proxy on 127.0.0.1 that tunnels `CONNECT host:port` requests (how a client
reaches an https:// server through HTTPS_PROXY) and records each target. Stdlib only;
the tunnel copies bytes both ways until either side closes."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Self


class ConnectProxy:
    def __init__(self) -> None:
        self.targets: list[str] = []  # "host:port" of every CONNECT, in order
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stopping = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> Self:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping = True
        self._sock.close()

    def _serve(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(4096)
                if not data:
                    return
                head += data
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
            if method != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            self.targets.append(target)
            host, _, port = target.rpartition(":")
            try:
                upstream = socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            upstream.settimeout(None)  # the bound was for connecting only
            with upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
                back.start()
                _copy(client, upstream)
                back.join(timeout=5)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
