"""Where agentcli keeps its configuration and data: AGENTCLI_HOME when set (one directory
for everything: tests, CI, portable installs), else the platform's locations, which
platformdirs knows (the XDG base directories on Linux, ~/Library on macOS, AppData on
Windows). platformdirs is imported only when AGENTCLI_HOME is not set."""

from __future__ import annotations

import os
from pathlib import Path

APP = "agentcli"


def _home() -> Path | None:
    home = os.environ.get("AGENTCLI_HOME")
    return Path(home).expanduser() if home else None


def platform_dir(kind: str) -> Path:
    """The user's `kind` directory for agentcli (`user_config_dir`, `user_data_dir`,
    `user_cache_dir`)."""
    import platformdirs

    return Path(getattr(platformdirs, kind)(APP))


def config_dir() -> Path:
    home = _home()
    return home if home is not None else platform_dir("user_config_dir")


def data_dir() -> Path:
    home = _home()
    return home / "data" if home is not None else platform_dir("user_data_dir")


def cache_dir() -> Path:
    """What can be thrown away and found again (the plug-ins' entry points)."""
    home = _home()
    return home / "cache" if home is not None else platform_dir("user_cache_dir")
