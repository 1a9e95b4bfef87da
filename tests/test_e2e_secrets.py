"""Sensitive files inside the workspace are still sensitive: whatever the tool, reading a
`.env`, a key or credential file, or a `.git/config` that holds a CI token is never low
risk, so a run that nobody can approve (no terminal, no --yes) sends none of them to the
model's provider. Tested from outside, through the installed CLI, with every tool that
reads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import RunCli, tool_results
from tests.scripted_server import Reply, ScriptedServer

ENV_SECRET = "env-secret-" + "e" * 10
KEY_SECRET = "key-secret-" + "k" * 10
TOKEN = "ghs_" + "t" * 20


@pytest.fixture
def secrets(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(
            f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n'
        )
    (workspace / ".env").write_text(f"API_KEY={ENV_SECRET}\n")
    (workspace / "deploy").mkdir()
    (workspace / "deploy" / "server.key").write_text(f"-----BEGIN KEY-----\n{KEY_SECRET}\n")
    (workspace / "deploy" / ".env.production").write_text(f"DB={ENV_SECRET}\n")
    return workspace


READS = [
    ("read_file", {"path": ".env"}),
    ("read_file", {"path": "deploy/server.key"}),
    ("read_file", {"path": ".git/config"}),
    ("search_content", {"pattern": "secret|ghs_"}),
    ("search_content", {"pattern": "secret", "path": "deploy"}),
    ("run_shell", {"command": "cat .env"}),
    ("run_shell", {"command": "cat deploy/*"}),
    ("run_shell", {"command": "cat deploy/.e*"}),
    ("run_shell", {"command": "grep -r secret ."}),
    ("run_shell", {"command": "grep -rn ghs_ ."}),
    ("run_shell", {"command": "git config --list"}),
    ("run_shell", {"command": "git config --get-regexp extraheader"}),
    ("run_shell", {"command": "head -5 .git/config"}),
]


def test_no_tool_reads_a_secret_without_asking(
    run_cli: RunCli, server: ScriptedServer, secrets: Path
) -> None:
    calls = [{"id": f"c{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(READS)]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "look around"], server=server, timeout=60)
    assert result.returncode == 4, result.stderr  # what would ask was denied
    sent = "\n".join(json.dumps(request.json) for request in server.requests)
    for secret in (ENV_SECRET, KEY_SECRET, TOKEN):
        assert secret not in sent
    results = tool_results(server)
    assert len(results) == len(READS)
    searched = results["c3"]
    assert "may hold secrets" in searched and ".env" in searched


def test_ordinary_reads_stay_low_beside_the_secrets(
    run_cli: RunCli, server: ScriptedServer, secrets: Path
) -> None:
    """The checks must not make everything ask: plain files, a search that finds them,
    `git status` and `grep -r` over a tree without secrets still run unasked."""
    (secrets / "src").mkdir()
    (secrets / "src" / "app.py").write_text("print('needle')\n")
    calls = [
        {"id": "a", "name": "read_file", "arguments": {"path": "README.md"}},
        {"id": "b", "name": "search_content", "arguments": {"pattern": "needle"}},
        {"id": "c", "name": "run_shell", "arguments": {"command": "grep -rn needle src"}},
        {"id": "d", "name": "run_shell", "arguments": {"command": "git status --short"}},
    ]
    server.enqueue(Reply.tool_calls(calls), Reply.text(["done"]))
    result = run_cli(["run", "look"], server=server, timeout=60)
    assert result.returncode == 0, result.stderr
    results = tool_results(server)
    assert "Demo project" in results["a"]
    assert "src/app.py:1:print('needle')" in results["b"]
    assert "src/app.py:1:print('needle')" in results["c"]
    assert "denied" not in results["d"]
