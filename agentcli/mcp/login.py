"""`agentcli mcp login NAME`: the whole OAuth flow for one server, with a person at the
terminal. It connects as a session would; the server's 401 starts the SDK's flow
(discovery, registration, PKCE), whose authorization URL is printed (and opened where there
is a desktop); the redirect comes back to a loopback listener; the tokens are stored.
`agentcli mcp logout NAME` forgets them."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import Any

from agentcli.errors import AgentCliError
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.oauth_store import TokenFile

LOGIN_TIMEOUT = 300.0  # seconds a person has to finish in the browser


class LoginFailed(AgentCliError):
    """The login did not end with tokens; the message says why, in one line."""


def login_target(
    servers: list[ServerConfig], name: str, listing: str = "`agentcli mcp list`"
) -> ServerConfig:
    """The configured server a login is for: one reached by URL, with OAuth on; else a
    UsageError that says why (`listing`: what shows the servers, where it is said)."""
    from agentcli.errors import UsageError

    server = next((s for s in servers if s.name == name), None)
    if server is None:
        raise UsageError(f"there is no MCP server {name!r}; {listing} shows them")
    if not server.url:
        raise UsageError(f"MCP server {name} runs a command: only servers reached by URL log in")
    if not server.uses_oauth:
        raise UsageError(
            f"MCP server {name} is given its Authorization header by mcp.servers.{name}.headers "
            "(or has oauth = false): it needs no login"
        )
    return server


async def login(
    config: ServerConfig,
    say: Callable[[str], None],
    *,
    browser: bool,
    timeout: float = LOGIN_TIMEOUT,
) -> bool:
    """Logs in to `config`'s server; whether it asked for a login at all (False: it let
    agentcli in without one, and nothing was stored)."""
    from agentcli.errors import ConfigError
    from agentcli.mcp.oauth import AgentcliOAuth, LoginPrompt
    from agentcli.mcp.oauth_callback import CallbackListener, has_display, open_browser
    from agentcli.mcp.oauth_store import LoginTokens
    from agentcli.output.visible import visible

    try:
        headers = config.resolved_headers()
    except ConfigError as error:
        raise LoginFailed(str(error)) from None
    # A login starts afresh (a new registration for this listener's port), and what was
    # stored is replaced only when it ends with tokens.
    store = LoginTokens(TokenFile(config.name, config.url or ""))
    listener = CallbackListener()

    async def show(url: str) -> None:
        say(f"Open this URL in a browser to log in to {config.name}:\n\n  {visible(url)}\n")
        if browser and has_display() and open_browser(url):
            say("(a browser was asked to open it)")
        say(f"Waiting for the browser to come back (up to {timeout:g} s; Ctrl-C stops)...")

    async def wait() -> dict[str, str]:
        try:
            return await listener.answer(timeout)
        except TimeoutError:
            raise LoginFailed(
                f"the browser did not come back within {timeout:g} s; run the login again"
            ) from None

    provider = AgentcliOAuth(config, store, LoginPrompt(listener.redirect_uri, show, wait))
    # Ctrl-C is Python's own KeyboardInterrupt, raised where the loop is, which leaves it
    # at once (exit 130): asyncio.run's handler only cancels the task, a cancellation that
    # must cross the SDK's task groups, which can absorb it (the login then waited its
    # 300 s out: seen under load).
    try:
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: nothing to take over
        previous = None
    try:
        await _connect(config, headers, provider)
    except LoginFailed:
        raise
    except Exception as error:
        from agentcli.mcp.server import innermost_error

        raise LoginFailed(_explain(config, innermost_error(error))) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        listener.close()
    return store.keep()


async def _connect(config: ServerConfig, headers: dict[str, str], auth: Any) -> None:
    """Initializes a session with the server, by the transport a session would use."""
    from mcp import ClientSession

    from agentcli.mcp import transports

    transport = transports.chosen_transport(config)
    while True:
        answers = transports.HttpAnswers(config.url or "")
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await transports.open_http(
                    stack, config, transport, headers, answers, auth
                )
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                return
        except Exception:
            if transport == transports.STREAMABLE and transports.may_fall_back(config, answers):
                transport = transports.SSE
                continue
            raise


def _explain(config: ServerConfig, error: BaseException) -> str:
    from agentcli.mcp.oauth_callback import AuthorizationRefused

    if isinstance(error, LoginFailed):
        return str(error)
    if isinstance(error, AuthorizationRefused):
        return f"the authorization server refused the login: {error}"
    if "Connect" in type(error).__name__:
        return f"cannot reach {config.url}: {error}"
    text = str(error) or type(error).__name__
    return f"logging in to {config.name} failed: {text}"


def run_login(config: ServerConfig, say: Callable[[str], None], *, browser: bool) -> bool:
    return asyncio.run(login(config, say, browser=browser))
