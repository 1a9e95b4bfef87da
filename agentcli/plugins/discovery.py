"""Finding the plug-ins' entry points without reading every installed package each run.

importlib.metadata reads the metadata of every distribution on sys.path (and imports
email's parser to do it) each run, for a list that changes only when something is
installed, upgraded or removed (what the cache saves: bench/standins.py, bench/README.md).
So the list of both groups is kept in the cache directory, one file per environment
(sys.prefix), with the modification times of the sys.path directories it was read from:
installing or removing a distribution adds or removes a `.dist-info` directory there,
which changes that time, and the list is read again. (An `entry_points.txt` edited in
place by hand is not noticed; reinstalling is.)"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import zlib
from typing import Any

from agentcli.records import dataclass
from agentcli.regular_files import read_bytes

GROUPS = ("agentcli.tools", "agentcli.providers")
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Dist:
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """What agentcli uses of importlib.metadata.EntryPoint: name, value, dist, load()."""

    name: str
    value: str  # `module:attribute.path`, maybe with `[extras]`
    group: str
    dist: Dist | None

    def load(self) -> Any:
        module, _, attribute = self.value.partition(":")
        found = importlib.import_module(module.strip())
        for part in attribute.partition("[")[0].strip().split("."):
            if part:
                found = getattr(found, part)
        return found


def entry_points(group: str) -> list[EntryPoint]:
    """The group's entry points, sorted by name."""
    path = _cache_file()
    key = _installed_key()
    groups = _read(path, key)
    if groups is None:
        groups = _discover()
        _write(path, {"format": _FORMAT, "key": key, "groups": groups})
    return [EntryPoint(n, v, group, Dist(d, ver) if d else None) for n, v, d, ver in groups[group]]


def _installed_key() -> list[Any]:
    key: list[Any] = [sys.version]
    for entry in sys.path:
        try:
            key.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            key.append([entry, None])
    return key


def _cache_file() -> Any:
    from agentcli.paths import cache_dir

    interpreter = zlib.crc32(os.fsencode(sys.prefix))  # one file per venv
    return cache_dir() / f"entry-points-{interpreter:08x}.json"


def _read(path: Any, key: list[Any]) -> dict[str, list[list[str]]] | None:
    try:
        data = json.loads(read_bytes(path))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != key:
        return None
    groups = data.get("groups")
    if not isinstance(groups, dict) or not all(isinstance(groups.get(g), list) for g in GROUPS):
        return None
    return groups


def _installed() -> list[Any]:
    """Every installed distribution's entry points, the first of a name on sys.path winning
    (as importlib.metadata.entry_points does), a distribution whose entry_points.txt does
    not parse left out instead of failing every command."""
    import re
    from importlib.metadata import distributions

    found, seen = [], set()
    for dist in distributions():
        try:
            name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
            if name in seen:
                continue
            seen.add(name)
            found.extend(dist.entry_points)
        except Exception:
            continue
    return found


def _discover() -> dict[str, list[list[str]]]:
    found = _installed()
    groups = {}
    for group in GROUPS:
        rows = []
        in_group = (entry for entry in found if entry.group == group)
        for entry in sorted(in_group, key=lambda ep: ep.name):
            dist = getattr(entry, "dist", None)
            rows.append(
                [entry.name, entry.value, dist.name if dist else "", dist.version if dist else ""]
            )
        groups[group] = rows
    return groups


def _write(path: Any, data: dict[str, Any]) -> None:
    """Written whole or not at all (a read-only home only costs the next run the search)."""
    import tempfile

    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".entry-points-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(temp, path)
        except OSError:
            os.unlink(temp)
            raise
