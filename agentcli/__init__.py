"""agentcli: a command-line agent shell."""

from agentcli.adapters.httpx_cli import leave_out_httpx_cli as _leave_out_httpx_cli

__version__ = "0.1.0"

_leave_out_httpx_cli()  # before httpx is imported anywhere: its CLI costs tens of ms
