"""Where an MCP server's OAuth tokens live: one file per server in agentcli's data directory
(`mcp/oauth/NAME.json`, the directory 0700, the file 0600), never in the configuration, a
session, a log, the model's context or a child's environment. The sandbox keeps commands
out of agentcli's data directory, so no tool the model runs can read it.

The file holds the server's URL: tokens got for one URL are not sent to another that the
configuration later gives the same name."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from agentcli.paths import data_dir

MAX_FILE = 64 * 1024  # a token file is a few hundred bytes; more is not ours


def tokens_directory() -> Path:
    return data_dir() / "mcp" / "oauth"


class TokenFile:
    """The SDK's `TokenStorage` for one server, kept on disk."""

    def __init__(self, name: str, url: str, directory: Path | None = None) -> None:
        self.name, self.url = name, url
        self.path = (directory or tokens_directory()) / f"{name}.json"

    # --- TokenStorage

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return _validated(OAuthToken, self._read().get("tokens"))

    async def set_tokens(self, tokens: Any) -> None:
        record = self._read()
        record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        # The SDK keeps only the lifetime; the moment it ends is what a later run needs.
        lifetime = tokens.expires_in
        record["expires_at"] = time.time() + lifetime if lifetime else None
        self.write(record)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        return _validated(OAuthClientInformationFull, self._read().get("client"))

    async def set_client_info(self, client_info: Any) -> None:
        record = self._read()
        record["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self.write(record)

    # --- agentcli's own

    @property
    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))

    def forget(self) -> bool:
        """Deletes the file; whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def _read(self) -> dict[str, Any]:
        """The record for this URL; anything unreadable, foreign or for another URL is none."""
        try:  # non-blocking: a FIFO put there cannot hang the start
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return {}
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return {}  # a directory, a FIFO, a device: not a token file
        with os.fdopen(fd, "rb") as file:
            data = file.read(MAX_FILE + 1)
        try:
            record = json.loads(data) if len(data) <= MAX_FILE else None
        except ValueError:
            return {}
        if not isinstance(record, dict) or record.get("url") != self.url:
            return {}
        return record

    def write(self, record: dict[str, Any]) -> None:
        """Replaces the file with `record` for this URL (atomically: never half a file)."""
        record["url"] = self.url
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)  # also one made before, or by mkdir's umask
        temporary = directory / f".{self.name}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(record, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise


class LoginTokens(TokenFile):
    """The store a login's flow writes to: it starts empty (a new registration for this
    login's listener port), holds what the flow gives in memory, and replaces the stored
    file only when kept. A login that is cancelled, times out or fails leaves the tokens
    that were stored before, still working."""

    def __init__(self, stored: TokenFile) -> None:
        super().__init__(stored.name, stored.url, stored.path.parent)
        self.stored = stored
        self.record: dict[str, Any] = {}

    def _read(self) -> dict[str, Any]:
        return dict(self.record)

    def write(self, record: dict[str, Any]) -> None:
        self.record = {**record, "url": self.url}

    def keep(self) -> bool:
        """Stores what the login got, if it got tokens; whether it did."""
        if not self.record.get("tokens"):
            return False
        self.stored.write(dict(self.record))
        return True


def _validated(model: Any, saved: Any) -> Any:
    """The saved record as the SDK's model; a wrong shape is as if none were saved (the
    server asks for a login again), never a validation dump."""
    if not saved:
        return None
    from pydantic import ValidationError

    try:
        return model.model_validate(saved)
    except ValidationError:
        return None
