"""Files someone else can write, replaced by what is not a file: a FIFO (which a plain
open would wait on for ever) or a directory where agentcli's configuration, a session or
the sessions' summary cache should be. Each is one clear line or skipped, never a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunCli, assert_one_error
from tests.scripted_server import Reply, ScriptedServer


def test_a_fifo_as_the_config_file_is_one_line_not_a_hang(run_cli: RunCli, cli_home: Path) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(config)
    result = run_cli(["run", "hi"], timeout=60)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, f"cannot read {config}", "a FIFO, not a regular file")


def test_a_fifo_among_the_sessions_is_skipped_by_listings_and_named_by_a_resume(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["ok"]))
    assert run_cli(["run", "hi"], server=server).returncode == 0
    sessions = cli_home / "agentcli" / "data" / "sessions"
    fifo = sessions / "20260101-000000-fifo.jsonl"
    os.mkfifo(fifo)
    (sessions / ".summaries.json").unlink(missing_ok=True)
    listed = run_cli(["sessions", "list"], timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    resumed = run_cli(["run", "--resume", fifo.stem, "again"], server=server, timeout=60)
    assert resumed.returncode != 0
    assert "a FIFO, not a regular file" in resumed.stderr, resumed.stderr
    assert "Traceback" not in resumed.stderr


# --- the other readers of files someone else can write (issue 40 item 4) ------------------


@pytest.mark.parametrize("backend", ["python", "auto"])
@pytest.mark.parametrize(
    "call",
    [
        {"name": "search_files", "arguments": {"pattern": "*.txt"}},
        {"name": "search_content", "arguments": {"pattern": "needle"}},
    ],
    ids=["files", "content"],
)
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_gitignore_that_is_no_file_is_no_rules_not_a_hang(
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    backend: str,
    call: dict,
    kind: str,
) -> None:
    """A cloned repository can hold a FIFO named .gitignore, or a link to /dev/zero (and
    a model can make either): the search goes on without its rules, as with a missing
    one, on both backends (ripgrep itself would wait on the FIFO for ever, and read the
    endless line until memory ran out: it is stopped, and the walk serves)."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "found.txt").write_text("a needle\n")
    if kind == "fifo":
        os.mkfifo(workspace / "sub" / ".gitignore")
    else:
        (workspace / "sub" / ".gitignore").symlink_to("/dev/zero")
    server.enqueue(Reply.tool_calls([{"id": "call_s", **call}]), Reply.text(["done"]))
    env = {"AGENTCLI_SEARCH_BACKEND": backend}
    result = run_cli(["run", "--yes", "search"], server=server, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    [tool] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "found.txt" in tool["content"], tool["content"]


def test_a_fifo_as_a_peer_hooks_file_is_skipped_not_a_hang(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    os.mkfifo(workspace / ".claude" / "settings.json")
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_a_fifo_as_the_trust_store_is_no_trust_not_a_hang(run_cli: RunCli, cli_home: Path) -> None:
    store = cli_home / "agentcli" / "data" / "trust.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(store)
    result = run_cli(["trust", "--list"], timeout=60)
    assert result.returncode == 0, result.stderr
    assert "no workspace is trusted yet" in result.stdout


def test_config_set_on_a_fifo_is_one_line_not_a_hang(run_cli: RunCli, workspace: Path) -> None:
    """`config set --project` reads the project file to keep its layout: a FIFO there (a
    cloned repository's) is one line, exit 2, and nothing is written in its place."""
    project = workspace / ".agentcli" / "config.toml"
    project.parent.mkdir()
    os.mkfifo(project)
    result = run_cli(["config", "set", "--project", "images.max_bytes", "1000"], timeout=60)
    assert result.returncode == 2, result.stderr
    assert_one_error(result, f"cannot read {project}", "a FIFO, not a regular file")
    assert project.is_fifo()
