"""`/mcp` in the REPL: the session's MCP servers, one a line; `/mcp login NAME` logs in to
one reached by URL as `agentcli mcp login` does (the URL printed, a browser opened where
there is a desktop, the redirect received on a loopback listener), then starts it again
in the running session: its tools are the model's from the next request. Whatever stops
the login — Ctrl-C, the browser not coming back, the server refusing — is one line, and
the session goes on."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any

from agentcli.errors import UsageError
from agentcli.output.visible import visible
from agentcli.text.words import plural

if TYPE_CHECKING:
    from agentcli.ui.host import ReplHost

USAGE = "/mcp lists the MCP servers; /mcp login NAME logs in to one"


async def mcp_command(repl: ReplHost, argument: str) -> None:
    verb, _, name = argument.partition(" ")
    name = name.strip()
    if not verb:
        list_servers(repl)
    elif verb == "login" and name:
        await log_in(repl, name)
    else:
        raise UsageError(f"usage: {USAGE}")


def _servers(repl: ReplHost) -> list[Any]:
    return [s for s in repl.agent.registry.sources if s.kind == "mcp"]


def list_servers(repl: ReplHost) -> None:
    servers = _servers(repl)
    if not servers:
        repl.say("  no MCP servers are configured (agentcli mcp add)")
    for server in servers:
        state = str(getattr(server, "state", ""))
        line = f"  {server.config.name}  {state}"
        if state == "running":
            line += f"  {plural(len(server.tools()), 'tool')}"
        elif getattr(server, "error", None):
            line += f": {visible(str(server.error))}"
        repl.say(line)


async def log_in(repl: ReplHost, name: str) -> None:
    from agentcli.mcp.login import login, login_target

    servers = _servers(repl)
    config = login_target([s.config for s in servers], name, listing="/mcp")
    source = next(s for s in servers if s.config.name == name)
    try:
        stored = await _interruptible(login(config, repl.say, browser=True))
    except _Cancelled:
        repl.say(f"(login to {name} cancelled; run /mcp login {name} again when ready)")
        return
    if stored:
        repl.say(f"logged in to {name}; its tokens are stored for agentcli alone")
    else:
        repl.say(f"{name} let agentcli in without a login; nothing was stored")
    repl.say(f"  (starting MCP server {name}…)")
    await repl.agent.registry.restart(source)
    if source.state == "running":
        tools = plural(len(source.tools()), "tool")
        repl.say(f"MCP server {name} is running: its {tools} are the model's from the next turn")
    else:
        raise UsageError(f"MCP server {name} did not start: {visible(str(source.error))}")


class _Cancelled(Exception):
    """Ctrl-C stopped the login."""


async def _interruptible(work: Any) -> Any:
    """`work` awaited with Ctrl-C cancelling it (not the REPL): _Cancelled then."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    try:
        return await work
    except asyncio.CancelledError:
        task.uncancel()
        raise _Cancelled from None
    finally:
        loop.remove_signal_handler(signal.SIGINT)
