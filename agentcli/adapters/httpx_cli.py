"""httpx without its command-line tool. `import httpx` also imports httpx's own CLI when
click is installed (uvicorn, in the serve extra, brings click), and with it click, rich and
pygments: tens of milliseconds on every request for a tool agentcli never runs. httpx has no
switch for this; its import falls back to a stub CLI when the import of its `_main` fails,
which a None entry in sys.modules makes it do."""

import sys

CLI_MODULE = "httpx._main"  # the module httpx's __init__ tries, and falls back without


def leave_out_httpx_cli() -> None:
    """Before httpx is first imported (agentcli/__init__.py calls it)."""
    sys.modules.setdefault(CLI_MODULE, None)  # type: ignore[arg-type]
