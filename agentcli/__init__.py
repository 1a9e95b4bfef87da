"""agentcli: a command-line agent shell."""

import sys as _sys

__version__ = "0.1.0"

# `import httpx` also imports httpx's own command-line tool when click is installed (uvicorn,
# in the serve extra, brings it), and with it click, rich and pygments: tens of milliseconds
# on every request for a tool agentcli never runs. A None entry makes that import fail, and
# httpx then leaves its CLI out, as it does when click is missing.
_sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
