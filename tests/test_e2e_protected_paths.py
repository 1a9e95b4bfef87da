"""Protected paths from outside: the installed CLI, a scripted model, `--yes`, both backends.

A repository can ship a large `.agentcli/` (many small files, or one big file) to spend the
guard's budget before it reaches what git follows; then a command plants `core.fsmonitor`,
a hook or a `.git/commondir`, and the user's next plain `git` runs the planted program
outside any sandbox. What git follows is recorded first, in a budget of its own, so each
attack is undone (Landlock) or refused at write time and undone (bubblewrap). Where a
baseline cannot be complete, commands that may write the workspace do not run under `--yes`,
`--deny` or without a terminal, and a person at a terminal is asked. Nested repositories
(`sub/.git`) are protected like the workspace's own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from agentcli.sandbox.guard import OWN_BYTES
from agentcli.sandbox.mechanisms import detect
from tests.conftest import RunCli, use_backend
from tests.scripted_server import Reply, ScriptedServer

FOUND = detect()
BACKENDS = [
    pytest.param(
        "landlock", marks=pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
    ),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")),
]
pytestmark = pytest.mark.skipif(FOUND.backend is None, reason="no sandbox on this host")
PWNED = "pwned-by-the-repository"
ATTACKS = {
    "fsmonitor": f"printf '[core]\\n\\tfsmonitor = touch {PWNED}\\n' >> GIT/config",
    "hook": f"printf '#!/bin/sh\\ntouch {PWNED}\\n' > GIT/hooks/post-checkout; "
    "chmod +x GIT/hooks/post-checkout",
    "commondir": "echo /tmp > GIT/commondir",
}


def many_small_files(agentcli_dir: Path) -> None:
    """More entries than the old shared budget (2,000) had, fewer than .agentcli/'s own."""
    for index in range(2_500):
        (agentcli_dir / f"note-{index:04}.md").write_text("x\n")


def one_big_file(agentcli_dir: Path) -> None:
    """Just within .agentcli/'s own budget: the old shared one had nothing left after it."""
    (agentcli_dir / "model.bin").write_bytes(b"\0" * (OWN_BYTES - 4096))


SHAPES: dict[str, Callable[[Path], None]] = {
    "many small files": many_small_files,
    "one big file": one_big_file,
}


def git(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's own git, outside any sandbox, as after the run."""
    return subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, check=False
    )


def make_repo(ws: Path, *, nested: bool = False) -> Path:
    """A repository at `ws` (and one at `ws/sub` when nested); returns the one attacked."""
    git(ws, "init", "-q")
    if not nested:
        return ws
    (ws / "sub").mkdir()
    git(ws / "sub", "init", "-q")
    return ws / "sub"


def state_of(repo: Path) -> dict[str, str]:
    dot_git = repo / ".git"
    state = {"config": (dot_git / "config").read_text()}
    state["hooks"] = ",".join(sorted(p.name for p in (dot_git / "hooks").iterdir()))
    state["commondir"] = str((dot_git / "commondir").exists())
    return state


def calls_for(repo: Path, ws: Path) -> list[dict[str, Any]]:
    where = os.path.relpath(repo / ".git", ws)
    commands = {name: text.replace("GIT", where) for name, text in ATTACKS.items()}
    return [
        {"id": f"c-{name}", "name": "run_shell", "arguments": {"command": command}}
        for name, command in commands.items()
    ]


def results(server: ScriptedServer) -> dict[str, str]:
    messages = server.requests[-1].json["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


def assert_nothing_planted(repo: Path, before: dict[str, str]) -> None:
    assert state_of(repo) == before
    status = git(repo, "status", "--short")  # runs core.fsmonitor, were it planted
    assert status.returncode == 0, status.stderr
    git(repo, "checkout", "-q", "-b", "after")  # runs post-checkout, were it planted
    assert not (repo / PWNED).exists()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_large_agentcli_dir_does_not_let_a_command_plant_what_git_runs(
    backend: str,
    shape: str,
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
) -> None:
    use_backend(cli_home, backend)
    repo = make_repo(workspace)
    (workspace / ".agentcli").mkdir()
    SHAPES[shape](workspace / ".agentcli")
    before = state_of(repo)
    server.enqueue(Reply.tool_calls(calls_for(repo, workspace)), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "change it"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    for call_id, content in results(server).items():  # each attack ran, in the sandbox
        assert "sandbox: workspace-write" in content, (call_id, content)
        assert "denied" not in content, (call_id, content)
    assert_nothing_planted(repo, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nested_repository_is_protected_like_the_workspaces_own(
    backend: str, run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    use_backend(cli_home, backend)
    repo = make_repo(workspace, nested=True)
    before = state_of(repo)
    server.enqueue(Reply.tool_calls(calls_for(repo, workspace)), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "change it"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert all("sandbox: workspace-write" in c for c in results(server).values())
    assert_nothing_planted(repo, before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hooks_folder_and_includes_the_repositorys_config_names_are_protected(
    backend: str, run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """`core.hooksPath = .husky` (as husky sets it) and an `include.path` in the work tree:
    git runs what is there, so a command may not plant a hook or a setting in them."""
    use_backend(cli_home, backend)
    repo = make_repo(workspace)
    (workspace / ".husky").mkdir()
    (workspace / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (workspace / "team.gitconfig").write_text("[user]\n\tname = team\n")
    git(repo, "config", "core.hooksPath", ".husky")
    git(repo, "config", "include.path", "../team.gitconfig")
    hooks = sorted(p.name for p in (workspace / ".husky").iterdir())
    team = (workspace / "team.gitconfig").read_text()
    plant = {
        "hook": f"printf '#!/bin/sh\\ntouch {PWNED}\\n' > .husky/post-checkout; "
        "chmod +x .husky/post-checkout",
        "include": f"printf '[core]\\n\\tfsmonitor = touch {PWNED}\\n' >> team.gitconfig",
    }
    server.enqueue(
        Reply.tool_calls(
            [
                {"id": f"c-{name}", "name": "run_shell", "arguments": {"command": command}}
                for name, command in plant.items()
            ]
        ),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "change it"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert all("sandbox: workspace-write" in c for c in results(server).values())
    assert sorted(p.name for p in (workspace / ".husky").iterdir()) == hooks
    assert (workspace / "team.gitconfig").read_text() == team
    git(repo, "status", "--short")  # runs core.fsmonitor, were it planted
    git(repo, "checkout", "-q", "-b", "after")  # runs post-checkout, were it planted
    assert not (repo / PWNED).exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_repository_a_command_creates_keeps_no_hook_or_setting_that_runs_a_program(
    backend: str, run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """No baseline knew `new/.git`: what a command plants in the repository it made is
    undone as it ends, while a plain new repository (its own settings) is left alone."""
    use_backend(cli_home, backend)
    make_repo(workspace)
    plant = (
        f"git init -q new && printf '#!/bin/sh\\ntouch {PWNED}\\n' > new/.git/hooks/post-checkout"
        f" && chmod +x new/.git/hooks/post-checkout && git -C new config core.fsmonitor"
        f" 'touch {PWNED}'; git init -q plain && git -C plain config user.name Someone"
    )
    server.enqueue(
        Reply.tool_calls([{"id": "c", "name": "run_shell", "arguments": {"command": plant}}]),
        Reply.text(["done"]),
    )
    result = run_cli(["run", "--yes", "make repositories"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "sandbox: workspace-write" in results(server)["c"]
    new = workspace / "new"
    assert not (new / ".git" / "hooks" / "post-checkout").exists()
    assert (new / ".git" / "config.refused").exists()  # set aside, said, not silently lost
    git(new, "status", "--short")  # runs core.fsmonitor, were it kept
    git(new, "checkout", "-q", "-b", "after")  # runs post-checkout, were it kept
    assert not (new / PWNED).exists()
    assert git(workspace / "plain", "config", "user.name").stdout.strip() == "Someone"


def over_budget(workspace: Path) -> None:
    """A `.agentcli/` larger than agentcli keeps a copy of."""
    make_repo(workspace)
    (workspace / ".agentcli").mkdir()
    (workspace / ".agentcli" / "model.bin").write_bytes(b"\0" * (OWN_BYTES + 1))


WRITES = {"id": "w", "name": "run_shell", "arguments": {"command": "touch made.txt"}}
READS = {"id": "r", "name": "run_shell", "arguments": {"command": "cat README.md"}}


@pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
def test_where_a_baseline_cannot_be_complete_no_flag_runs_a_writing_command(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    """Landlock alone: the guard is what holds, and it cannot keep `.agentcli/` whole."""
    use_backend(cli_home, "landlock")
    over_budget(workspace)
    for flags in (["--yes"], ["--deny"], []):
        server.enqueue(Reply.tool_calls([WRITES, READS]), Reply.text(["done"]))
        result = run_cli(["run", *flags, "make it"], server=server)
        assert result.returncode == 4, result.stderr  # a denial
        denied, read = results(server)["w"], results(server)["r"]
        assert denied.startswith("denied: ") and "\n" not in denied, denied
        assert ".agentcli holds more than agentcli keeps a copy of" in denied
        assert "only a person at a terminal may approve it" in denied
        assert "rerun with --yes" not in denied  # --yes would not help
        assert "# Demo project" in read  # what writes nothing still runs
        assert not (workspace / "made.txt").exists()


@pytest.mark.skipif(not FOUND.bwrap, reason="no bubblewrap")
def test_under_bubblewrap_the_mounts_need_no_copy(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    use_backend(cli_home, "bubblewrap")
    over_budget(workspace)
    server.enqueue(Reply.tool_calls([WRITES]), Reply.text(["done"]))
    result = run_cli(["run", "--yes", "make it"], server=server)
    assert result.returncode == 0, result.stderr
    assert (workspace / "made.txt").exists()


@pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
def test_at_a_terminal_a_person_is_asked(
    pty_cli: Any, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    use_backend(cli_home, "landlock")
    over_budget(workspace)
    server.enqueue(Reply.tool_calls([WRITES]), Reply.text(["done"]))
    child = pty_cli(["run", "make it"], width=400, timeout=20)
    child.expect_exact("holds more than agentcli keeps a copy of")
    child.expect_exact("choose [")
    child.send("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (workspace / "made.txt").exists()


@pytest.mark.skipif(not FOUND.landlock_abi, reason="no Landlock")
def test_a_server_that_may_write_the_workspace_does_not_start_there(
    run_cli: RunCli, workspace: Path, cli_home: Path
) -> None:
    config = use_backend(cli_home, "landlock")
    server = Path(__file__).parent / "fixtures" / "mcp" / "files_server.py"
    config.write_text(
        config.read_text() + f'\n[mcp.servers.files]\ncommand = "{sys.executable}"\n'
        f'args = ["{server}"]\nsandbox = "workspace-write"\n'
    )
    over_budget(workspace)
    listed = run_cli(["mcp", "list"], timeout=60).stdout
    assert "files  failed" in listed, listed
    assert ".agentcli holds more than agentcli keeps a copy of" in listed
    assert 'give it sandbox = "read-only"' in listed
