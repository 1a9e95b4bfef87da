"""Where agentcli keeps its configuration and data: AGENTCLI_HOME when set (one directory
for everything: tests, CI, portable installs), else the platform's locations.

On Linux those are the XDG base directories, worked out here in a few lines: importing
platformdirs costs about 9 ms (it brings tempfile, random and shutil), which every command
would pay. Elsewhere platformdirs decides; `tests/test_paths.py` checks both agree on Linux.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "agentcli"

# platformdirs' method, the XDG variable and the default under the home directory.
_LINUX = {
    "user_config_dir": ("XDG_CONFIG_HOME", ".config"),
    "user_data_dir": ("XDG_DATA_HOME", ".local/share"),
    "user_cache_dir": ("XDG_CACHE_HOME", ".cache"),
}


def _home() -> Path | None:
    home = os.environ.get("AGENTCLI_HOME")
    return Path(home).expanduser() if home else None


def _user_home() -> str:
    """$HOME when it is absolute (a relative one counts as unset, as platformdirs has it),
    else the account's home directory."""
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return home
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:  # an account with no passwd entry (a container's arbitrary uid)
        return os.path.expanduser("~")


def platform_dir(kind: str) -> Path:
    """The user's `kind` directory for agentcli (`user_config_dir`, `user_data_dir`,
    `user_cache_dir`)."""
    if sys.platform == "linux":
        variable, default = _LINUX[kind]
        base = os.environ.get(variable, "")
        if not os.path.isabs(base):  # unset, empty or relative: the spec says ignore it
            base = os.path.join(_user_home(), default)
        return Path(base, APP)
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
