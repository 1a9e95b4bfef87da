"""Where agentcli keeps its configuration and data: AGENTCLI_HOME when set (one directory
for everything: tests, CI, portable installs), else the platform's locations."""

from __future__ import annotations

import os
from pathlib import Path


def _home() -> Path | None:
    home = os.environ.get("AGENTCLI_HOME")
    return Path(home).expanduser() if home else None


def config_dir() -> Path:
    home = _home()
    if home is not None:
        return home
    import platformdirs

    return Path(platformdirs.user_config_dir("agentcli"))


def data_dir() -> Path:
    home = _home()
    if home is not None:
        return home / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir("agentcli"))


def cache_dir() -> Path:
    """What can be thrown away and found again (the plug-ins' entry points)."""
    home = _home()
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("agentcli"))
