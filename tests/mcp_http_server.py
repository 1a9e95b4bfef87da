"""An MCP server over HTTP for transport and OAuth tests, built on the SDK's MCPServer.

    python tests/mcp_http_server.py sse                # the legacy HTTP+SSE transport
    python tests/mcp_http_server.py streamable-http    # streamable HTTP at /mcp
    ... --oauth [--token-lifetime SECONDS]             # requires a bearer token it issued

It listens on 127.0.0.1 at a port the OS picks and prints `listening URL` (the URL a client
is given) on stdout. With --oauth it is its own authorization server, through the SDK's
auth routes: protected-resource and authorization-server metadata, dynamic client
registration, an authorization endpoint that consents at once (it redirects straight back
with a code: the "browser" in a test just follows redirects), PKCE code exchange, refresh.
Tools: `add`, `big` (a result of `size` characters), `whoami` (which client the token
belongs to), `expire_tokens` (revokes every access token, so the next call gets a 401),
`revoke_all` (refresh tokens too), `stats` (how many tokens were issued, by grant)."""

from __future__ import annotations

import argparse
import asyncio
import secrets
import socket
import sys
import time
from typing import Any


class AutoConsentProvider:
    """`OAuthAuthorizationServerProvider` kept in memory: every request is consented to."""

    def __init__(self, token_lifetime: int) -> None:
        self.token_lifetime = token_lifetime
        self.clients: dict[str, Any] = {}
        self.codes: dict[str, Any] = {}
        self.access: dict[str, Any] = {}
        self.refresh: dict[str, Any] = {}
        self.issued = {"authorization_code": 0, "refresh_token": 0}

    async def get_client(self, client_id: str) -> Any:
        return self.clients.get(client_id)

    async def register_client(self, client_info: Any) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: Any, params: Any) -> str:
        from mcp.server.auth.provider import AuthorizationCode, construct_redirect_uri

        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, code: str) -> Any:
        found = self.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: Any, code: Any) -> Any:
        del self.codes[code.code]
        return self._tokens(client.client_id, code.scopes, code.resource, "authorization_code")

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: Any, refresh_token: Any, scopes: list[str]
    ) -> Any:
        del self.refresh[refresh_token.token]  # rotated
        chosen = scopes or refresh_token.scopes
        return self._tokens(client.client_id, chosen, refresh_token.resource, "refresh_token")

    async def load_access_token(self, token: str) -> Any:
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _tokens(self, client_id: str, scopes: list[str], resource: Any, grant: str) -> Any:
        from mcp.server.auth.provider import AccessToken, RefreshToken
        from mcp.shared.auth import OAuthToken

        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        self.issued[grant] += 1
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def build(transport: str, base: str, oauth: bool, token_lifetime: int) -> Any:
    from mcp.server.mcpserver import MCPServer

    path = "/sse" if transport == "sse" else "/mcp"
    provider = AutoConsentProvider(token_lifetime) if oauth else None
    auth = None
    if oauth:
        from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions

        auth = AuthSettings(
            issuer_url=base,
            resource_server_url=base + path,
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools"], default_scopes=["tools"]
            ),
            required_scopes=["tools"],
        )
    server = MCPServer("http-fixture", auth_server_provider=provider, auth=auth)

    @server.tool()
    def add(a: int, b: int) -> str:
        """Adds two numbers."""
        return str(a + b)

    @server.tool()
    def big(size: int) -> str:
        """`size` characters: one message larger than an SSE event the SDK reads by default."""
        return "x" * size

    @server.tool()
    def whoami() -> str:
        """Which client the bearer token was issued to."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"client {token.client_id}" if token else "anonymous"

    @server.tool()
    def expire_tokens() -> str:
        """Revokes every access token (refresh tokens stay valid)."""
        assert provider is not None
        provider.access.clear()
        return "expired"

    @server.tool()
    def revoke_all() -> str:
        """Revokes every token, refresh tokens too: only a new login gets in."""
        assert provider is not None
        provider.access.clear()
        provider.refresh.clear()
        return "revoked"

    @server.tool()
    def stats() -> str:
        """Tokens issued so far, by grant."""
        assert provider is not None
        return " ".join(f"{grant}={count}" for grant, count in provider.issued.items())

    if transport == "sse":
        return server.sse_app(host="127.0.0.1"), path
    return server.streamable_http_app(host="127.0.0.1"), path


async def serve(app: Any, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["sse", "streamable-http"])
    parser.add_argument("--oauth", action="store_true")
    parser.add_argument("--token-lifetime", type=int, default=3600)
    options = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app, path = build(options.transport, base, options.oauth, options.token_lifetime)
    print(f"listening {base}{path}", flush=True)
    asyncio.run(serve(app, sock))


if __name__ == "__main__":
    sys.exit(main())
