"""End-to-end: the edges the third fault pass found turning into internal errors (issue 40,
item 6), each one clear line with the documented exit code (README "Exit codes": 2 for a
usage or configuration error, 1 for a provider's): a base URL that does not parse,
checked when the settings are read; a config.toml nested 100,000 deep; `mcp.servers`
errors with their file and line; a body whose gzip is not gzip; control characters in
the model's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agui_helpers import agent_url
from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer

BAD_URLS = {
    "a space in the host": ("http://exa mple:99/v1", "cannot be one"),
    "a port out of range": ("http://127.0.0.1:99999/v1", "Port out of range"),
    "a port that is not a number": ("http://127.0.0.1:abc/v1", "does not parse"),
    "no host": ("http:///v1", "has no host"),
    "an escape in the host": ("http://exa\x1bmple/v1", "control character"),
    "an escape in the path": ("http://127.0.0.1:9/v1\x1b[31m", "control character"),
    "a tab in the path": ("http://127.0.0.1:9/v\t1", "control character"),
}


@pytest.mark.parametrize("case", sorted(BAD_URLS))
@pytest.mark.parametrize("where", ["OPENAI_BASE_URL", "--base-url", "--agent"])
def test_a_base_url_that_does_not_parse_is_refused_before_any_request(
    run_cli: RunCli, case: str, where: str
) -> None:
    url, needle = BAD_URLS[case]
    if where == "OPENAI_BASE_URL":
        result = run_cli(["run", "hi"], env={"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "k"})
    else:
        result = run_cli(["run", where, url, "hi"])
    assert result.returncode == 2, result.stderr
    line = assert_one_error(result, where, needle)
    assert "\x1b" not in result.stderr and "retrying" not in result.stderr, line


def deep_toml(home: Path) -> Path:
    path = home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    return path


@pytest.mark.parametrize(
    "command", [["run", "hi"], ["config", "show"], ["config", "set", "model", "openai:m"]]
)
def test_a_config_nested_100000_deep_is_one_line_naming_the_file(
    run_cli: RunCli, cli_home: Path, command: list[str]
) -> None:
    path = deep_toml(cli_home)
    result = run_cli(command)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, str(path), "nested", "deep")


MCP_ERRORS = {
    "command a number": ("[mcp.servers.x]\ncommand = 5\n", "line 2", "mcp.servers.x.command"),
    "servers a number": ("# mine\n[mcp]\nservers = 5\n", "line 3", "mcp.servers must be"),
    "args a string": (
        '[mcp.servers.x]\ncommand = "c"\nargs = "b"\n',
        "line 3",
        "mcp.servers.x.args",
    ),
    "a risk of no level": (
        '[mcp.servers.x]\ncommand = "c"\n[mcp.servers.x.tools.t]\nrisk = "wild"\n',
        "line 4",
        "mcp.servers.x.tools.t.risk",
    ),
    "a url's port out of range": (
        '[mcp.servers.x]\nurl = "http://127.0.0.1:70000/mcp"\n',
        "line 2",
        "mcp.servers.x.url: does not parse",
    ),
    "an escape in a url": (
        '[mcp.servers.x]\nurl = "http://127.0.0.1:9/m\\u001b[2J"\n',
        "line 2",
        "mcp.servers.x.url: holds a control character",
    ),
}


@pytest.mark.parametrize("case", sorted(MCP_ERRORS))
def test_mcp_server_errors_name_the_file_and_line(
    run_cli: RunCli, cli_home: Path, case: str
) -> None:
    text, line, needle = MCP_ERRORS[case]
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    result = run_cli(["run", "hi"], env={"OPENAI_API_KEY": "k"})
    assert result.returncode == 2, result.stderr
    assert_one_error(result, f"{path}, {line}:", needle)


@pytest.mark.parametrize("agent", [False, True])
def test_a_body_whose_gzip_is_not_gzip_is_one_provider_error(
    run_cli: RunCli, server: ScriptedServer, agent: bool
) -> None:
    lie = Reply.raw(['data: {"x": 1}', ""], headers={"Content-Encoding": "gzip"})
    server.enqueue(lie)
    if agent:
        result = run_cli(["run", "--agent", agent_url(server), "hi"])
    else:
        result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 1, result.stderr
    assert_one_error(result, "Content-Encoding does not describe")
    assert len(server.requests) == 1  # the server's fault: not retried


@pytest.mark.parametrize("model", ["openai:gpt\x1b[31m", "openai:a\nb", "gpt\x07"])
def test_a_control_character_in_the_model_is_one_line(
    run_cli: RunCli, server: ScriptedServer, model: str
) -> None:
    result = run_cli(["run", "hi"], server=server, env={"AGENTCLI_MODEL": model})
    assert result.returncode == 2, result.stderr
    assert_one_error(result, "AGENTCLI_MODEL", "control character")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert server.requests == []


def test_a_model_named_with_a_bidi_override_runs_and_is_shown_escaped(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """Not a control character (a format character): the model runs; every event that
    names it is shown with the character escaped (a typed CUSTOM event's value too)."""
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, env={"AGENTCLI_MODEL": "a\u202eb"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert "\u202e" not in result.stdout + result.stderr
