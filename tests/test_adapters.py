"""Each private part of a library agentcli uses (agentcli/adapters/, and the few modules
tests/test_private_reach.py allows) is pinned here: when the library's next release moves
or renames it, one of these fails, naming what changed, instead of agentcli breaking
without a word."""

from __future__ import annotations

import ast
import asyncio
import inspect
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest

import agentcli

PACKAGE = Path(agentcli.__file__).parent


def test_httpx_still_falls_back_when_its_cli_cannot_be_imported() -> None:
    from agentcli.adapters.httpx_cli import CLI_MODULE

    source = Path(httpx.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    guarded = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Try)
        and any(
            isinstance(inner, ast.ImportFrom) and inner.module == CLI_MODULE.split(".", 1)[1]
            for inner in node.body
        )
        and any(ast.unparse(h.type or ast.Name("")) == "ImportError" for h in node.handlers)
    ]
    assert guarded, f"httpx no longer imports {CLI_MODULE} under `except ImportError`"


def test_with_the_entry_httpx_imports_without_click() -> None:
    probe = "import agentcli, httpx, sys; print('click' in sys.modules, callable(httpx.main))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_httpx_transports_still_keep_an_httpcore_pool() -> None:
    transport = httpx.AsyncHTTPTransport()
    assert isinstance(transport._pool, httpcore.AsyncConnectionPool)


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


def test_a_request_through_the_adapted_transport_connects_through_the_backend() -> None:
    from agentcli.adapters.httpx_backend import transport_with_backend

    connected: list[tuple[str, int]] = []

    class Recording(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.AnyIOBackend()

        async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
            connected.append((host, port))
            return await self.inner.connect_tcp(host, port, *args, **kwargs)

        async def sleep(self, seconds: float) -> None:
            await self.inner.sleep(seconds)

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]

    async def fetch() -> str:
        transport = transport_with_backend(httpx.create_ssl_context(), Recording())
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get(f"http://127.0.0.1:{port}/")).text

    try:
        assert asyncio.run(fetch()) == "hello"
    finally:
        server.shutdown()
        server.server_close()
    assert connected == [("127.0.0.1", port)]


def test_typers_click_still_has_the_errors_agentcli_reduces_to_one_line() -> None:
    import typer

    from agentcli.adapters.typer_errors import click_exceptions

    errors = click_exceptions()
    for name in ("UsageError", "NoArgsIsHelpError", "ClickException"):
        assert isinstance(getattr(errors, name, None), type), name
    # the module is the one typer raises from: its public BadParameter is one of them
    assert issubclass(typer.BadParameter, errors.UsageError)


def test_the_mcp_sdks_oauth_provider_still_has_what_agentcli_overrides_and_calls() -> None:
    from mcp.client.auth import OAuthClientProvider

    assert inspect.iscoroutinefunction(OAuthClientProvider._initialize)
    assert inspect.isasyncgenfunction(OAuthClientProvider._auth_flow)
    assert list(inspect.signature(OAuthClientProvider._auth_flow).parameters) == [
        "self",
        "request",
    ]
    assert inspect.iscoroutinefunction(OAuthClientProvider._refresh_token)
    assert inspect.iscoroutinefunction(OAuthClientProvider._handle_refresh_response)
    assert callable(OAuthClientProvider._add_auth_header)
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"])
    provider = OAuthClientProvider("http://127.0.0.1:9/mcp", metadata, storage=object())
    assert hasattr(provider.context, "token_expiry_time")  # what _initialize sets
    assert callable(provider.context.can_refresh_token)


def test_the_c_signal_module_has_every_name_the_launcher_uses() -> None:
    import _signal

    tree = ast.parse((PACKAGE / "sandbox" / "launcher.py").read_text(encoding="utf-8"))
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "signal"
    }
    assert used, "the launcher no longer uses _signal: drop its allowance"
    assert sorted(name for name in used if not hasattr(_signal, name)) == []


def test_the_bash_grammar_loads_from_its_compiled_module_without_its_package() -> None:
    """Not by the fallback: the package's __init__ (and importlib.resources) stay out."""
    probe = (
        "import sys\n"
        "from agentcli.adapters.bash_grammar import bash_language\n"
        "bash_language()\n"
        "print('tree_sitter_bash' in sys.modules, 'importlib.resources' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"], "tree-sitter-bash's layout changed"


@pytest.mark.parametrize("text", ["ls -l", "echo $(id)"])
def test_the_adapted_grammar_parses_as_the_packages_own(text: str) -> None:
    import tree_sitter
    import tree_sitter_bash

    from agentcli.adapters.bash_grammar import bash_language

    ours = tree_sitter.Parser(tree_sitter.Language(bash_language())).parse(text.encode())
    theirs = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())).parse(
        text.encode()
    )
    assert str(ours.root_node) == str(theirs.root_node)


def test_the_mcp_sdk_still_decodes_stdio_through_a_name_in_its_module() -> None:
    """agentcli.adapters.mcp_stdio_lines replaces `TextReceiveStream` in mcp.client.stdio:
    the SDK's stdio reader must still look it up there."""
    import mcp.client.stdio as stdio

    from agentcli.adapters.mcp_stdio_lines import WholeLines, install

    source = Path(stdio.__file__).read_text(encoding="utf-8")
    assert "TextReceiveStream(" in source, "mcp.client.stdio no longer decodes that way"
    install()
    assert stdio.TextReceiveStream is WholeLines


def test_the_mcp_sdk_still_opens_legacy_sse_through_a_name_in_its_module() -> None:
    """agentcli.adapters.mcp_sse_events replaces `sse_within_origin` in mcp.client.sse (its
    limit on one event, 1 MiB, is not an argument of `sse_client`): the SDK's legacy
    client must still open its stream through that name, which must still take the limit."""
    import mcp.client.sse as sse

    from agentcli.adapters.mcp_sse_events import install

    source = Path(sse.__file__).read_text(encoding="utf-8")
    assert "sse_within_origin(client, url)" in source, "mcp.client.sse no longer opens that way"
    opened = sse.sse_within_origin
    original = getattr(opened, "original", opened)
    assert "max_event_size" in inspect.signature(original).parameters
    try:
        install(5_000)
        assert sse.sse_within_origin.event_limit == 5_000  # type: ignore[attr-defined]
        install(6_000)  # again, another limit: the original wrapped, not the wrapper
        assert sse.sse_within_origin.original is original  # type: ignore[attr-defined]
    finally:
        sse.sse_within_origin = opened  # as it was, for what else runs in this process
