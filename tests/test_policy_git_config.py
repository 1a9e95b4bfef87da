"""A repository's own `.git/config` can make read-only git commands run programs: such a
git command is not low risk. Real git repositories, real git processes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.policy.git_config import find_git_dir, program_key_in, repository_problem
from agentcli.policy.shell_risk import classify_shell
from agentcli.tools.base import Risk
from agentcli.workspace import Workspace
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "first")
    return path


def test_the_hazard_is_real_and_such_git_commands_are_high(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    assert classify_shell("git status", Workspace(repo)).risk is Risk.LOW

    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()  # plain `git status` ran the repository's program

    for command in ("git status", "git log -1", "git diff", "git branch -a"):
        assessment = classify_shell(command, Workspace(repo))
        assert assessment.risk is Risk.HIGH, command
        assert "core.fsmonitor" in assessment.reason
    # git's own fsmonitor daemon is not a program of the repository's
    git(repo, "config", "core.fsmonitor", "true")
    assert classify_shell("git status", Workspace(repo)).risk is Risk.LOW


def test_found_from_a_subdirectory_and_through_a_linked_worktree(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert find_git_dir(repo / "sub") == repo / ".git"
    assert classify_shell("git status", Workspace(tmp_path / "wt")).risk is Risk.LOW

    git(repo, "config", "diff.external", "evil-diff")
    assert "diff.external" in (repository_problem(repo / "sub") or "")
    worktree = classify_shell("git diff", Workspace(tmp_path / "wt"))
    assert worktree.risk is Risk.HIGH and "diff.external" in worktree.reason
    assert repository_problem(tmp_path) is None  # in no repository


def test_a_submodules_own_configuration_counts(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    module_config = repo / ".git" / "modules" / "lib" / "config"
    module_config.parent.mkdir(parents=True)
    module_config.write_text("[core]\n\tfsmonitor = ./run-me\n")
    assessment = classify_shell("git status", Workspace(repo))
    assert assessment.risk is Risk.HIGH and "core.fsmonitor" in assessment.reason


def test_a_bare_repository_is_its_own_git_dir(tmp_path: Path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert find_git_dir(bare) == bare
    git(bare, "config", "core.pager", "evil")
    assert "core.pager" in (repository_problem(bare) or "")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[diff "pdf"]\n\ttextconv = pdftotext\n', "diff.pdf.textconv"),
        ('[filter "lfs"]\n\tclean = git-lfs clean -- %f\n', "filter.lfs.clean"),
        ('[filter "x"]\n\tprocess = run-me\n', "filter.x.process"),
        ("[include]\n\tpath = ../elsewhere.cfg\n", "include.path"),
        ('[includeIf "gitdir:~/"]\n\tpath = x.cfg\n', "includeif.gitdir:~/.path"),
        ('[CORE]\n  FSMonitor = "./watch.sh"\n', "core.fsmonitor"),
        # used only by commands that are never read-only: no reason to ask for git status
        ("[core] sshCommand = ssh -i key\n\thooksPath = .husky\n", None),
        ('[credential "https://example.com"]\n\thelper = store\n', None),
        ("[pager]\n\tlog = less\n", "pager.log"),
        ("[diff.old]\n\tcommand = x\n", "diff.old.command"),
        ('[gpg "ssh"]\n\tprogram = ./sign\n', "gpg.ssh.program"),
        ("[core]\n\tbare = false\n\tfsmonitor\n\tfilemode = true\n", None),
        ("# [diff]\n; external = x\n[user]\n\tname = Dev\n", None),
        ('[remote "origin"]\n\turl = ../up.git\n\tfetch = +refs/heads/*\n', None),
    ],
)  # fmt: skip
def test_keys_that_name_a_program(text: str, key: str | None):
    assert program_key_in(text) == key


def test_agentcli_run_denies_git_in_a_repository_that_runs_programs(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    make_repo(workspace)
    marker = workspace.parent / "fsmonitor-ran"
    git(workspace, "config", "core.fsmonitor", f"touch {marker}")
    call = {"id": "c1", "name": "run_shell", "arguments": {"command": "git status"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["ok"]))

    result = run_cli(["run", "--output", "json", "status?"], server=server)

    assert result.returncode == 4, result.stderr  # nobody to ask: denied
    assert not marker.exists()
    [approval] = [c["approval"] for c in json.loads(result.stdout)["toolCalls"]]
    assert (approval["risk"], approval["decision"]) == ("high", "deny")
    assert "core.fsmonitor" in approval["reason"]
