"""OAuth for MCP servers reached by URL, through the SDK's client auth (`OAuthClientProvider`:
protected-resource and authorization-server metadata discovery, dynamic client
registration, the PKCE authorization-code flow, refresh).

A session never starts a login: it has no one to open a browser and its servers have a
start timeout. It sends the stored token, refreshes it when it has expired, and on a 401
refreshes once more; when that is not enough the server fails in one line that says to run
`agentcli mcp login NAME` in a terminal. That command runs the whole flow: it prints the
URL to open (and opens a browser where there is a desktop), and receives the redirect on a
loopback listener."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from agentcli import __version__
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.oauth_store import TokenFile

PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"  # a session never redirects anywhere


class LoginNeeded(Exception):
    """The server wants a login that only `agentcli mcp login NAME` can do."""


def login_needed_message(name: str) -> str:
    return (
        f"it needs you to log in: run `agentcli mcp login {name}` in a terminal, or "
        f"/mcp login {name} in a chat (or set a token with mcp.servers.{name}.headers)"
    )


class LoginPrompt:
    """What the interactive flow needs: where to send the person, and the redirect's end."""

    def __init__(
        self, redirect_uri: str, show: Callable[[str], Any], wait: Callable[[], Any]
    ) -> None:
        self.redirect_uri = redirect_uri
        self.show = show  # async (url) -> None: print it, maybe open a browser
        self.wait = wait  # async () -> dict of the redirect's query


class AgentcliOAuth(OAuthClientProvider):
    """The SDK's provider, with the session's rules: refresh once on a 401, and no login
    without a person (`prompt` None) — the flow stops with `needs_login` set instead."""

    def __init__(self, config: ServerConfig, store: TokenFile, prompt: LoginPrompt | None):
        metadata = OAuthClientMetadata(
            client_name="agentcli",
            software_id="agentcli",
            software_version=__version__,
            redirect_uris=[prompt.redirect_uri if prompt else PLACEHOLDER_REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # a native app keeps no secret (RFC 8252)
        )
        super().__init__(
            config.url or "",
            metadata,
            store,
            redirect_handler=self._redirect,
            callback_handler=self._callback,
        )
        self.server_name = config.name
        self.store = store
        self.prompt = prompt
        self.needs_login = False
        self.refreshes = 0  # on a 401, for the tests' and the log's sake

    async def _initialize(self) -> None:
        await super()._initialize()
        # The SDK would take a stored token as valid forever; its end was stored with it.
        self.context.token_expiry_time = self.store.expires_at

    async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        """The SDK's flow, but a 401 on the request is first met by one refresh, and in a
        session by the end of the flow."""
        flow = super()._auth_flow(request)
        handled = False
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and response.status_code == 401 and not handled:
                    handled = True
                    if self.context.can_refresh_token():
                        self.refreshes += 1
                        refreshed = yield await self._refresh_token()
                        if await self._handle_refresh_response(refreshed):
                            self._add_auth_header(request)
                            response = yield request
                            if response.status_code != 401:
                                return
                    if self.prompt is None:
                        self._stop()
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _stop(self) -> None:
        self.needs_login = True
        raise LoginNeeded(login_needed_message(self.server_name))

    async def _redirect(self, url: str) -> None:
        if self.prompt is None:  # (a scope step-up asks for a login too)
            self._stop()
        await self.prompt.show(url)

    async def _callback(self) -> AuthorizationCodeResult:
        assert self.prompt is not None
        query = await self.prompt.wait()
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


def session_auth(config: ServerConfig) -> AgentcliOAuth | None:
    """The provider a session's connection to `config` uses, or None when OAuth is off."""
    if not config.uses_oauth:
        return None
    return AgentcliOAuth(config, TokenFile(config.name, config.url or ""), prompt=None)


def explain_auth(config: ServerConfig, oauth: Any, answers: Any, error: BaseException) -> str:
    """One line for a start that failed on authorization; "" when it was not that."""
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    if oauth is not None and oauth.needs_login:
        return login_needed_message(config.name)
    if isinstance(error, OAuthFlowError | OAuthRegistrationError | OAuthTokenError):
        return f"its OAuth login failed ({error}); run `agentcli mcp login {config.name}`"
    if answers is not None and answers.unauthorized:
        return (
            f"{config.url} answered 401 Unauthorized: set the token that "
            f"mcp.servers.{config.name}.headers names"
        )
    return ""
