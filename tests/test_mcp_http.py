"""MCP servers reached by URL, against real servers built on the SDK's MCPServer
(tests/mcp_http_server.py, run as a subprocess on 127.0.0.1): the legacy HTTP+SSE transport,
chosen or found by falling back from streamable HTTP; and OAuth, with the fixture as its own
authorization server (discovery, dynamic registration, PKCE, refresh), `agentcli mcp login`
driven on a pseudo-terminal with a scripted browser that follows the authorization URL, the
tokens a session then uses, refreshes, and never shows."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")  # the fixture server (the serve extra)
httpx = pytest.importorskip("httpx")
FIXTURE = Path(__file__).with_name("mcp_http_server.py")
StartHttp = Callable[..., str]


@contextlib.contextmanager
def listening_servers() -> Iterator[Callable[[Sequence[str]], str]]:
    """start(argv) -> the URL that `python *argv` says it listens at (its first line on
    stdout, `listening URL`: the start is bound by that line, not by a wait); all stop at
    the end."""
    started: list[subprocess.Popen[str]] = []

    def start(argv: Sequence[str]) -> str:
        process = subprocess.Popen(
            [sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        started.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening "), line
        return line.split()[1]

    try:
        yield start
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=10)
            if process.stdout is not None:
                process.stdout.close()


@pytest.fixture
def http_server() -> Iterator[StartHttp]:
    """http_server(transport, *flags) -> the URL of a fixture server; all stop at teardown."""
    with listening_servers() as start:
        yield lambda transport, *flags: start([str(FIXTURE), transport, *flags])


def write_config(cli_home: Path, text: str) -> None:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def server_table(name: str, url: str, extra: str = "") -> str:
    return f"[mcp.servers.{name}]\nurl = {json.dumps(url)}\n{extra}\n"


def call(name: str, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": f"call_{tool}", "name": f"mcp__{name}__{tool}", "arguments": arguments or {}}


def results(server: ScriptedServer) -> dict[str, str]:
    """Every tool result the model got, by call id."""
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def run_tools(
    run_cli: RunCli, server: ScriptedServer, name: str, *calls: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    """One run in which the model calls `calls`, one at a time, allowed by a rule."""
    server.enqueue(*(Reply.tool_calls([c]) for c in calls), Reply.text(["Done."]))
    return run_cli(["run", "go", "--allow", f"mcp__{name}__*"], server=server, timeout=90)


# --- the legacy HTTP+SSE transport


def test_a_legacy_sse_url_is_found_by_falling_back_and_its_tools_run(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, http_server: StartHttp
) -> None:
    url = http_server("sse")
    write_config(cli_home, server_table("old", url))
    result = run_tools(run_cli, server, "old", call("old", "add", {"a": 2, "b": 3}))

    assert result.returncode == 0, result.stderr
    assert "did not start" not in result.stderr, result.stderr
    assert "5" in results(server)["call_add"]  # 2 + 3, added by the server
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert (row["state"], row["transport"]) == ("running", "sse"), row


def test_the_transport_chosen_is_the_one_used(
    run_cli: RunCli, cli_home: Path, http_server: StartHttp
) -> None:
    url = http_server("sse")
    added = run_cli(["mcp", "add", "old", "--url", url, "--transport", "sse"])
    assert added.returncode == 0, added.stderr
    config = cli_home / "agentcli" / "config.toml"
    assert 'transport = "sse"' in config.read_text()
    listed = run_cli(["mcp", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("old  running  sse: "), listed.stdout
    assert "mcp__old__add" in listed.stdout

    # Streamable HTTP chosen for the same legacy server: no fallback, and what to set.
    config.write_text(config.read_text().replace('"sse"', '"http"'))
    listed = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(listed.stdout)["servers"]
    assert row["state"] == "failed", row
    assert "legacy HTTP+SSE" in row["error"] and 'transport = "sse"' in row["error"], row


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_a_ten_megabyte_result_from_the_sdk_s_own_server_arrives_whole(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, http_server: StartHttp, transport: str
) -> None:
    """The SDK's server, not agentcli's flood fixture: one result far past the 1 MiB the
    SDK's client reads of one SSE event by default reaches the model cut and is kept whole."""
    size = 10_000_000
    url = http_server(transport)
    chosen = "sse" if transport == "sse" else "http"
    write_config(cli_home, server_table("sdk", url, f"transport = {json.dumps(chosen)}"))
    result = run_tools(run_cli, server, "sdk", call("sdk", "big", {"size": size}))
    assert result.returncode == 0, result.stderr
    assert "did not start" not in result.stderr and "stopped" not in result.stderr, result.stderr
    content = results(server)["call_big"]
    kept = re.search(r"the full output is in (\S+) \(read it", content)
    assert kept, content[-2000:]
    assert Path(kept[1]).read_text() == "x" * size


def test_a_bad_transport_is_one_config_error(run_cli: RunCli, cli_home: Path) -> None:
    refused = run_cli(["mcp", "add", "x", "--url", "http://127.0.0.1:9/", "--transport", "ws"])
    assert refused.returncode == 2
    assert_one_error(refused, "--transport", '"http" (streamable) or "sse" (legacy)')
    write_config(cli_home, '[mcp.servers.x]\ncommand = "prog"\ntransport = "sse"\n')
    result = run_cli(["mcp", "list"])
    assert result.returncode == 2
    assert_one_error(result, "mcp.servers.x.transport", "reached by url, not to a command")


# --- OAuth


def token_file(cli_home: Path, name: str) -> Path:
    return cli_home / "agentcli" / "data" / "mcp" / "oauth" / f"{name}.json"


def scripted_browser(url: str) -> httpx.Response:
    """What a person's browser does with the authorization URL: follows it (the fixture
    consents at once) until the redirect reaches agentcli's loopback listener."""
    return httpx.get(url, follow_redirects=True, timeout=30)


def log_in(pty_cli: Callable[..., Any], name: str) -> str:
    """`agentcli mcp login NAME` on a pseudo-terminal, the browser scripted; its output."""
    import pexpect

    child = pty_cli(["mcp", "login", name], width=1000, timeout=60)
    child.expect(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)")
    said = child.before + child.match.group(1)
    page = scripted_browser(child.match.group(1))
    assert page.status_code == 200 and "logged in" in page.text, page.text
    assert page.url.host == "127.0.0.1" and page.url.path == "/callback"
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return said + child.before


@pytest.fixture
def secured(cli_home: Path, http_server: StartHttp) -> Callable[..., str]:
    """secured(transport="streamable-http", *flags): a fixture server that requires its
    own OAuth tokens, configured as server `sec`; its URL."""

    def start(transport: str = "streamable-http", *flags: str) -> str:
        url = http_server(transport, "--oauth", *flags)
        write_config(cli_home, server_table("sec", url))
        return url

    return start


@pytest.fixture
def logged_in(secured: Callable[..., str], pty_cli: Callable[..., Any]) -> Callable[..., str]:
    """logged_in(transport="streamable-http", *flags): `secured`, then `mcp login sec`."""

    def start(*arguments: str) -> str:
        url = secured(*arguments)
        log_in(pty_cli, "sec")
        return url

    return start


def test_login_in_a_terminal_stores_tokens_a_session_then_uses_and_never_shows(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    secured: Callable[..., str],
    pty_cli: Callable[..., Any],
) -> None:
    secured()
    before = run_cli(["mcp", "list", "--json"], timeout=60)
    [row] = json.loads(before.stdout)["servers"]
    assert row["state"] == "failed" and "agentcli mcp login sec" in row["error"], row

    said = log_in(pty_cli, "sec")
    assert "Open this URL in a browser to log in to sec" in said
    assert "logged in to sec" in said
    path = token_file(cli_home, "sec")
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    stored = json.loads(path.read_text())
    access, refresh = stored["tokens"]["access_token"], stored["tokens"]["refresh_token"]
    client_id = stored["client"]["client_id"]

    result = run_tools(run_cli, server, "sec", call("sec", "whoami"))
    assert result.returncode == 0, result.stderr
    assert f"client {client_id}" in results(server)["call_whoami"]

    # The model cannot reach the file through a tool, even with --yes.
    reach = [
        {"id": "r", "name": "read_file", "arguments": {"path": str(path)}},
        {"id": "s", "name": "run_shell", "arguments": {"command": f"cat {path}"}},
    ]
    server.enqueue(Reply.tool_calls(reach), Reply.text(["Done."]))
    tried = run_cli(["run", "--yes", "read it"], server=server, timeout=90)
    assert set(results(server)) == {"r", "s"}, tried.stderr

    # Nowhere but the token file: not the model's requests, the output, the session, the
    # configuration, the logs.
    seen = [json.dumps(r.json) for r in server.requests] + [result.stdout, result.stderr, said]
    seen += [tried.stdout, tried.stderr]
    home = cli_home / "agentcli"
    seen += [p.read_text(errors="replace") for p in home.rglob("*") if p.is_file() and p != path]
    for secret in (access, refresh):
        assert not [text for text in seen if secret in text]


def test_a_session_without_a_login_says_to_log_in_and_login_needs_a_terminal(
    run_cli: RunCli, server: ScriptedServer, secured: Callable[..., str]
) -> None:
    secured()
    server.enqueue(Reply.text(["Hello."]))
    result = run_cli(["run", "hi"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if "sec" in line]
    assert "run `agentcli mcp login sec` in a terminal" in line, line

    headless = run_cli(["mcp", "login", "sec"], timeout=30)
    assert headless.returncode == 2
    assert_one_error(headless, "needs a person at a terminal", "agentcli mcp login sec")


def test_a_login_stopped_before_the_browser_came_back_keeps_the_stored_tokens(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    logged_in: Callable[..., str],
    pty_cli: Callable[..., Any],
) -> None:
    import pexpect

    logged_in()
    path = token_file(cli_home, "sec")
    before = path.read_bytes()

    again = pty_cli(["mcp", "login", "sec"], width=1000, timeout=60)
    again.expect(r"Waiting for the browser to come back")
    again.sendintr()  # Ctrl-C: the person gives up on this login
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus != 0 or again.signalstatus is not None
    assert path.read_bytes() == before  # what the first login stored is still there, whole

    result = run_tools(run_cli, server, "sec", call("sec", "whoami"))
    assert result.returncode == 0, result.stderr
    client_id = json.loads(before)["client"]["client_id"]
    assert results(server)["call_whoami"] == f"client {client_id}"


def test_a_401_on_a_later_call_refreshes_once_and_the_call_succeeds(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, logged_in: Callable[..., str]
) -> None:
    logged_in()
    first = json.loads(token_file(cli_home, "sec").read_text())["tokens"]["access_token"]
    result = run_tools(
        run_cli,
        server,
        "sec",
        call("sec", "expire_tokens"),  # every access token revoked: the next call gets a 401
        call("sec", "whoami"),
        call("sec", "stats"),
    )
    assert result.returncode == 0, result.stderr
    got = results(server)
    assert got["call_expire_tokens"] == "expired"
    assert got["call_whoami"].startswith("client "), got
    assert "refresh_token=1" in got["call_stats"], got  # one refresh, no new login
    assert "authorization_code=1" in got["call_stats"], got
    now = json.loads(token_file(cli_home, "sec").read_text())["tokens"]["access_token"]
    assert now != first  # the refreshed token was stored


def test_an_expired_token_is_refreshed_before_it_is_sent_over_sse(
    run_cli: RunCli, server: ScriptedServer, logged_in: Callable[..., str]
) -> None:
    logged_in("sse", "--token-lifetime", "2")
    time.sleep(2.5)
    result = run_tools(run_cli, server, "sec", call("sec", "stats"))
    assert result.returncode == 0, result.stderr
    issued = dict(item.split("=") for item in results(server)["call_stats"].split())
    assert int(issued["refresh_token"]) >= 1 and issued["authorization_code"] == "1", issued


def test_when_refresh_fails_the_call_says_to_log_in_again_and_logout_forgets(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, logged_in: Callable[..., str]
) -> None:
    logged_in()
    result = run_tools(run_cli, server, "sec", call("sec", "revoke_all"), call("sec", "whoami"))
    assert result.returncode == 0, result.stderr
    got = results(server)
    assert got["call_revoke_all"] == "revoked"
    assert "run `agentcli mcp login sec` in a terminal" in got["call_whoami"], got

    assert token_file(cli_home, "sec").exists()
    out = run_cli(["mcp", "logout", "sec"])
    assert out.returncode == 0 and "logged out of sec" in out.stdout, out.stderr
    assert not token_file(cli_home, "sec").exists()
    again = run_cli(["mcp", "logout", "sec"])
    assert again.returncode == 0 and "no tokens stored for sec" in again.stdout


def test_a_configured_authorization_header_means_no_login(run_cli: RunCli, cli_home: Path) -> None:
    write_config(
        cli_home,
        server_table("api", "http://127.0.0.1:9/mcp", 'headers = {Authorization = "Bearer x"}'),
    )
    result = run_cli(["mcp", "login", "api"])
    assert result.returncode == 2
    assert_one_error(result, "mcp.servers.api.headers", "needs no login")


# --- the loopback listener, on its own


def test_the_callback_listener_takes_only_its_own_redirect() -> None:
    import asyncio

    from agentcli.mcp.oauth_callback import CallbackListener

    async def scenario() -> tuple[list[int], dict[str, str]]:
        listener = CallbackListener()
        base = f"http://127.0.0.1:{listener.port}"
        async with httpx.AsyncClient() as client:
            statuses = [
                (await client.get(f"{base}/elsewhere?code=x&state=s")).status_code,
                # DNS rebinding: a page of another site reaches loopback under its own name
                (
                    await client.get(
                        f"{base}/callback?code=x&state=s", headers={"Host": "evil.example"}
                    )
                ).status_code,
                (await client.get(f"{base}/callback?code=good&state=s1")).status_code,
                (await client.get(f"{base}/callback?code=late&state=s2")).status_code,
            ]
        answer = await listener.answer(5)
        listener.close()
        return statuses, answer

    statuses, answer = asyncio.run(scenario())
    assert statuses == [404, 404, 200, 404]
    assert (answer["code"], answer["state"]) == ("good", "s1")


def test_a_token_file_for_another_url_is_not_used(tmp_path: Path) -> None:
    import asyncio

    from mcp.shared.auth import OAuthToken

    from agentcli.mcp.oauth_store import TokenFile

    async def scenario() -> tuple[Any, Any]:
        await TokenFile("s", "http://127.0.0.1:1/mcp", tmp_path).set_tokens(
            OAuthToken(access_token="a", expires_in=60)
        )
        same = await TokenFile("s", "http://127.0.0.1:1/mcp", tmp_path).get_tokens()
        other = await TokenFile("s", "http://127.0.0.1:2/mcp", tmp_path).get_tokens()
        return same, other

    same, other = asyncio.run(scenario())
    assert same.access_token == "a" and other is None
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
    assert re.fullmatch(
        r"\d+(\.\d+)?", str(json.loads((tmp_path / "s.json").read_text())["expires_at"])
    )


@pytest.mark.parametrize("shape", ["a FIFO", "a directory", "tokens of the wrong shape"])
def test_a_token_file_that_is_not_one_is_no_login_never_a_hang_or_a_dump(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    secured: Callable[..., str],
    shape: str,
) -> None:
    """Someone else can write the data directory: what is there is read only when it is a
    regular file of the right shape; anything else is as if no login was made."""
    url = secured()
    path = token_file(cli_home, "sec")
    path.parent.mkdir(parents=True, exist_ok=True)
    if shape == "a FIFO":
        os.mkfifo(path)
    elif shape == "a directory":
        path.mkdir()
    else:  # for this server's URL: a file for another URL is never read as tokens
        path.write_text(json.dumps({"url": url, "tokens": {"access_token": ["x"]}}))
    server.enqueue(Reply.text(["Hello."]))
    result = run_cli(["run", "hi"], server=server, timeout=90)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "could not run" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if "sec" in line]
    assert "agentcli mcp login sec" in line, result.stderr
