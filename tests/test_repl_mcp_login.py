"""`/mcp login NAME` in the REPL, on a pseudo-terminal: against the OAuth fixture server
(tests/mcp_http_server.py, its own authorization server) with a scripted browser, the
login runs in the terminal, the server starts in the running session, and the model calls
its tool in the next turn; a wrong name, a server run by a command, one given its header,
and Ctrl-C are one line each and the session goes on; the browser not coming back is
`login`'s one line (LoginFailed), with a short wait."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import test_repl
from tests.conftest import tool_results
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp_http import StartHttp, http_server, scripted_browser, server_table, write_config
from tests.test_repl import CTRL_C, StartChat

chat = test_repl.chat  # the fixture: `agentcli chat` in a pseudo-terminal
_ = http_server  # the fixture: an MCP server over HTTP, run as a subprocess

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")
AUTHORIZE = re.compile(r"http://127\.0\.0\.1:\d+/authorize\?[^\s\x1b]+")
WHOAMI = {"id": "who", "name": "mcp__sec__whoami", "arguments": {}}


@pytest.fixture
def secured(cli_home: Path, http_server: StartHttp) -> Callable[[str], str]:
    """secured(extra config) -> the URL of a fixture server that wants its own OAuth
    tokens, configured as `sec` (with what `extra` adds to the configuration)."""

    def start(extra: str = "") -> str:
        url = http_server("streamable-http", "--oauth")
        write_config(cli_home, server_table("sec", url) + extra)
        return url

    return start


def test_login_in_the_repl_starts_the_servers_tools_in_the_same_session(
    chat: StartChat, server: ScriptedServer, cli_home: Path, secured: Callable[[str], str]
) -> None:
    secured("")
    server.enqueue(
        Reply.tool_calls([dict(WHOAMI, id="before")]),
        Reply.text(["not yet"]),
        Reply.tool_calls([WHOAMI]),
        Reply.text(["it knows me"]),
    )
    session = chat("--allow", "mcp__sec__*")
    session.turn("who am I?")
    assert "unknown tool 'mcp__sec__whoami'" in tool_results(server)["before"]
    session.submit("/mcp login sec")
    session.expect("Waiting for the browser")
    [url] = AUTHORIZE.findall(session.screen())
    page = scripted_browser(url)
    assert page.status_code == 200 and "logged in" in page.text, page.text
    session.expect("is running")
    session.prompt()
    said = " ".join(session.screen().split())
    assert "Open this URL in a browser to log in to sec" in said
    assert "logged in to sec; its tokens are stored for agentcli alone" in said
    assert re.search(r"MCP server sec is running: its \d+ tools are the model's", said), said

    session.turn("and now?")
    stored = json.loads((cli_home / "agentcli" / "data" / "mcp" / "oauth" / "sec.json").read_text())
    assert f"client {stored['client']['client_id']}" in tool_results(server)["who"]
    listed = session.command("/mcp", "running")
    assert re.search(r"sec\s+running\s+\d+ tools", listed), listed
    for secret in (stored["tokens"]["access_token"], stored["tokens"]["refresh_token"]):
        assert secret not in session.screen()


def test_what_cannot_log_in_is_one_line_and_the_session_goes_on(
    chat: StartChat, server: ScriptedServer, cli_home: Path, secured: Callable[[str], str]
) -> None:
    secured(
        '[mcp.servers.local]\ncommand = "no-such-program-here"\n'
        '[mcp.servers.api]\nurl = "http://127.0.0.1:9/mcp"\n'
        'headers = { Authorization = "Bearer x" }\n'
    )
    session = chat()
    refusals = {
        "/mcp login nosuch": "there is no MCP server 'nosuch'; /mcp shows them",
        "/mcp login local": "MCP server local runs a command: only servers reached by URL log in",
        "/mcp login api": "it needs no login",
        "/mcp logn sec": "usage: /mcp lists the MCP servers; /mcp login NAME logs in to one",
    }
    for command, why in refusals.items():
        screen = session.command(command, why)
        assert len([line for line in screen.splitlines() if line.startswith("error: ")]) == 1

    session.submit("/mcp login sec")
    session.expect("Ctrl-C stops")
    session.send(CTRL_C)
    session.expect("(login to sec cancelled; run /mcp login sec again when ready)")
    session.prompt()
    listed = session.command("/mcp", "sec ")
    assert re.search(r"sec\s+failed: .*/mcp login sec in a chat", " ".join(listed.split()))
    stored = cli_home / "agentcli" / "data" / "mcp" / "oauth" / "sec.json"
    assert not stored.exists() or "tokens" not in json.loads(stored.read_text())  # registered
    assert "Traceback" not in session.screen()


def test_a_browser_that_never_comes_back_is_one_line(
    cli_home: Path, secured: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.login import LoginFailed, login

    monkeypatch.setenv("AGENTCLI_HOME", str(cli_home / "agentcli"))
    url = secured("")
    said: list[str] = []
    with pytest.raises(LoginFailed) as failed:
        asyncio.run(login(parse_server("sec", {"url": url}), said.append, browser=False, timeout=1))
    assert str(failed.value) == "the browser did not come back within 1 s; run the login again"
    assert any("/authorize?" in line for line in said), said
