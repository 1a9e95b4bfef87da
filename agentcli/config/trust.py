"""Which workspaces the user trusts. Kept in agentcli's own data directory, never in the
workspace, so a repository cannot trust itself."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from agentcli.paths import data_dir
from agentcli.regular_files import read_text


def _store() -> Path:
    return data_dir() / "trust.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(read_text(_store()))
    except (OSError, ValueError):  # none yet, damaged, or an unreadable data directory
        data = {}
    if not isinstance(data, dict):
        data = {}
    data.setdefault("trusted", [])
    data.setdefault("notices", {})
    return data


def _save(data: dict[str, Any]) -> None:
    path = _store()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temp, path)


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)


def is_trusted(workspace: Path) -> bool:
    return _key(workspace) in _load()["trusted"]


def set_trusted(workspace: Path, trusted: bool) -> None:
    data = _load()
    paths = set(data["trusted"])
    if trusted:
        paths.add(_key(workspace))
    else:
        paths.discard(_key(workspace))
    data["trusted"] = sorted(paths)
    _save(data)


def trusted_workspaces() -> list[str]:
    return list(_load()["trusted"])


def first_notice(workspace: Path, ignored: list[str]) -> bool:
    """True the first time these keys are ignored in this workspace: say it once."""
    data = _load()
    key = _key(workspace)
    if data["notices"].get(key) == sorted(ignored):
        return False
    data["notices"][key] = sorted(ignored)
    with contextlib.suppress(OSError):  # unwritable: the notice comes again next time
        _save(data)
    return True
