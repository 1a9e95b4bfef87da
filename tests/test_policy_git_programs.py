"""What a cloned repository's configuration makes git run, found by a security fault pass
(issue 40's fourth): `git help` and `--help` start the viewer `man.<tool>.cmd` names,
`log.showSignature` runs `gpg.program`, an `ext::` URL is a command line git runs. Each is
matched by deny rules as the command line it is, none is low risk, and an allow rule for
git (`run_shell(git *)`) allows git, not the program the repository names. Through
`agentcli policy explain` and, for the canary, `agentcli run`; real git repositories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_policy_git_config import git, make_repo
from tests.test_policy_rules import explain

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DENY_RM = ("--yes", "--forbid", "run_shell(rm *)")
HELP_FORMS = [
    "git status --help",
    "git log --help",
    "git --help log",
    "git help log",
    "git help",
    "git --help",
]


def viewer_repo(path: Path) -> Path:
    repo = make_repo(path)
    git(repo, "config", "help.format", "man")
    git(repo, "config", "man.viewer", "evil")
    git(repo, "config", "man.evil.cmd", "rm canary; #")
    return repo


@pytest.mark.parametrize("command", HELP_FORMS)
def test_git_help_starts_the_viewer_the_repository_names(
    run_cli: RunCli, tmp_path: Path, command: str
) -> None:
    repo = viewer_repo(tmp_path / "repo")
    plain = explain(run_cli, "--cwd", str(repo), "run_shell", command)
    assert plain["risk"] != "low" and plain["decision"] == "ask", plain
    denied = explain(run_cli, "--cwd", str(repo), *DENY_RM, "run_shell", command)
    assert denied["decision"] == "deny", denied
    assert any("rm canary" in reason for reason in denied["reasons"]), denied


def test_a_help_flag_after_the_first_argument_is_still_judged_as_help(
    run_cli: RunCli, tmp_path: Path
) -> None:
    repo = viewer_repo(tmp_path / "repo")
    decided = explain(run_cli, "--cwd", str(repo), *DENY_RM, "run_shell", "git log -p --help")
    assert decided["decision"] == "deny", decided  # the riskier reading


def test_signatures_shown_run_the_gpg_program_the_repository_names(
    run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", "rm")
    decided = explain(run_cli, "--cwd", str(repo), *DENY_RM, "run_shell", "git log")
    assert decided["decision"] == "deny", decided
    assert any("git run: rm" in reason for reason in decided["reasons"]), decided


@pytest.mark.parametrize("where", ["remote-url", "insteadof", "command-line"])
def test_an_ext_url_is_the_command_line_git_runs(
    run_cli: RunCli, tmp_path: Path, where: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "protocol.ext.allow", "always")
    command = "git fetch origin"
    if where == "remote-url":
        git(repo, "config", "remote.origin.url", "ext::sh -c rm% canary")
    elif where == "insteadof":
        git(repo, "config", "remote.origin.url", "mirror:x")
        git(repo, "config", "url.ext::sh -c rm% canary.insteadOf", "mirror:")
    else:
        command = "git fetch 'ext::sh -c rm% canary'"
    decided = explain(run_cli, "--cwd", str(repo), *DENY_RM, "run_shell", command)
    assert decided["decision"] == "deny", decided
    assert any("sh -c rm canary" in reason for reason in decided["reasons"]), decided


def test_an_allow_rule_for_git_does_not_allow_the_program_a_repository_names(
    run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "remote.origin.url", str(tmp_path / "nowhere"))
    git(repo, "config", "remote.origin.uploadpack", "rm canary")
    rule = ("--allow", "run_shell(git *)")
    decided = explain(run_cli, "--cwd", str(repo), *rule, "run_shell", "git fetch origin")
    assert decided["decision"] == "ask", decided
    assert any("rm canary" in reason for reason in decided["reasons"]), decided
    both = (*rule, "--allow", "run_shell(rm canary)")
    decided = explain(run_cli, "--cwd", str(repo), *both, "run_shell", "git fetch origin")
    assert decided["decision"] == "allow", decided  # what it runs is allowed too
    clean = make_repo(tmp_path / "clean")
    decided = explain(run_cli, "--cwd", str(clean), *rule, "run_shell", "git fetch origin")
    assert decided["decision"] == "allow", decided  # a repository that names nothing


def test_run_with_an_allow_rule_for_git_leaves_the_viewers_canary(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    viewer_repo(workspace)
    canary = workspace / "canary"
    canary.write_text("keep\n")
    call = {"id": "c1", "name": "run_shell", "arguments": {"command": "git help log"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["ok"]))
    result = run_cli(["run", "-o", "json", "--allow", "run_shell(git *)", "help?"], server=server)
    assert result.returncode == 4, result.stderr  # asked, nobody to answer: denied
    assert canary.exists()
    [approval] = [c["approval"] for c in json.loads(result.stdout)["toolCalls"]]
    assert approval["decision"] == "deny"
