"""How to add an extra (`local`, `serve`, `mcp`) to this very agentcli: where it was
installed from decides the command that works. agentcli is not on PyPI, so `pip install
'agentcli[local]'` works only for an install from an index that has it; a checkout, a wheel
file or a git URL each need their own form. pip records the origin (PEP 610's
`direct_url.json` in the installed distribution); an install from an index has none."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "agentcli"


def _local_path(url: str) -> str | None:
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else None


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)


def install_command(direct_url: dict[str, Any] | None, extra: str, pip: str = "pip") -> str:
    """The pip command that adds `extra` to an agentcli whose origin is `direct_url` (the
    parsed `direct_url.json`, or None for an install from an index)."""
    if not direct_url or not isinstance(direct_url.get("url"), str):
        return f"{pip} install {_quoted(f'{DISTRIBUTION}[{extra}]')}"
    url = direct_url["url"]
    path = _local_path(url)
    dir_info = direct_url.get("dir_info")
    if isinstance(dir_info, dict) and path is not None:
        editable = "-e " if dir_info.get("editable") else ""
        return f"{pip} install {editable}{_quoted(f'{path}[{extra}]')}"
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict):
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        url = f"{vcs.get('vcs', 'git')}+{url}" + (f"@{revision}" if revision else "")
    return f"{pip} install {_quoted(f'{DISTRIBUTION}[{extra}] @ {url}')}"


def _direct_url() -> dict[str, Any] | None:
    """The origin pip recorded. Every `agentcli` metadata on sys.path is looked at: run
    from a checkout, its own `agentcli.egg-info` may come before the installed one."""
    from importlib import metadata

    for distribution in metadata.distributions(name=DISTRIBUTION):
        try:
            text = distribution.read_text("direct_url.json")
            found = json.loads(text) if text else None
        except (ValueError, OSError):
            continue
        if isinstance(found, dict):
            return found
    return _source_tree()


def _source_tree() -> dict[str, Any] | None:
    """Not installed at all (run from a checkout on sys.path): the checkout, editable."""
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file():
        return {"url": root.as_uri(), "dir_info": {"editable": True}}
    return None


def pip_command() -> str:
    """`pip` when the one on PATH is this interpreter's, else this interpreter's `-m pip`."""
    found = shutil.which("pip")
    here = os.path.dirname(sys.executable)
    if found and os.path.dirname(found) == here:
        return "pip"
    return f"{_quoted(sys.executable)} -m pip"


def extra_install_command(extra: str) -> str:
    """The command that adds `extra` to the agentcli running now."""
    return install_command(_direct_url(), extra, pip_command())
